// Command scanbench runs neardup's pipeline (verification on, memory index)
// and the batch pipeline of github.com/ekzhu/minhash-lsh (MinHash-128 over
// word 5-shingles, LSH at each threshold of -peer-thresholds, Add all,
// Index, Query each) side by side on each corpus of -corpus (bench/corpus:
// by default the real-text corpus, 95% copies, then the generated one),
// and prints documents/s and precision and recall against the corpus's
// ground truth for every run, and each ratio with the corpus and both
// sides' precision and recall beside it.
//
// The peer runs at 0.8, the threshold of its documented example; at 0.5,
// the resemblance neardup's web profile is tuned for; and at 0.3, its best
// setting on the generated corpus of those tried from 0.3 to 0.8 (the
// highest recall at precision 1.0). neardup verifies its candidates; the
// peer reports every LSH candidate pair. A pair is correct when its two
// documents hold text of one original (a copy against its source or
// another copy of it).
//
// The comparison is fair: the peer is fed the very tokens neardup shingles
// (neardup's normalizer with the profile's settings: case and quotes
// folded, punctuation a separator), its time includes that tokenization,
// and neardup runs twice, on all cores and with GOMAXPROCS=1, since the
// peer uses one core. Rounds alternate the three runs; the best of each is
// reported.
//
//	(cd bench/scanbench && go run . -docs 20000 -rounds 3)
//	(cd bench/scanbench && go run . -corpus /tmp/real95.jsonl,generated)
//
// It lives in its own module so the peer never enters neardup's graph.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	minhashlsh "github.com/ekzhu/minhash-lsh"

	"github.com/neardup/neardup/bench/corpus"
	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/pipeline"
	"github.com/neardup/neardup/sketch"
)

func main() {
	n := flag.Int("docs", 20000, "documents of a built corpus")
	corpora := flag.String("corpus", "real,generated", "comma-separated corpora, one table each: "+corpus.Spec)
	data := flag.String("data", "", "the shared data folder real text is cut from (default: $NEARDUP_DATA, else shared/data beside the repository)")
	profile := flag.String("profile", "web", "neardup profile")
	rounds := flag.Int("rounds", 3, "rounds of the three runs; the best of each is kept")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of neardup's one-core runs to this file")
	memprofile := flag.String("memprofile", "", "write an allocation profile of the whole run to this file (go tool pprof -sample_index=alloc_space)")
	peerList := flag.String("peer-thresholds", "0.8,0.5,0.3", "comma-separated LSH thresholds the peer runs at, one run each")
	flag.Parse()
	var peerTs []float64
	for _, s := range strings.Split(*peerList, ",") {
		t, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || t <= 0 || t >= 1 {
			fmt.Fprintf(os.Stderr, "scanbench: -peer-thresholds: %q: want numbers in (0, 1)\n", s)
			os.Exit(2)
		}
		peerTs = append(peerTs, t)
	}
	cfg := loadConfig(*profile)
	fmt.Printf("scanbench: GOMAXPROCS=%d, %s, profile %s\n", runtime.GOMAXPROCS(0), runtime.Version(), *profile)
	for _, spec := range strings.Split(*corpora, ",") {
		c, err := corpus.Open(strings.TrimSpace(spec), *n, 0, *data)
		if err != nil {
			fmt.Fprintln(os.Stderr, "scanbench:", err)
			os.Exit(1)
		}
		bench(c, cfg, *profile, *rounds, peerTs, *cpuprofile)
	}
	if *memprofile != "" {
		f, err := os.Create(*memprofile)
		if err != nil {
			panic(err)
		}
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			panic(err)
		}
		f.Close()
	}
}

