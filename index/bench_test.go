package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index/redistest"
)

// benchParams: K = 128, 9 bands × 13 rows (the t = 0.8 choice).
var benchParams = Params{Hash: "fnv1a64+splitmix64/v1", K: 128, Bands: 9, Rows: 13, Shingle: 5, Seed: 1, SimHashK: 3}

// benchDocs returns n distinct documents with random band keys and ids of
// 16 bytes ("doc:" and 12 digits, the shape redis-benchmark sends).
func benchDocs(n int, seed uint64, full bool) []Entry {
	rng := rand.New(rand.NewPCG(seed, 3))
	docs := make([]Entry, n)
	for i := range docs {
		e := Entry{ID: fmt.Sprintf("doc:%012d", uint64(seed)<<32|uint64(i)), Bands: make([]uint64, benchParams.Bands)}
		for j := range e.Bands {
			e.Bands[j] = rng.Uint64()
		}
		if full {
			e.SimHash, e.HasSimHash = rng.Uint64(), true
			for j := range e.IMatch {
				e.IMatch[j] = byte(rng.Uint32())
			}
			e.HasIMatch = true
			e.Features = make([]byte, 100)
		}
		docs[i] = e
	}
	return docs
}

func BenchmarkMemoryLookupInsert(b *testing.B) {
	b.ReportAllocs()
	m, err := NewMemory(MemoryConfig{Params: benchParams})
	if err != nil {
		b.Fatal(err)
	}
	docs := benchDocs(b.N, 1, false)
	ctx := context.Background()
	b.ResetTimer()
	for lo := 0; lo < len(docs); lo += 64 {
		if _, err := m.LookupInsert(ctx, docs[lo:min(lo+64, len(docs))]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}

// withRandomAnchors gives each document n distinct random anchors, as a
// stream of mostly unrelated pages has.
func withRandomAnchors(docs []Entry, n int, seed uint64) []Entry {
	rng := rand.New(rand.NewPCG(seed, 5))
	for i := range docs {
		docs[i].Anchors = make([]uint64, n)
		for j := range docs[i].Anchors {
			docs[i].Anchors[j] = rng.Uint64()
		}
	}
	return docs
}

// BenchmarkAnchors measures the added cost of the passage lane: documents
// with 9 bands, without anchors (the peer) and with 50 random anchors (a
// 1,000-word page at 40 passage words), on the memory store and on one
// Redis node (batch 64, one caller; also with two live generations). It
// reports µs per document and, on Redis, the commands the scripts run and
// the server's script time per document (INFO commandstats).
func BenchmarkAnchors(b *testing.B) {
	for _, n := range []int{0, 50} {
		b.Run(fmt.Sprintf("memory/anchors=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			m, err := NewMemory(MemoryConfig{Params: benchParams})
			if err != nil {
				b.Fatal(err)
			}
			docs := withRandomAnchors(benchDocs(b.N, 1, false), n, 1)
			ctx := context.Background()
			b.ResetTimer()
			for lo := 0; lo < len(docs); lo += 64 {
				if _, err := m.LookupInsert(ctx, docs[lo:min(lo+64, len(docs))]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/doc")
		})
	}
	addr := redistest.StartServer(b)
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	ctx := context.Background()
	for _, retention := range []time.Duration{0, 7 * 24 * time.Hour} {
		for _, n := range []int{0, 50} {
			name := fmt.Sprintf("redis/anchors=%d", n)
			if retention > 0 {
				name = fmt.Sprintf("redis/generations=2/anchors=%d", n)
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				s := openRedis(b, RedisConfig{Addrs: []string{addr}, Params: benchParams, Namespace: fmt.Sprint("a", rand.Uint64()),
					Retention: retention})
				docs := withRandomAnchors(benchDocs(b.N, rand.Uint64(), false), n, rand.Uint64())
				admin.ConfigResetStat(ctx)
				b.ResetTimer()
				parallelInsert(b, s, docs, 1, 64)
				b.StopTimer()
				calls, usec := scriptStats(b, admin)
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/doc")
				b.ReportMetric(float64(calls)/float64(b.N), "cmds/doc")
				b.ReportMetric(float64(usec)/float64(b.N), "server-µs/doc")
			})
		}
	}
}

// scriptStats returns, from INFO commandstats, the commands run inside
// scripts (every command but EVALSHA/EVAL and the client's own) and the
// microseconds spent in EVALSHA/EVAL.
func scriptStats(tb testing.TB, c *redis.Client) (calls, usec int64) {
	for name, st := range commandStats(tb, c) {
		switch name {
		case "evalsha", "eval":
			usec += st.usec
		case "info", "config|resetstat", "script|load", "ping", "hello", "client|setinfo", "select":
		default:
			calls += st.calls
		}
	}
	return calls, usec
}

// commandStat is one command's line of INFO commandstats.
type commandStat struct{ calls, usec int64 }

// commandStats reads INFO commandstats, by command name.
func commandStats(tb testing.TB, c *redis.Client) map[string]commandStat {
	tb.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]commandStat{}
	for _, line := range strings.Split(info, "\r\n") {
		rest, ok := strings.CutPrefix(line, "cmdstat_")
		if !ok {
			continue
		}
		name, rest, _ := strings.Cut(rest, ":")
		var st commandStat
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				st.calls, _ = strconv.ParseInt(v, 10, 64)
			case "usec":
				st.usec, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		out[name] = st
	}
	return out
}

// parallelInsert runs docs through LookupInsert with workers goroutines,
// batch documents per call, and returns documents per second.
func parallelInsert(tb testing.TB, s Store, docs []Entry, workers, batch int) float64 {
	var wg sync.WaitGroup
	per := (len(docs) + workers - 1) / workers
	start := time.Now()
	for w := range workers {
		mine := docs[min(w*per, len(docs)):min((w+1)*per, len(docs))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lo := 0; lo < len(mine); lo += batch {
				if _, err := s.LookupInsert(context.Background(), mine[lo:min(lo+batch, len(mine))]); err != nil {
					tb.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return float64(len(docs)) / time.Since(start).Seconds()
}

// BenchmarkRedisLookupInsert: b.N documents, 9 bands, loopback.
func BenchmarkRedisLookupInsert(b *testing.B) {
	addr := redistest.StartServer(b)
	for _, sh := range []struct {
		batch, workers int
		full           bool
		retention      time.Duration
	}{{64, 1, false, 0}, {64, 4, false, 0}, {1, 64, false, 0}, {64, 4, false, 7 * 24 * time.Hour}, {64, 4, true, 0}} {
		name := fmt.Sprintf("batch=%d/workers=%d", sh.batch, sh.workers)
		if sh.retention > 0 {
			name += "/generations=2"
		}
		if sh.full {
			name += "/simhash+imatch+features"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			s := openRedis(b, RedisConfig{Addrs: []string{addr}, Params: benchParams, Namespace: fmt.Sprint("b", rand.Uint64()),
				Retention: sh.retention})
			docs := benchDocs(b.N, rand.Uint64(), sh.full)
			b.ResetTimer()
			rate := parallelInsert(b, s, docs, sh.workers, sh.batch)
			b.ReportMetric(rate, "docs/s")
		})
	}
}

// naiveInsert is the peer the issue describes: one unpipelined command per
// band operation, SMEMBERS then SADD, one Redis set per bucket.
func naiveInsert(ctx context.Context, c *redis.Client, e *Entry) ([]string, error) {
	var cands []string
	for i, k := range e.Bands {
		key := "naive:" + strconv.Itoa(i) + ":" + strconv.FormatUint(k, 16)
		m, err := c.SMembers(ctx, key).Result()
		if err != nil {
			return nil, err
		}
		cands = append(cands, m...)
		if err := c.SAdd(ctx, key, e.ID).Err(); err != nil {
			return nil, err
		}
	}
	return cands, nil
}

func BenchmarkRedisNaive(b *testing.B) {
	addr := redistest.StartServer(b)
	for _, workers := range []int{1, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			b.ReportAllocs()
			c := redis.NewClient(&redis.Options{Addr: addr})
			defer c.Close()
			docs := benchDocs(b.N, rand.Uint64(), false)
			b.ResetTimer()
			var wg sync.WaitGroup
			per := (len(docs) + workers - 1) / workers
			for w := range workers {
				mine := docs[min(w*per, len(docs)):min((w+1)*per, len(docs))]
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range mine {
						if _, err := naiveInsert(context.Background(), c, &mine[i]); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
		})
	}
}

// BenchmarkCeiling measures, in one run on one server, the documents per
// second of (a) redis-benchmark sending the very EVALSHA that LookupInsert
// sends (same script, same argument shape, random band values), its best
// of a few concurrency settings: the server's ceiling; (b) LookupInsert; (c)
// the naive one-command-per-band client. It reports the ratios. Run with
// -benchtime=1x; NEARDUP_BENCH_DOCS sets the documents per measurement
// (default 200000) and NEARDUP_BENCH_ROUNDS the rounds (default 3, best
// kept).
func BenchmarkCeiling(b *testing.B) {
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		b.Skip("redis-benchmark not installed: apt-get install -y redis-server")
	}
	n := envInt("NEARDUP_BENCH_DOCS", 200000)
	rounds := envInt("NEARDUP_BENCH_ROUNDS", 3)
	srv := redistest.Start(b, redistest.Options{})
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer admin.Close()
	ctx := context.Background()
	for _, sh := range []struct{ batch, workers int }{{64, 4}, {16, 8}, {1, 64}} {
		b.Run(fmt.Sprintf("batch=%d", sh.batch), func(b *testing.B) {
			b.ReportAllocs()
			var ceil, ours float64
			for round := range rounds {
				admin.FlushAll(ctx)
				s := openRedis(b, RedisConfig{Addrs: []string{srv.Addr}, Params: benchParams, Namespace: "bench", Batch: sh.batch})
				c := ceilingRate(b, s, srv, n, sh.batch)
				admin.FlushAll(ctx)
				s = openRedis(b, RedisConfig{Addrs: []string{srv.Addr}, Params: benchParams, Namespace: "bench", Batch: sh.batch})
				o := parallelInsert(b, s, benchDocs(n, uint64(round+1), false), sh.workers, sh.batch)
				b.Logf("round %d: redis-benchmark %.0f docs/s, LookupInsert %.0f docs/s (%.2f×)", round, c, o, o/c)
				ceil, ours = max(ceil, c), max(ours, o)
			}
			b.ReportMetric(ceil, "ceiling-docs/s")
			b.ReportMetric(ours, "docs/s")
			b.ReportMetric(ours/ceil, "ratio")
		})
	}
	b.Run("naive", func(b *testing.B) {
		b.ReportAllocs()
		nn := min(n, 20000)
		admin.FlushAll(ctx)
		s := openRedis(b, RedisConfig{Addrs: []string{srv.Addr}, Params: benchParams, Namespace: "bench"})
		ours1 := parallelInsert(b, s, benchDocs(nn*4, 9, false), 1, 64)
		c := redis.NewClient(&redis.Options{Addr: srv.Addr})
		defer c.Close()
		docs := benchDocs(nn, 10, false)
		start := time.Now()
		for i := range docs {
			if _, err := naiveInsert(ctx, c, &docs[i]); err != nil {
				b.Fatal(err)
			}
		}
		naive := float64(nn) / time.Since(start).Seconds()
		b.Logf("one worker each: LookupInsert (batch 64) %.0f docs/s, naive %.0f docs/s (%.1f×)", ours1, naive, ours1/naive)
		b.ReportMetric(naive, "naive-docs/s")
		b.ReportMetric(ours1, "docs/s")
		b.ReportMetric(ours1/naive, "ratio")
	})
}

var rpsRE = regexp.MustCompile(`([0-9.]+) requests per second`)

// ceilingRate runs redis-benchmark with LookupInsert's script and argument
// shape (batch documents per call) and returns its best documents/s over
// a few client and pipeline settings.
func ceilingRate(tb testing.TB, s *Redis, srv *redistest.Server, docs, batch int) float64 {
	tb.Helper()
	args := []string{"evalsha", s.scripts.lookupInsert.Hash(), "2", s.clock[0], s.prefix[0] + "zbench"}
	for _, a := range append(s.header(0, sweepBudget), 0, 2) { // no time budget, the round's only call
		args = append(args, fmt.Sprint(a))
	}
	for range batch {
		// id idg flags features keys ops, as lookupInsertSingle sends
		// them (features: a keys record's length, delete.go, which
		// travels in the features record; keys empty): an
		// op is 12 bytes (8 hex digits of group, 4 bytes of field), the
		// width of the 12 digits redis-benchmark puts for __rand_int__.
		// The id's group is random: most groups are outside the store's
		// range, which costs the script the same.
		args = append(args, "doc:__rand_int__", "__rand_int__", "0", strings.Repeat("k", 2+8*benchParams.Bands+37), "",
			strings.Repeat("__rand_int__", benchParams.Bands))
	}
	best := 0.0
	for _, cp := range [][2]int{{4, 1}, {8, 4}, {50, 16}} {
		requests := docs / batch
		cmd := exec.Command("redis-benchmark", append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(srv.Port),
			"-n", strconv.Itoa(requests), "-c", strconv.Itoa(cp[0]), "-P", strconv.Itoa(cp[1]), "-r", "2147483647", "-q"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			tb.Fatalf("redis-benchmark: %v\n%s", err, out)
		}
		m := rpsRE.FindAllSubmatch(out, -1)
		if len(m) == 0 {
			tb.Fatalf("redis-benchmark: no rate in %q", out)
		}
		rps, _ := strconv.ParseFloat(string(m[len(m)-1][1]), 64)
		best = max(best, rps*float64(batch))
	}
	if errs := strings.Count(srv.Log(), "Error"); errs > 0 {
		tb.Logf("server log has %d errors", errs)
	}
	return best
}

// BenchmarkRedisMemory inserts NEARDUP_MEM_DOCS documents (default
// 1,000,000) and reports Redis memory per (band, document) entry: the
// growth of INFO used_memory divided by documents × 9, with 9-band
// documents only (ids of 16 bytes, no SimHash, digest or features), again
// with SimHash, I-Match and 100-byte features, and with 50 random anchors
// (B/anchor: the passage table's sampled MEMORY USAGE per anchor entry).
// Run with -benchtime=1x -timeout=30m.
func BenchmarkRedisMemory(b *testing.B) {
	n := envInt("NEARDUP_MEM_DOCS", 1000000)
	srv := redistest.Start(b, redistest.Options{})
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer admin.Close()
	ctx := context.Background()
	for _, sh := range []struct {
		name    string
		full    bool
		anchors int
	}{{"bands", false, 0}, {"bands+simhash+imatch+features100", true, 0}, {"bands+anchors50", false, 50}} {
		b.Run(sh.name, func(b *testing.B) {
			b.ReportAllocs()
			admin.FlushAll(ctx)
			before := infoInt(b, admin, "memory", "used_memory")
			s := openRedis(b, RedisConfig{Addrs: []string{srv.Addr}, Params: benchParams, Namespace: "mem", Capacity: n})
			const chunk = 100000
			rate := 0.0
			for lo := 0; lo < n; lo += chunk {
				docs := benchDocs(min(chunk, n-lo), uint64(lo/chunk+1), sh.full)
				rate = parallelInsert(b, s, withRandomAnchors(docs, sh.anchors, uint64(lo)), 4, 64)
			}
			after := infoInt(b, admin, "memory", "used_memory")
			perDoc := float64(after-before) / float64(n)
			b.ReportMetric(perDoc/float64(benchParams.Bands), "B/entry")
			b.ReportMetric(perDoc, "B/doc")
			b.Logf("%d documents: used_memory %d → %d bytes (%.1f MB), %.1f B/doc, %.1f B per (band, doc); last chunk %.0f docs/s",
				n, before, after, float64(after-before)/1e6, perDoc, perDoc/float64(benchParams.Bands), rate)
			for kind, v := range memoryByKind(b, admin, "mem:v8:{0}") {
				b.Logf("  keys %-2s %8d keys  %6.1f B/doc (sampled MEMORY USAGE)", kind, v.keys, v.bytes/float64(n))
				if kind == "p" && sh.anchors > 0 {
					b.ReportMetric(v.bytes/float64(n*sh.anchors), "B/anchor")
				}
			}
		})
	}
}

type kindUsage struct {
	keys  int
	bytes float64
}

// memoryByKind estimates the memory of each key kind (b, i, m, f, x; p for
// the passage table's bucket hashes) by MEMORY USAGE over a sample of
// keys, scaled to the kind's key count.
func memoryByKind(tb testing.TB, c *redis.Client, prefix string) map[string]kindUsage {
	ctx := context.Background()
	counts := map[string]int{}
	sample := map[string][]string{}
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		kind := k[len(prefix):][:1]
		if kind == "b" && strings.Contains(k, fmt.Sprintf(":%d:", benchParams.passageTable())) {
			kind = "p"
		}
		counts[kind]++
		if len(sample[kind]) < 2000 {
			sample[kind] = append(sample[kind], k)
		}
	}
	out := map[string]kindUsage{}
	for kind, keys := range sample {
		var sum int64
		for _, k := range keys {
			sum += c.MemoryUsage(ctx, k, 0).Val()
		}
		out[kind] = kindUsage{counts[kind], float64(sum) / float64(len(keys)) * float64(counts[kind])}
	}
	return out
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkCommonKeys compares, on one redis-server, the server time per
// document of a stream whose every page carries one site template (the
// same 40 anchors and 3 of its 9 band keys, a template's common keys once
// common_docs pages hold them) with a stream of distinct pages (the same
// numbers of random keys), at common_docs 3, and the longest script call
// of each (SLOWLOG). The bound: the template stream within 1.5× of
// the distinct one on both.
//
//	NEARDUP_BENCH_DOCS=20000 go test ./index -run '^$' -bench CommonKeys -benchtime 1x
func BenchmarkCommonKeys(b *testing.B) {
	n := envInt("NEARDUP_BENCH_DOCS", 20000)
	addr := redistest.StartServer(b)
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	ctx := context.Background()
	template := withRandomAnchors(benchDocs(1, 99, false), 40, 99)[0]
	stream := func(shared bool, seed uint64) []Entry {
		docs := withRandomAnchors(benchDocs(n, seed, false), 10, seed)
		if !shared {
			return withRandomAnchors(benchDocs(n, seed, false), 50, seed)
		}
		for i := range docs {
			docs[i].Anchors = append(docs[i].Anchors, template.Anchors...)
			copy(docs[i].Bands[:3], template.Bands[:3])
		}
		return docs
	}
	var perDoc, longest [2]float64
	for k, shared := range []bool{false, true} {
		name := map[bool]string{false: "distinct", true: "template"}[shared]
		b.Run(name, func(b *testing.B) {
			for range b.N {
				s := openRedis(b, RedisConfig{Addrs: []string{addr}, Params: benchParams, Namespace: fmt.Sprint("ck", rand.Uint64()), CommonDocs: 3})
				docs := stream(shared, rand.Uint64())
				admin.ConfigResetStat(ctx)
				admin.ConfigSet(ctx, "slowlog-log-slower-than", "0")
				admin.ConfigSet(ctx, "slowlog-max-len", "1000000")
				admin.SlowLogReset(ctx)
				parallelInsert(b, s, docs, 1, 64)
				_, usec := scriptStats(b, admin)
				logs, err := admin.SlowLogGet(ctx, -1).Result()
				if err != nil {
					b.Fatal(err)
				}
				var max time.Duration
				for _, l := range logs {
					if len(l.Args) > 0 && strings.EqualFold(l.Args[0], "evalsha") {
						max = maxDur(max, l.Duration)
					}
				}
				perDoc[k], longest[k] = float64(usec)/float64(n), float64(max.Microseconds())
				b.ReportMetric(perDoc[k], "server-µs/doc")
				b.ReportMetric(longest[k], "longest-call-µs")
			}
		})
	}
	if perDoc[0] > 0 && longest[0] > 0 {
		b.Logf("template / distinct: server time per document %.2f×, longest script call %.2f×", perDoc[1]/perDoc[0], longest[1]/longest[0])
	}
}

func maxDur(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}
