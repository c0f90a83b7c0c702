package pipeline

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/synth"
)

// Two pipelines (two consumers) share one index on a real 3-master Redis
// Cluster and process interleaved halves of a planted corpus at the same
// time. Their events plus corrections must name exactly the pairs a serial
// run over the memory index names, up to which document of a pair the
// index admitted first.
func TestClusterConsumersAgreeWithSerial(t *testing.T) {
	addrs := redistest.StartCluster(t)
	corpus := synth.Corpus(synth.Config{Docs: 1500, Seed: 77, Contain: true})
	cfg := testConfig(t, "web")
	cfg.Batch = 16
	probe, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(context.Background(), "redis+cluster://"+strings.Join(addrs, ","), index.Options{Params: probe.IndexParams(), Namespace: "cluster"})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()

	items := synthItems(corpus)
	var mu sync.Mutex
	corrections := 0
	pairs := map[[2]string]bool{} // unordered pairs reported, by events or corrections
	add := func(a, b string) {
		if a > b {
			a, b = b, a
		}
		mu.Lock()
		pairs[[2]string{a, b}] = true
		mu.Unlock()
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for part := range 2 {
		pl, err := New(cfg, ix)
		if err != nil {
			t.Fatal(err)
		}
		in := make(chan Item)
		out := make(chan Output, 16)
		wg.Go(func() {
			defer close(in)
			for i := part; i < len(items); i += 2 {
				in <- items[i]
			}
		})
		wg.Go(func() {
			errs <- pl.Run(context.Background(), in, out)
			close(out)
		})
		wg.Go(func() {
			for o := range out {
				if o.Event != nil && o.Event.DuplicateOf != "" {
					add(o.Event.ID, o.Event.DuplicateOf)
				}
				for _, c := range o.Corrections {
					add(c.ID, c.DuplicateOf)
					mu.Lock()
					corrections++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := map[[2]string]bool{}
	for _, o := range run(t, cfg, func(p *Pipeline) index.Store { return memoryIndex(t, p) }, items) {
		if ev := o.Event; ev != nil && ev.DuplicateOf != "" {
			a, b := ev.ID, ev.DuplicateOf
			if a > b {
				a, b = b, a
			}
			want[[2]string{a, b}] = true
		}
	}
	missing, extra := 0, 0
	for p := range want {
		if !pairs[p] {
			missing++
			if missing <= 3 {
				t.Errorf("pair %v of the serial run not reported", p)
			}
		}
	}
	for p := range pairs {
		if !want[p] {
			extra++
			if extra <= 3 {
				t.Errorf("pair %v reported, not in the serial run", p)
			}
		}
	}
	t.Logf("cluster, two concurrent consumers: serial run %d pairs, cluster %d (%d from corrections), %d missing, %d extra", len(want), len(pairs), corrections, missing, extra)
}

// TestPassageLaneIndexesAgree streams planted partial duplicates, passages
// of 3–20% of a longer page found only through the passage lane, through
// one pipeline over the memory index, one Redis node and a 3-master Redis
// Cluster: the events, with their copied ranges, are identical.
func TestPassageLaneIndexesAgree(t *testing.T) {
	corpus := synth.Corpus(synth.Config{Docs: 600, Seed: 91, MinWords: 800, MaxWords: 1500, Embed: [2]float64{0.03, 0.2}})
	cfg := testConfig(t, "web")
	cfg.Batch = 16
	items := synthItems(corpus)
	mem := run(t, cfg, func(p *Pipeline) index.Store { return memoryIndex(t, p) }, items)
	red := run(t, cfg, redisIndex(t, redistest.StartServer(t)), items)
	clu := run(t, cfg, clusterIndex(t, redistest.StartCluster(t)), items)
	passages := 0
	for i := range mem {
		if ev := mem[i].Event; ev != nil && ev.Method == "passage" && len(ev.Matches) > 0 && len(ev.Matches[0].Passages) > 0 {
			passages++
		}
		if a, b, c := comparable(mem[i]), comparable(red[i]), comparable(clu[i]); a != b || a != c {
			t.Errorf("document %d: indexes disagree:\n memory  %s\n redis   %s\n cluster %s", i, a, b, c)
		}
	}
	if passages < 20 {
		t.Errorf("only %d partial duplicates found by passage, with copied ranges", passages)
	}
	t.Logf("%d documents, %d partial duplicates with passages; memory, Redis and cluster agree", len(items), passages)
}
