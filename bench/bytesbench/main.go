// Command bytesbench measures the whole cost of a stored document: it
// streams generated documents (with planted exact, near and partial
// duplicates) through the real pipeline at a profile's defaults, into the
// memory index or a Redis server, and reports the growth per document of
// the Go heap (memory index) or of Redis's used_memory, with the share of
// each kind of key (bands, ids, lanes, features, verdicts).
//
//	go run ./bench/bytesbench -profile web -docs 1000000
//	go run ./bench/bytesbench -profile web -docs 1000000 -index redis://127.0.0.1:6379
//
// Use a Redis server of its own (the namespace is flushed from it first);
// docs/performance.md has the figures and the commands. Not part of CI.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/synth"
	"github.com/neardup/neardup/pipeline"
)

func main() {
	n := flag.Int("docs", 1000000, "documents to store")
	profile := flag.String("profile", "web", "profile: web, books or sentence")
	ixURL := flag.String("index", "memory", "memory or redis://host:port")
	words := flag.String("words", "", "document length in words, min,max (default: web 900,1100; books 1500,3000; sentence 12,30)")
	set := flag.String("set", "", "configuration overrides, key=value,key=value")
	flag.Parse()
	if err := run(*n, *profile, *ixURL, *words, *set); err != nil {
		fmt.Fprintln(os.Stderr, "bytesbench:", err)
		os.Exit(1)
	}
}

func run(n int, profile, ixURL, words, set string) error {
	ctx := context.Background()
	o := &config.Overrides{}
	o.Add("profile", profile)
	o.Add("index.url", ixURL)
	o.Add("index.namespace", "bytesbench")
	for _, kv := range strings.Split(set, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			o.Add(k, v)
		}
	}
	cfg, err := config.Load("", nil, o)
	if err != nil {
		return err
	}
	lo, hi := map[string][2]int{"web": {900, 1100}, "books": {1500, 3000}, "sentence": {12, 30}}[profile][0], 0
	hi = map[string][2]int{"web": {900, 1100}, "books": {1500, 3000}, "sentence": {12, 30}}[profile][1]
	if words != "" {
		a, b, _ := strings.Cut(words, ",")
		lo, _ = strconv.Atoi(a)
		hi, _ = strconv.Atoi(b)
	}
	pc, err := pipeline.FromConfig(&cfg, "bytesbench")
	if err != nil {
		return err
	}
	probe, err := pipeline.New(pc, nil)
	if err != nil {
		return err
	}
	var rc *redis.Client
	prefix := "bytesbench:v" + strconv.Itoa(index.SchemaVersion) + ":{0}"
	if cfg.Index.URL != "memory" {
		opt, err := redis.ParseURL(cfg.Index.URL)
		if err != nil {
			return err
		}
		rc = redis.NewClient(opt)
		defer rc.Close()
		var cursor uint64
		for {
			keys, next, err := rc.Scan(ctx, cursor, "bytesbench:*", 10000).Result()
			if err != nil {
				return err
			}
			if len(keys) > 0 {
				rc.Unlink(ctx, keys...)
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
	}
	before, err := usage(ctx, rc)
	if err != nil {
		return err
	}
	ix, err := index.Open(ctx, cfg.Index.URL, index.Options{
		Params: probe.IndexParams(), Namespace: cfg.Index.Namespace, Retention: cfg.Index.Retention,
		Generation: cfg.Index.Generation, MaxBucket: cfg.Index.CommonDocs, MaxCandidates: cfg.Verify.MaxCandidates,
		Capacity: cfg.Index.Capacity, Batch: cfg.Index.Batch, Timeout: 30 * time.Second,
	})
	if err != nil {
		return err
	}
	defer ix.Close()
	pl, err := pipeline.New(pc, ix)
	if err != nil {
		return err
	}
	fmt.Printf("bytesbench: %d documents of %d–%d words, profile %s (%d×%d bands, max_shingles %d), index %s, %s\n",
		n, lo, hi, profile, pc.Bands, pc.Rows, cfg.Sketch.MaxShingles, cfg.Index.URL, runtime.Version())

	in := make(chan pipeline.Item, 256)
	out := make(chan pipeline.Output, 256)
	gen := synth.Config{Docs: n, Seed: 2026, MinWords: lo, MaxWords: hi,
		ExactRate: 0.05, NearRate: 0.15, PartialRate: 0.05, NearEdits: 0.03, PartialReplace: 0.2, PartialNoise: 0.01}
	ids := make([]string, 0, 2000)
	rng := rand.New(rand.NewPCG(1, 1))
	var textBytes int64
	go func() {
		defer close(in)
		i := 0
		synth.Stream(gen, 1000, func(d synth.Doc) {
			textBytes += int64(len(d.Text))
			if len(ids) < cap(ids) {
				ids = append(ids, d.ID)
			} else if k := rng.IntN(i + 1); k < len(ids) {
				ids[k] = d.ID // reservoir sample of stored ids
			}
			i++
			in <- pipeline.Item{Doc: pipeline.Document{ID: d.ID, Text: []byte(d.Text)}}
		})
	}()
	errc := make(chan error, 1)
	start := time.Now()
	go func() { errc <- pl.Run(ctx, in, out); close(out) }()
	kinds := map[string]int{}
	done := 0
	for o := range out {
		done++
		if o.Event != nil {
			kinds[o.Event.Kind]++
		}
		if o.Dead != nil {
			kinds["dead"]++
		}
		if done%200000 == 0 {
			fmt.Printf("  %d documents, %.0f docs/s\n", done, float64(done)/time.Since(start).Seconds())
		}
	}
	if err := <-errc; err != nil {
		return err
	}
	elapsed := time.Since(start)
	pl = nil
	after, err := usage(ctx, rc)
	if err != nil {
		return err
	}
	feats, err := ix.Features(ctx, ids)
	if err != nil {
		return err
	}
	verdicts, err := ix.Verdicts(ctx, ids)
	if err != nil {
		return err
	}
	fmt.Printf("%d documents (%.0f bytes of text each on average) in %v (%.0f docs/s); duplicates %v\n",
		done, float64(textBytes)/float64(done), elapsed.Round(time.Second), float64(done)/elapsed.Seconds(), kinds)
	fmt.Printf("stored per document (sample of %d ids): features %.0f B, verdict record %.0f B\n", len(ids), mean(feats), mean(verdicts))
	what := "Go heap (runtime.MemStats.HeapAlloc after GC, index only)"
	if rc != nil {
		what = "Redis used_memory"
	}
	fmt.Printf("%s: %.1f MB → %.1f MB: %.0f bytes per document\n", what, float64(before)/1e6, float64(after)/1e6, float64(after-before)/float64(done))
	if rc != nil {
		return byKind(ctx, rc, prefix, done)
	}
	runtime.KeepAlive(ix)
	return nil
}

func mean(bs [][]byte) float64 {
	s, k := 0, 0
	for _, b := range bs {
		if b != nil {
			s += len(b)
			k++
		}
	}
	return float64(s) / float64(max(k, 1))
}

// usage returns used_memory, or the heap after a collection.
func usage(ctx context.Context, rc *redis.Client) (int64, error) {
	if rc == nil {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc), nil
	}
	info, err := rc.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no used_memory in INFO")
}

