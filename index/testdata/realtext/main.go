// Command realtext writes the real-text stream index/BENCHMARKS.md
// (section 6) measures the Redis path with, until the corpus builder of
// bench/ (issue 23 part 1) replaces it: ~750-word chunks (~4.3 KB) of the
// Gutenberg texts in ../shared/data, read in place; for more originals
// than the texts hold, the same chunks with their vocabulary permuted
// within windows of 16 frequency ranks (real word statistics and lengths,
// distinct text); each original followed within the next ~1,200 documents
// by noisy copies (cluster sizes exponential around the mean): 75 % near
// (1.5 % of words dropped, inserted, replaced, upper-cased each) and 25 %
// partial (30–60 % of the original inside another chunk). Deterministic
// from -seed. It lives under testdata so the go tool builds it only when
// asked:
//
//	go run ./index/testdata/realtext -docs 100000 -dup 0.95 > /tmp/stream.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	n := flag.Int("docs", 100000, "documents")
	dup := flag.Float64("dup", 0.95, "share of duplicates")
	seed := flag.Int64("seed", 1, "seed")
	first := flag.Int("first", 0, "number of the first original: a stream with -first beyond another's originals shares no original text with it")
	dir := flag.String("data", "../shared/data/gutenberg-editions/texts", "directory of the Gutenberg texts (*.txt)")
	flag.Parse()
	rng := rand.New(rand.NewSource(*seed))
	files, _ := filepath.Glob(filepath.Join(*dir, "*.txt"))
	if len(files) == 0 || *n < 2 || *dup <= 0 || *dup >= 1 {
		fmt.Fprintf(os.Stderr, "realtext: want texts in -data %s, -docs ≥ 2 and 0 < -dup < 1\n", *dir)
		os.Exit(2)
	}
	sort.Strings(files)
	var chunks [][]string
	vocab := map[string]int{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "realtext:", err)
			os.Exit(1)
		}
		w := strings.Fields(string(b))
		for i := 0; i+750 <= len(w); i += 750 {
			chunks = append(chunks, w[i:i+750])
		}
		for _, x := range w {
			vocab[x]++
		}
	}
	words := make([]string, 0, len(vocab))
	for x := range vocab {
		words = append(words, x)
	}
	sort.Slice(words, func(i, j int) bool {
		if vocab[words[i]] != vocab[words[j]] {
			return vocab[words[i]] > vocab[words[j]]
		}
		return words[i] < words[j]
	})
	perms := map[int]map[string]string{}
	perm := func(r int) map[string]string {
		if r == 0 {
			return nil
		}
		if p, ok := perms[r]; ok {
			return p
		}
		pr := rand.New(rand.NewSource(int64(r)))
		sh := append([]string(nil), words...)
		// shuffle within windows of 16 frequency ranks: frequent words stay frequent
		for lo := 0; lo < len(sh); lo += 16 {
			w := sh[lo:min(lo+16, len(sh))]
			pr.Shuffle(len(w), func(i, j int) { w[i], w[j] = w[j], w[i] })
		}
		p := make(map[string]string, len(words))
		for i, x := range words {
			p[x] = sh[i]
		}
		perms[r] = p
		return p
	}
	original := func(k int) []string {
		c := chunks[k%len(chunks)]
		p := perm(k / len(chunks))
		if p == nil {
			return c
		}
		o := make([]string, len(c))
		for i, x := range c {
			o[i] = p[x]
		}
		return o
	}
	type doc struct {
		t    float64
		id   string
		text string
		src  string
	}
	var docs []doc
	norig := int(float64(*n)*(1-*dup) + 0.5)
	mean := float64(*n) / float64(norig)
	dups := *n - norig
	// cluster sizes: geometric-ish around mean, at least 1 copy
	sizes := make([]int, norig)
	left := dups
	for i := range sizes {
		if i == norig-1 { // the last cluster takes what is left
			sizes[i] = left
			break
		}
		s := 1 + int(rng.ExpFloat64()*(mean-2))
		if s > left-(norig-1-i) {
			s = max(0, left-(norig-1-i))
		}
		sizes[i] = s
		left -= s
	}
	for k := *first; k < *first+norig; k++ {
		o := original(k)
		t := float64(k-*first) * mean
		oid := fmt.Sprintf("o%06d", k)
		docs = append(docs, doc{t, oid, strings.Join(o, " "), ""})
		for c := 0; c < sizes[k-*first]; c++ {
			var w []string
			if rng.Float64() < 0.75 { // near: word edits and noise
				for _, x := range o {
					r := rng.Float64()
					switch {
					case r < 0.015: // drop
					case r < 0.03:
						w = append(w, x, words[rng.Intn(len(words))])
					case r < 0.045:
						w = append(w, words[rng.Intn(len(words))])
					case r < 0.06:
						w = append(w, strings.ToUpper(x))
					default:
						w = append(w, x)
					}
				}
			} else { // partial: a passage of 30-60% inside another chunk's text
				l := len(o) * (30 + rng.Intn(31)) / 100
				s := rng.Intn(len(o) - l)
				other := original(rng.Intn(len(chunks)) + len(chunks)*1000)
				cut := rng.Intn(len(other) - l)
				w = append(w, other[:cut]...)
				w = append(w, o[s:s+l]...)
				w = append(w, other[cut+l:]...)
			}
			docs = append(docs, doc{t + rng.Float64()*3*mean*20, fmt.Sprintf("d%06d-%02d", k, c), strings.Join(w, " "), oid})
		}
	}
	sort.SliceStable(docs, func(i, j int) bool { return docs[i].t < docs[j].t })
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for _, d := range docs {
		enc.Encode(map[string]string{"id": d.id, "text": d.text})
	}
	out.Flush()
	fmt.Fprintf(os.Stderr, "%d docs, %d originals from %d chunks, mean cluster %.1f\n", len(docs), norig, len(chunks), mean)
}
