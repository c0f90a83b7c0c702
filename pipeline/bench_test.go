package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/synth"
)

// BenchmarkStreams runs the whole pipeline (web profile, memory index,
// default settings as scan uses them) over 20,000 documents of about 200
// words: one document over and over, 20,000 distinct ones, and 20,000
// near copies of one document (one word of each replaced: every bucket
// fills to index.max_bucket, the worst case of the LSH lane, which ranks
// the candidates and verifies verify.max_candidates of them). A stream of
// copies must run at least as fast as distinct documents: a copy is found
// through its content digest and verifies nothing.
//
//	go test ./pipeline -run '^$' -bench Streams -benchtime 3x
func BenchmarkStreams(b *testing.B) {
	const n = 20000
	g := synth.NewGenerator(11, 50000)
	one := []byte(g.Text(g.Words(200)))
	distinct := make([][]byte, n)
	for i := range distinct {
		distinct[i] = []byte(g.Text(g.Words(200)))
	}
	base := g.Words(200)
	near := make([][]byte, n)
	for i := range near {
		w := slices.Clone(base)
		w[i%len(w)] = fmt.Sprint("w", i)
		near[i] = []byte(strings.Join(w, " "))
	}
	for _, tc := range []struct {
		name string
		text func(i int) []byte
	}{
		{"copies", func(int) []byte { return one }},
		{"distinct", func(i int) []byte { return distinct[i] }},
		{"near-copies", func(i int) []byte { return near[i] }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			cfg := testConfig(b, "web")
			cfg.EmitUnique = false
			var total time.Duration
			for range b.N {
				probe, err := New(cfg, nil)
				if err != nil {
					b.Fatal(err)
				}
				ix, err := index.Open(context.Background(), "memory", index.Options{Params: probe.IndexParams(), MaxBucket: 1000})
				if err != nil {
					b.Fatal(err)
				}
				pl, err := New(cfg, ix)
				if err != nil {
					b.Fatal(err)
				}
				in := make(chan Item, 256)
				out := make(chan Output, 256)
				start := time.Now()
				go func() {
					defer close(in)
					for i := range n {
						in <- Item{Doc: Document{ID: fmt.Sprint("d", i), Text: tc.text(i)}}
					}
				}()
				errc := make(chan error, 1)
				go func() { errc <- pl.Run(context.Background(), in, out); close(out) }()
				for range out {
				}
				if err := <-errc; err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
				ix.Close()
			}
			b.ReportMetric(float64(n*b.N)/total.Seconds(), "docs/s")
		})
	}
}
