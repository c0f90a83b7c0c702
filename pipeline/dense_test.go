package pipeline

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/dataset"
)

// denseCorpus is a duplicate-dense stream of real text: originals chunks
// of about 900 words (~5 KB) of the Gutenberg first editions in
// shared/data, each followed later in the stream by copies noisy copies,
// near ones (1–4% of the words deleted, replaced or inserted, case and
// punctuation noise) and, one in four, partial ones (25–70% of the chunk
// embedded in words drawn at random from the texts). It returns the items
// and each id's cluster (its original).
func denseCorpus(t testing.TB, originals, copies int, seed uint64) ([]Item, map[string]string) {
	t.Helper()
	dir := filepath.Join(dataset.Dir(t, "gutenberg-editions"), "texts")
	var chunks []string
	var vocab []string
	for _, name := range []string{"pg1342.txt", "pg2701.txt", "pg1661.txt", "pg84.txt", "pg11.txt"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		w := strings.Fields(string(b))
		vocab = append(vocab, w...)
		for i := 0; i+900 <= len(w); i += 900 {
			chunks = append(chunks, strings.Join(w[i:i+900], " "))
		}
	}
	r := rand.New(rand.NewPCG(seed, 23))
	if originals > len(chunks) {
		t.Fatalf("%d originals: the texts have %d chunks", originals, len(chunks))
	}
	r.Shuffle(len(chunks), func(i, j int) { chunks[i], chunks[j] = chunks[j], chunks[i] })
	word := func() string { return vocab[r.IntN(len(vocab))] }
	type doc struct {
		at       float64
		id, text string
	}
	var docs []doc
	cluster := map[string]string{}
	for i, c := range chunks[:originals] {
		t0 := r.Float64() * 0.6
		orig := fmt.Sprintf("o%03d", i)
		docs = append(docs, doc{t0, orig, c})
		cluster[orig] = orig
		w := strings.Fields(c)
		for k := range copies {
			var o []string
			id := fmt.Sprintf("n%03d-%02d", i, k)
			if r.IntN(4) > 0 {
				rate := 0.01 + 0.03*r.Float64()
				for _, x := range w {
					switch p := r.Float64(); {
					case p < rate/3:
					case p < 2*rate/3:
						o = append(o, word())
					case p < rate:
						o = append(o, x, word())
					case p < rate+0.02:
						o = append(o, strings.ToUpper(x))
					case p < rate+0.04:
						o = append(o, x+",")
					default:
						o = append(o, x)
					}
				}
			} else {
				id = fmt.Sprintf("p%03d-%02d", i, k)
				n := len(w) * (25 + r.IntN(46)) / 100
				s, before := r.IntN(len(w)-n+1), r.IntN(len(w)-n+1)
				for range before {
					o = append(o, word())
				}
				o = append(o, w[s:s+n]...)
				for range len(w) - n - before {
					o = append(o, word())
				}
			}
			docs = append(docs, doc{t0 + 0.4*r.Float64(), id, strings.Join(o, " ")})
			cluster[id] = orig
		}
	}
	slices.SortStableFunc(docs, func(a, b doc) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return 0
	})
	items := make([]Item, len(docs))
	for i, d := range docs {
		items[i] = Item{Doc: Document{ID: d.id, Text: []byte(d.text)}, Tag: i}
	}
	return items, cluster
}

// runPipeline runs pl over items and returns the outputs in order.
func runPipeline(t testing.TB, pl *Pipeline, items []Item) []Output {
	t.Helper()
	return runThrough(t, pl, items, make(chan Item, 64), make(chan Output, 64))
}

// densePipeline returns a web-profile pipeline over a new memory index,
// with a fixed clock and workers workers.
func densePipeline(t testing.TB, workers, batch int) *Pipeline {
	t.Helper()
	cfg := testConfig(t, "web")
	cfg.Workers, cfg.Batch = workers, batch
	at := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	cfg.Now = func() time.Time { return at }
	probe, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := New(cfg, memoryIndex(t, probe))
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// TestDenseEventsStable runs a duplicate-dense real-text stream with
// different numbers of workers and batch sizes: the events are the same,
// byte for byte (nothing depends on the stages' timing), and most
// documents are duplicates.
func TestDenseEventsStable(t *testing.T) {
	items, cluster := denseCorpus(t, 30, 19, 1)
	first := runPipeline(t, densePipeline(t, 2, 64), items)
	dups := 0
	for i := range items {
		ev := first[i].Event
		if ev == nil {
			t.Fatalf("%s: no event (dead letter %v)", items[i].Doc.ID, first[i].Dead)
		}
		if ev.DuplicateOf != "" {
			dups++
			if cluster[ev.DuplicateOf] != cluster[ev.ID] {
				t.Errorf("%s: duplicate_of %s, of another cluster", ev.ID, ev.DuplicateOf)
			}
		}
	}
	if dups < len(items)/2 {
		t.Fatalf("only %d duplicates of %d documents: the corpus is not duplicate-dense", dups, len(items))
	}
	for _, wb := range [][2]int{{1, 1}, {4, 16}} {
		again := runPipeline(t, densePipeline(t, wb[0], wb[1]), items)
		for i := range items {
			x, _ := json.Marshal(first[i].Event)
			y, _ := json.Marshal(again[i].Event)
			if string(x) != string(y) {
				t.Fatalf("workers %d batch %d: events differ:\n%s\n%s", wb[0], wb[1], x, y)
			}
		}
	}
}

// TestDenseEventsWithoutFeatureCache runs the dense stream with a
// features cache that keeps nothing, so that every decode of a
// candidate's stored features gives new features: the events are the
// same as with the cache. Verification must not depend on whether the
// index stage and a verifier worker were handed the same decoded
// features (a source's discount is named by the candidate it applies to,
// not by a cache hit).
func TestDenseEventsWithoutFeatureCache(t *testing.T) {
	items, _ := denseCorpus(t, 30, 19, 1)
	first := runPipeline(t, densePipeline(t, 1, 16), items)
	pl := densePipeline(t, 1, 16)
	pl.decoded = newFeatCache(0)
	again := runPipeline(t, pl, items)
	for i := range items {
		x, _ := json.Marshal(first[i].Event)
		y, _ := json.Marshal(again[i].Event)
		if string(x) != string(y) {
			t.Fatalf("without the cache, events differ:\n%s\n%s", x, y)
		}
	}
}

// BenchmarkDenseRealText runs the pipeline (memory index, web profile)
// over a duplicate-dense real-text stream and reports the process's CPU
// time per document (user + system, all goroutines) and the decoded
// features cache's hit rate.
//
//	go test ./pipeline -run '^$' -bench DenseRealText -benchtime 3x
func BenchmarkDenseRealText(b *testing.B) {
	items, _ := denseCorpus(b, 60, 19, 1)
	b.ReportAllocs()
	var cpu time.Duration
	var hits, misses int
	for b.Loop() {
		b.StopTimer()
		pl := densePipeline(b, 0, 0)
		c0 := cpuTime(b)
		b.StartTimer()
		runPipeline(b, pl, items)
		b.StopTimer()
		cpu += cpuTime(b) - c0
		hits, misses = hits+pl.decoded.hits, misses+pl.decoded.misses
		b.StartTimer()
	}
	n := float64(b.N * len(items))
	b.ReportMetric(float64(cpu.Microseconds())/n, "µs-cpu/doc")
	b.ReportMetric(n/b.Elapsed().Seconds(), "docs/s")
	b.ReportMetric(float64(hits)/float64(max(hits+misses, 1)), "decode-hit-rate")
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
