// Command sketchbench compares neardup's sketching with the MinHash of
// github.com/ekzhu/minhash-lsh side by side, in one process and one run, on
// the same 5 KB documents (word 5-shingles, K = 128), and prints the ratios.
//
// It lives in its own module so the peer never enters neardup's dependency
// graph. Run from the repository root:
//
//	(cd bench/sketchbench && go run . -docs 2000)
//
// Documents are 5 KB pieces of the Gutenberg texts in shared/data when
// present (set NEARDUP_DATA), otherwise generated Zipf-distributed text.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	minhashlsh "github.com/ekzhu/minhash-lsh"

	"github.com/neardup/neardup/internal/dataset"
	"github.com/neardup/neardup/sketch"
)

func main() {
	ndocs := flag.Int("docs", 2000, "documents per measurement")
	size := flag.Int("size", 5000, "document size in bytes")
	rounds := flag.Int("rounds", 5, "repetitions; the best round is reported")
	flag.Parse()

	docs, source := corpus(*ndocs, *size)
	fmt.Printf("sketchbench: %d documents of %d bytes from %s, word 5-shingles, K=128, GOMAXPROCS=%d, %s\n\n",
		len(docs), *size, source, runtime.GOMAXPROCS(0), runtime.Version())

	// Shared inputs: our shingle hash sets and the peer's shingle strings.
	s, err := sketch.New(sketch.DefaultConfig(), nil)
	if err != nil {
		panic(err)
	}
	sets := make([][]uint64, len(docs))
	peerShingles := make([][][]byte, len(docs))
	shingles := 0
	for i, d := range docs {
		var f sketch.Features
		if err := s.Sketch(d, &f); err != nil {
			panic(err)
		}
		sets[i] = f.Shingles
		peerShingles[i] = wordShingles(d, 5)
		shingles += len(f.Shingles)
	}
	fmt.Printf("mean distinct shingles per document: %.0f\n\n", float64(shingles)/float64(len(docs)))

	classic := sketch.NewMinHash(128, 1)
	oph := sketch.NewOnePermutation(128, 1)
	var sig sketch.Signature

	rows := []struct {
		name string
		run  func()
	}{
		{"peer ekzhu Push+Signature (prebuilt shingles)", func() {
			for _, sh := range peerShingles {
				m := minhashlsh.NewMinhash(1, 128)
				for _, x := range sh {
					m.Push(x)
				}
				_ = m.Signature()
			}
		}},
		{"neardup classic Sign (prebuilt shingle set)", func() {
			for _, set := range sets {
				sig = classic.Sign(sig, set)
			}
		}},
		{"neardup one-permutation Sign (prebuilt set)", func() {
			for _, set := range sets {
				sig = oph.Sign(sig, set)
			}
		}},
		{"peer ekzhu from text (Fields+join+Push+Signature)", func() {
			for _, d := range docs {
				m := minhashlsh.NewMinhash(1, 128)
				for _, x := range wordShingles(d, 5) {
					m.Push(x)
				}
				_ = m.Signature()
			}
		}},
		{"neardup classic from text (tokenize+shingle+Sign)", func() { fromText(docs, sketch.Classic) }},
		{"neardup one-permutation from text", func() { fromText(docs, sketch.OnePerm) }},
		{"neardup full Sketch (all features, oph)", func() {
			var f sketch.Features
			for _, d := range docs {
				_ = s.Sketch(d, &f)
			}
		}},
	}
	perDoc := map[string]time.Duration{}
	allocs := map[string]float64{}
	fmt.Printf("%-52s %12s %14s\n", "measurement", "µs/doc", "allocs/doc")
	for _, r := range rows {
		best := time.Duration(1<<63 - 1)
		var a float64
		for range *rounds {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			t0 := time.Now()
			r.run()
			el := time.Since(t0)
			runtime.ReadMemStats(&m1)
			if el < best {
				best = el
				a = float64(m1.Mallocs-m0.Mallocs) / float64(len(docs))
			}
		}
		d := best / time.Duration(len(docs))
		perDoc[r.name], allocs[r.name] = d, a
		fmt.Printf("%-52s %12.2f %14.2f\n", r.name, float64(d.Nanoseconds())/1e3, a)
	}

	// Tokenize + shingle throughput: the ASCII path (the same documents
	// with every non-ASCII byte replaced by a space) and the Unicode path
	// (the documents as they are), each without and with the sort and
	// deduplication that make the exact shingle set.
	ascii := make([][]byte, len(docs))
	for i, d := range docs {
		ascii[i] = bytes.Map(func(r rune) rune {
			if r >= 0x80 {
				return ' '
			}
			return r
		}, d)
	}
	throughput := func(in [][]byte, sorted bool) float64 {
		n := sketch.NewNormalizer(sketch.DefaultNormalization())
		var tok sketch.Tokens
		var set []uint64
		total := 0
		for _, d := range in {
			total += len(d)
		}
		best := time.Duration(1<<63 - 1)
		for range *rounds {
			t0 := time.Now()
			for _, d := range in {
				if sorted {
					set = s.Shingles(set[:0], d)
				} else {
					n.Tokenize(d, &tok)
					set = rollShingles(set[:0], tok.Hash)
				}
			}
			best = min(best, time.Since(t0))
		}
		return float64(total) / best.Seconds() / 1e6
	}
	mbps := throughput(ascii, false)

	ratio := func(peer, ours string) float64 { return float64(perDoc[peer]) / float64(perDoc[ours]) }
	fmt.Printf("\nratios (peer time / neardup time; > 1 means neardup is faster):\n")
	fmt.Printf("  classic vs peer, signature only:       %.2fx  (target ≥ 1.0x)\n", ratio(rows[0].name, rows[1].name))
	fmt.Printf("  one-permutation vs peer, signature:    %.2fx  (target ≥ 4x)\n", ratio(rows[0].name, rows[2].name))
	fmt.Printf("  classic vs peer, from text:            %.2fx\n", ratio(rows[3].name, rows[4].name))
	fmt.Printf("  one-permutation vs peer, from text:    %.2fx\n", ratio(rows[3].name, rows[5].name))
	fmt.Printf("tokenize+shingle, ASCII path:           %.0f MB/s  (target ≥ 250 MB/s)\n", mbps)
	fmt.Printf("tokenize+shingle, Unicode path:         %.0f MB/s\n", throughput(docs, false))
	fmt.Printf("exact shingle set (+sort, dedupe), ASCII:   %.0f MB/s\n", throughput(ascii, true))
	fmt.Printf("exact shingle set (+sort, dedupe), Unicode: %.0f MB/s\n", throughput(docs, true))
}