// bench runs the rounds on one corpus and prints its table and ratios.
func bench(c *corpus.Corpus, cfg *config.Config, profile string, rounds int, peerTs []float64, cpuprofile string) {
	docs := c.Docs
	fmt.Printf("\ncorpus %s: %v\n\n", c.Name, c.Stats())
	lines := make([][]byte, len(docs))
	for i, d := range docs {
		b, err := json.Marshal(map[string]string{"id": d.ID, "text": d.Text})
		if err != nil {
			panic(err)
		}
		lines[i] = b
	}
	all := runtime.GOMAXPROCS(0)
	// best keeps the shortest wall time of a run and, apart, the least
	// CPU time (getrusage), which a loaded machine inflates less.
	best := func(cur, d timing) timing {
		if cur.wall == 0 || d.wall < cur.wall {
			cur.wall = d.wall
		}
		if cur.cpu == 0 || d.cpu < cur.cpu {
			cur.cpu = d.cpu
		}
		return cur
	}
	var ourAll, ourOne timing
	peerTime := make([]timing, len(peerTs))
	peerPairs := make([]map[[2]string]bool, len(peerTs))
	var ourPairs, onePairs map[[2]string]bool
	var cands string
	var mallocs, allocBytes uint64 // in neardup's one-core runs
	var ms runtime.MemStats
	for round := range rounds {
		var d timing
		d, ourPairs, cands = timed2(func() (map[[2]string]bool, string) { return runNeardup(lines, cfg) })
		ourAll = best(ourAll, d)
		runtime.GOMAXPROCS(1)
		stop := startProfile(cpuprofile, round)
		runtime.ReadMemStats(&ms)
		m0, b0 := ms.Mallocs, ms.TotalAlloc
		d, onePairs, _ = timed2(func() (map[[2]string]bool, string) { return runNeardup(lines, cfg) })
		runtime.ReadMemStats(&ms)
		mallocs, allocBytes = mallocs+ms.Mallocs-m0, allocBytes+ms.TotalAlloc-b0
		stop()
		runtime.GOMAXPROCS(all)
		ourOne = best(ourOne, d)
		for i, t := range peerTs {
			d, peerPairs[i], _ = timed2(func() (map[[2]string]bool, string) { return runPeer(docs, cfg, t), "" })
			peerTime[i] = best(peerTime[i], d)
		}
	}
	if len(ourPairs) != len(onePairs) {
		fmt.Printf("warning: neardup reported %d pairs on all cores, %d on one\n", len(ourPairs), len(onePairs))
	}

	type result struct{ rate, perCPU, prec, rec float64 }
	report := func(name string, el timing, pairs map[[2]string]bool) result {
		s := c.Score(pairs)
		rate, perCPU := float64(len(docs))/el.wall.Seconds(), float64(len(docs))/el.cpu.Seconds()
		fmt.Printf("| %s | %.0f | %.0f | %d | %.4f | %.4f |\n", name, rate, perCPU, s.Pairs, s.Precision, s.Recall)
		return result{rate, perCPU, s.Precision, s.Recall}
	}
	fmt.Printf("best of %d rounds; docs/s by the wall clock, docs per CPU-second by getrusage of the process; precision: reported (later, earlier) pairs whose documents share an original; recall: copies with at least one such pair\n\n"+
		"| pipeline | docs/s | docs per CPU-second | reported pairs | precision | recall |\n|---|---|---|---|---|---|\n", rounds)
	ours := report(fmt.Sprintf("neardup scan, %s profile, GOMAXPROCS=%d", profile, all), ourAll, ourPairs)
	one := report(fmt.Sprintf("neardup scan, %s profile, GOMAXPROCS=1", profile), ourOne, onePairs)
	peers := make([]result, len(peerTs))
	for i, t := range peerTs {
		peers[i] = report(fmt.Sprintf("ekzhu/minhash-lsh batch (K=128, w=5, t=%g, neardup's tokens), one core", t), peerTime[i], peerPairs[i])
	}
	fmt.Printf("\n%s\n", cands)
	runs := float64(rounds * len(docs))
	fmt.Printf("neardup allocations per document (one-core runs, the harness's items and pair map included): %.0f allocs, %.0f bytes\n",
		float64(mallocs)/runs, float64(allocBytes)/runs)
	fmt.Println()
	for i, t := range peerTs {
		p := peers[i]
		fmt.Printf("ratio against the peer at t=%g on %s: neardup %.2fx its documents/s on %d cores, %.2fx on one core (per CPU-second: %.2fx); precision/recall neardup %.4f/%.4f, peer %.4f/%.4f\n",
			t, c.Name, ours.rate/p.rate, all, one.rate/p.rate, one.perCPU/p.perCPU, ours.prec, ours.rec, p.prec, p.rec)
	}
}

// timing is a run's wall and CPU time.
type timing struct{ wall, cpu time.Duration }

