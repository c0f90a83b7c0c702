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
// fills to index.common_docs, the worst case of the LSH lane, which ranks
// the candidates and verifies verify.max_candidates of them). A stream of
// copies must run at least as fast as distinct documents: a copy is found
// through its content digest and verifies nothing.
//
//	go test ./pipeline -run '^$' -bench Streams -benchtime 5x
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
	// stream runs the pipeline over n documents and returns how long it
	// took.
	stream := func(b *testing.B, text func(i int) []byte) time.Duration {
		cfg := testConfig(b, "web")
		cfg.EmitUnique = false
		probe, err := New(cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		ix, err := index.Open(context.Background(), "memory", index.Options{Params: probe.IndexParams(), CommonDocs: 1000})
		if err != nil {
			b.Fatal(err)
		}
		defer ix.Close()
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
				in <- Item{Doc: Document{ID: fmt.Sprint("d", i), Text: text(i)}}
			}
		}()
		errc := make(chan error, 1)
		go func() { errc <- pl.Run(context.Background(), in, out); close(out) }()
		for range out {
		}
		if err := <-errc; err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	// Copies and distinct documents alternate in each iteration, so that a
	// shared machine's load weighs on both alike; the ratio is what to read.
	b.Run("copies-vs-distinct", func(b *testing.B) {
		b.ReportAllocs()
		var tc, td time.Duration
		for range b.N {
			tc += stream(b, func(int) []byte { return one })
			td += stream(b, func(i int) []byte { return distinct[i] })
		}
		b.ReportMetric(float64(n*b.N)/tc.Seconds(), "copies/s")
		b.ReportMetric(float64(n*b.N)/td.Seconds(), "distinct/s")
		b.ReportMetric(td.Seconds()/tc.Seconds(), "copies/distinct")
	})
	b.Run("near-copies", func(b *testing.B) {
		b.ReportAllocs()
		var t time.Duration
		for range b.N {
			t += stream(b, func(i int) []byte { return near[i] })
		}
		b.ReportMetric(float64(n*b.N)/t.Seconds(), "docs/s")
	})
}
