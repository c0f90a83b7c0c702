// Command scanbench runs neardup's pipeline (verification on, memory index)
// and the batch pipeline of github.com/ekzhu/minhash-lsh (MinHash-128 over
// word 5-shingles, LSH at threshold 0.8, Add all, Index, Query each) side
// by side on one generated corpus with planted noisy near duplicates, and
// prints documents/s and precision and recall on the planted pairs for
// both.
//
//	(cd bench/scanbench && go run . -docs 20000)
//
// It lives in its own module so the peer never enters neardup's graph.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	minhashlsh "github.com/ekzhu/minhash-lsh"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/synth"
	"github.com/neardup/neardup/pipeline"
)

func main() {
	n := flag.Int("docs", 20000, "documents")
	profile := flag.String("profile", "web", "neardup profile")
	flag.Parse()

	// About 5 KB per document: 900–1,100 words of ~4.8 bytes.
	docs := synth.Corpus(synth.Config{Docs: *n, Seed: 2026, MinWords: 900, MaxWords: 1100,
		ExactRate: 0.05, NearRate: 0.15, PartialRate: 0.05, NearEdits: 0.03, PartialReplace: 0.2, PartialNoise: 0.01})
	bytes := 0
	planted := map[[2]string]bool{}
	kinds := map[synth.Kind]int{}
	for _, d := range docs {
		bytes += len(d.Text)
		kinds[d.Kind]++
		if d.Kind != synth.Original {
			planted[[2]string{d.ID, d.Source}] = true
		}
	}
	fmt.Printf("scanbench: %d documents, mean %.0f bytes, planted %v; GOMAXPROCS=%d, %s\n\n",
		len(docs), float64(bytes)/float64(len(docs)), kinds, runtime.GOMAXPROCS(0), runtime.Version())

	ourTime, ourPairs := runNeardup(docs, *profile)
	peerTime, peerPairs := runPeer(docs)

	report := func(name string, el time.Duration, pairs map[[2]string]bool) float64 {
		tp := 0
		for p := range pairs {
			if planted[p] {
				tp++
			}
		}
		prec := float64(tp) / float64(max(len(pairs), 1))
		rec := float64(tp) / float64(len(planted))
		rate := float64(len(docs)) / el.Seconds()
		fmt.Printf("%-44s %9.0f docs/s  %8.2f s  reported pairs %6d  precision %.4f  recall %.4f\n", name, rate, el.Seconds(), len(pairs), prec, rec)
		return rate
	}
	ours := report("neardup scan (verify on, memory index, "+*profile+")", ourTime, ourPairs)
	peer := report("ekzhu/minhash-lsh batch (K=128, w=5, t=0.8)", peerTime, peerPairs)
	fmt.Printf("\nratio: neardup %.2fx the peer's documents/s (target ≥ 3x)\n", ours/peer)
}

// runNeardup runs the pipeline over the corpus and returns the reported
// (duplicate, duplicate_of) pairs.
func runNeardup(docs []synth.Doc, profile string) (time.Duration, map[[2]string]bool) {
	o := &config.Overrides{}
	o.Add("profile", profile)
	if x := os.Getenv("SCANBENCH_SET"); x != "" {
		for _, kv := range strings.Split(x, ",") {
			k, v, _ := strings.Cut(kv, "=")
			o.Add(k, v)
		}
	}
	cfg, err := config.Load("", nil, o)
	if err != nil {
		panic(err)
	}
	pc, err := pipeline.FromConfig(&cfg, "bench")
	if err != nil {
		panic(err)
	}
	start := time.Now()
	probe, err := pipeline.New(pc, nil)
	if err != nil {
		panic(err)
	}
	ix, err := index.NewMemory(index.MemoryConfig{Params: probe.IndexParams()})
	if err != nil {
		panic(err)
	}
	defer ix.Close()
	pl, err := pipeline.New(pc, ix)
	if err != nil {
		panic(err)
	}
	in := make(chan pipeline.Item, 256)
	out := make(chan pipeline.Output, 256)
	go func() {
		defer close(in)
		for _, d := range docs {
			in <- pipeline.Item{Doc: pipeline.Document{ID: d.ID, Text: []byte(d.Text)}}
		}
	}()
	errc := make(chan error, 1)
	go func() { errc <- pl.Run(context.Background(), in, out); close(out) }()
	pairs := map[[2]string]bool{}
	for o := range out {
		if o.Event != nil && o.Event.DuplicateOf != "" {
			pairs[[2]string{o.Event.ID, o.Event.DuplicateOf}] = true
		}
	}
	if err := <-errc; err != nil {
		panic(err)
	}
	return time.Since(start), pairs
}

// runPeer is the usual way to deduplicate with the peer: sign every
// document, add it, build the index, then query each document and report
// every earlier document in its buckets. It has no verification step.
func runPeer(docs []synth.Doc) (time.Duration, map[[2]string]bool) {
	start := time.Now()
	lsh := minhashlsh.NewMinhashLSH64(128, 0.8)
	sigs := make([][]uint64, len(docs))
	pos := map[string]int{}
	for i, d := range docs {
		m := minhashlsh.NewMinhash(1, 128)
		words := strings.Fields(strings.ToLower(d.Text))
		for j := 0; j+5 <= len(words); j++ {
			m.Push([]byte(strings.Join(words[j:j+5], " ")))
		}
		sigs[i] = append([]uint64(nil), m.Signature()...)
		lsh.Add(d.ID, sigs[i])
		pos[d.ID] = i
	}
	lsh.Index()
	pairs := map[[2]string]bool{}
	for i, d := range docs {
		for _, k := range lsh.Query(sigs[i]) {
			id := k.(string)
			if pos[id] < i {
				pairs[[2]string{d.ID, id}] = true
			}
		}
	}
	return time.Since(start), pairs
}
