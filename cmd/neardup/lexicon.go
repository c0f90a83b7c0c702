package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"io"
	"os"

	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/sketch"
)

// runLexicon implements "neardup lexicon build": document frequencies over
// text files, each cut into documents of --chunk words.
func runLexicon(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "build" {
		return usagef("want 'lexicon build [flags] FILE...'")
	}
	fs := flag.NewFlagSet("lexicon build", flag.ContinueOnError)
	fs.SetOutput(stderr)
	chunk := fs.Int("chunk", 1000, "words per document when cutting files into documents (0: one document per file)")
	minDF := fs.Int("min-df", 2, "keep terms that occur in at least this many documents")
	out := fs.String("o", "-", "output file (- for stdout); a name ending in .gz is gzip-compressed")
	maxBytes := fs.Int("max-bytes", sketch.DefaultMaxBytes, "skip files larger than this")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("no input files")
	}
	if err := checkPaths(fs.Args()); err != nil {
		return err
	}
	lb := sketch.NewLexiconBuilder(sketch.DefaultNormalization())
	for _, path := range fs.Args() {
		if err := ctx.Err(); err != nil {
			return err
		}
		text, err := extract.ReadFile(path, *maxBytes)
		if err != nil {
			return usagef("%s: %w (lexicon build reads text files)", path, err)
		}
		if *chunk <= 0 {
			lb.Add(text)
			continue
		}
		words := bytes.Fields(text)
		for i := 0; i < len(words); i += *chunk {
			lb.Add(bytes.Join(words[i:min(i+*chunk, len(words))], []byte{' '}))
		}
	}
	var w io.Writer = stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
		if len(*out) > 3 && (*out)[len(*out)-3:] == ".gz" {
			zw := gzip.NewWriter(f)
			defer zw.Close()
			w = zw
		}
	}
	return lb.WriteTo(w, *minDF)
}