// byKind splits the keys by kind: MEMORY USAGE of up to 2,000 keys of each
// kind, scaled to the kind's key count.
func byKind(ctx context.Context, rc *redis.Client, prefix string, docs int) error {
	names := map[string]string{"b": "band (and SimHash) hashes", "i": "ids", "e": "content lane", "x": "I-Match lane",
		"m": "meta records (external ids)", "f": "features", "v": "verdicts", "c": "clock"}
	count := map[string]int{}
	sample := map[string][]string{}
	var cursor uint64
	for {
		keys, next, err := rc.Scan(ctx, cursor, prefix+"*", 10000).Result()
		if err != nil {
			return err
		}
		for _, k := range keys {
			kind := k[len(prefix):][:1]
			count[kind]++
			if len(sample[kind]) < 2000 {
				sample[kind] = append(sample[kind], k)
			}
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	var order []string
	for k := range count {
		order = append(order, k)
	}
	sort.Strings(order)
	fmt.Println("\n| keys | count | bytes per document |")
	fmt.Println("|---|---|---|")
	total := 0.0
	for _, k := range order {
		var sum int64
		for _, key := range sample[k] {
			n, err := rc.MemoryUsage(ctx, key, 0).Result()
			if err != nil {
				return err
			}
			sum += n
		}
		per := float64(sum) / float64(len(sample[k])) * float64(count[k]) / float64(docs)
		total += per
		fmt.Printf("| %s (%s) | %d | %.1f |\n", names[k], k, count[k], per)
	}
	fmt.Printf("| all keys (MEMORY USAGE) | | %.1f |\n", total)
	return nil
}