// fromText tokenizes, shingles and signs each document.
func fromText(docs [][]byte, m sketch.Method) {
	cfg := sketch.DefaultConfig()
	cfg.Method = m
	s, err := sketch.New(cfg, nil)
	if err != nil {
		panic(err)
	}
	n := sketch.NewNormalizer(cfg.Normalize)
	var tok sketch.Tokens
	var set []uint64
	var sig sketch.Signature
	for _, d := range docs {
		n.Tokenize(d, &tok)
		set = rollShingles(set[:0], tok.Hash)
		sig = s.Signer().Sign(sig, set)
	}
}

func rollShingles(dst, toks []uint64) []uint64 { return sketch.AppendShingles(dst, toks, 5) }

// wordShingles builds the peer's input the way its README does: lower-cased
// whitespace-separated words joined five at a time.
func wordShingles(d []byte, w int) [][]byte {
	words := strings.Fields(strings.ToLower(string(d)))
	var out [][]byte
	for i := 0; i+w <= len(words); i++ {
		out = append(out, []byte(strings.Join(words[i:i+w], " ")))
	}
	return out
}

func corpus(n, size int) ([][]byte, string) {
	if root := dataset.Root(); root != "" {
		files, _ := filepath.Glob(filepath.Join(root, "gutenberg-editions", "texts", "*.txt"))
		var docs [][]byte
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for i := 0; i+size <= len(b) && len(docs) < n; i += size {
				docs = append(docs, bytes.ToValidUTF8(b[i:i+size], nil))
			}
		}
		if len(docs) >= n {
			return docs, "Gutenberg texts"
		}
	}
	r := rand.New(rand.NewPCG(7, 7))
	z := rand.NewZipf(r, 1.1, 2, 20000)
	docs := make([][]byte, n)
	for i := range docs {
		var b []byte
		for len(b) < size {
			w := z.Uint64()
			for w > 0 || len(b) == 0 || b[len(b)-1] == ' ' {
				b = append(b, byte('a'+w%26))
				w /= 26
				if w == 0 {
					break
				}
			}
			b = append(b, ' ')
		}
		docs[i] = b[:size]
	}
	return docs, "generated Zipf text"
}