// timed2 runs f and times it: wall clock and the process's CPU time
// (getrusage, user and system), after a collection so that the previous
// run's garbage is not charged to it.
func timed2(f func() (map[[2]string]bool, string)) (timing, map[[2]string]bool, string) {
	runtime.GC()
	c0, t0 := processCPU(), time.Now()
	pairs, s := f()
	return timing{time.Since(t0), processCPU() - c0}, pairs, s
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startProfile starts a CPU profile of a round into path.<round> (go tool
// pprof merges several); it returns the function that stops it. An empty
// path profiles nothing.
func startProfile(path string, round int) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path + "." + strconv.Itoa(round))
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

func loadConfig(profile string) *config.Config {
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
	return &cfg
}

// runNeardup runs the pipeline over the corpus and returns the reported
// (duplicate, duplicate_of) pairs. Its workers follow GOMAXPROCS.
func runNeardup(lines [][]byte, cfg *config.Config) (pairs map[[2]string]bool, cands string) {
	mem := *cfg
	mem.Index.URL = "memory"
	pc, ix, err := pipeline.OpenIndex(context.Background(), &mem, "bench", index.Options{})
	if err != nil {
		panic(err)
	}
	defer ix.Close()
	pl, err := pipeline.New(pc, ix)
	if err != nil {
		panic(err)
	}
	// neardup reads JSON lines, as scan does: decoding them is part of
	// its cost (in the pipeline's workers, as for scan's and serve's
	// inputs). The peer is handed the texts.
	dec := pipeline.NewDecoder(cfg.Sketch.MaxBytes)
	read := func(ctx context.Context, in chan<- pipeline.Item) error {
		for _, line := range lines {
			select {
			case in <- pipeline.Item{Raw: line, Lazy: func() (pipeline.Document, error) { return dec.DecodeJSON(line, "") }}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	pairs = map[[2]string]bool{}
	err = pl.Stream(context.Background(), read, func(o pipeline.Output) error {
		if o.Event != nil && o.Event.DuplicateOf != "" {
			pairs[[2]string{o.Event.ID, o.Event.DuplicateOf}] = true
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	if st, ok := ix.(interface{ Stats() index.Stats }); ok {
		s := st.Stats()
		n := float64(max(s.Docs, 1))
		cands = fmt.Sprintf("index: %.2f candidates per document (%.2f found through passage anchors only), %.3f exact copies",
			float64(s.Candidates)/n, float64(s.Passage)/n, float64(s.Copies)/n)
	}
	return pairs, cands
}

// runPeer is the usual way to deduplicate with the peer: sign every
// document, add it, build the index, then query each document and report
// every earlier document in its buckets. It has no verification step. Its
// shingles are neardup's: the profile's normalizer's tokens, five at a
// time, joined by spaces.
func runPeer(docs []corpus.Doc, cfg *config.Config, threshold float64) map[[2]string]bool {
	sh := newShingler(cfg)
	lsh := minhashlsh.NewMinhashLSH64(128, threshold)
	sigs := make([][]uint64, len(docs))
	pos := map[string]int{}
	for i, d := range docs {
		m := minhashlsh.NewMinhash(1, 128)
		sh.each([]byte(d.Text), m.Push)
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
	return pairs
}

// shingler gives the peer neardup's word shingles as strings: the tokens
// of neardup's normalizer (the profile's settings), w at a time, joined by
// single spaces.
type shingler struct {
	norm *sketch.Normalizer
	w    int
	toks sketch.Tokens
	buf  []byte
}

func newShingler(cfg *config.Config) *shingler {
	return &shingler{norm: sketch.NewNormalizer(pipeline.SketchConfig(cfg).Normalize), w: cfg.Sketch.Shingle}
}

// each calls push with every shingle of text, in order (the slice is
// reused: push must not keep it).
func (s *shingler) each(text []byte, push func([]byte)) {
	s.norm.Tokenize(text, &s.toks)
	for j := 0; j+s.w <= s.toks.Len(); j++ {
		s.buf = s.buf[:0]
		for k := j; k < j+s.w; k++ {
			if k > j {
				s.buf = append(s.buf, ' ')
			}
			s.buf = append(s.buf, s.toks.Word(k)...)
		}
		push(s.buf)
	}
}
