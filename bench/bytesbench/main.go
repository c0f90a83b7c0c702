// Command bytesbench measures what a stored document costs as the index
// grows: it streams a corpus (real text by default; see bench/corpus)
// through scan's path (JSON lines → consumer.Files → pipeline) at a
// profile's defaults, into the memory index or a Redis server, and at each
// checkpoint of -at prints, over the documents since the previous one, the
// documents/s, the CPU per document of neardup's process (getrusage) and
// of redis-server (INFO cpu), the script calls (INFO commandstats) with
// redis-server's CPU per call and the distribution of their durations
// (SLOWLOG of a server bytesbench started, which logs the calls over
// -slowlog µs: p50, p99, the longest and the count over 20 ms, over all
// calls); and Redis's used_memory per stored document so far. A second
// table, "inside Redis", gives per window the bucket operations per
// document (bands, SimHash blocks and distinct anchors of the documents
// that entered the buckets), the Redis commands per document by command
// (INFO commandstats, which counts the commands scripts run), and the
// time of the script calls against that of the commands they ran (the
// rest is Lua). With Redis, after the stream, the plain-command floor
// (floor.go): a redis-server of bytesbench's own filled to each
// checkpoint's key count in turn takes pipelined plain HGET and HSETNX,
// and the growth table prints per window neardup and redis-server CPU per
// document, the floor per document (bucket ops × a plain command's CPU),
// redis-server's ratio to it, the script calls over 20 ms and the bytes
// per document, with the last window against the second and the first. At
// the end: events by kind, dead letters by reason, precision and recall
// against the corpus's ground truth, the bytes of the stored features and
// verdicts, the share of each kind of key, and any "Slow script" line of
// redis-server's log.
//
//	go run ./bench/bytesbench -index local-redis -docs 100000 -at 20000,80000,100000
//	go run ./bench/bytesbench -corpus generated -index local-redis -docs 100000
//	go run ./bench/bytesbench -corpus corpus.jsonl -index redis://127.0.0.1:6379
//
// local-redis starts a redis-server from PATH on a free port (persistence
// off, its log and SLOWLOG kept); a redis:// server must be one of its
// own (the bytesbench namespace is flushed from it first). Not part of CI.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/bench/corpus"
	"github.com/neardup/neardup/bench/servebench"
	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/consumer"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/pipeline"
	"github.com/neardup/neardup/sketch"
)

func main() {
	spec := flag.String("corpus", "real", "the documents: "+corpus.Spec)
	n := flag.Int("docs", 100000, "documents to store (of a built corpus; a file's are all read)")
	data := flag.String("data", "", "the shared data folder (default: $NEARDUP_DATA, else shared/data beside the repository)")
	profile := flag.String("profile", "web", "profile: web, books or sentence")
	ixURL := flag.String("index", "memory", "memory, local-redis (a redis-server of its own) or redis://host:port")
	at := flag.String("at", "", "checkpoints, comma-separated document counts (default: 20% of the documents, 80%, all)")
	set := flag.String("set", "", "configuration overrides, key=value,key=value")
	slow := flag.Int("slowlog", 1000, "local-redis: slowlog-log-slower-than, µs (calls faster than it count as below it)")
	floorN := flag.Int("floor", 400000, "with Redis: plain commands the floor runs at each checkpoint (0: no floor)")
	genAt := flag.Int("generation-at", 0, "with index.retention set: the index's clock starts at the start of the previous generation and moves one index.generation on when this many documents are out, so the later documents go to a second generation (0: the index's clock is time.Now)")
	flag.Parse()
	if err := run(*spec, *n, *data, *profile, *ixURL, *at, *set, *slow, *genAt, *floorN); err != nil {
		fmt.Fprintln(os.Stderr, "bytesbench:", err)
		os.Exit(1)
	}
}

func run(spec string, n int, data, profile, ixURL, at, set string, slowUS, genAt, floorN int) error {
	ctx := context.Background()
	c, err := corpus.Open(spec, n, 0, data)
	if err != nil {
		return err
	}
	n = len(c.Docs)
	checks, err := checkpoints(at, n)
	if err != nil {
		return err
	}
	path, cleanup, err := corpusFile(spec, c)
	if err != nil {
		return err
	}
	defer cleanup()

	if slowUS < 0 {
		return fmt.Errorf("-slowlog %d: want ≥ 0 µs", slowUS)
	}
	srv := server{slowAt: -1} // unknown: a server bytesbench did not start
	if ixURL == "local-redis" {
		var stop func()
		srv, stop, err = startRedis(ctx, slowUS)
		if err != nil {
			return err
		}
		defer stop()
		ixURL = srv.url
	}
	cfg, err := loadConfig(profile, ixURL, set)
	if err != nil {
		return err
	}
	rc := srv.rc
	prefix := "bytesbench:v" + strconv.Itoa(index.SchemaVersion) + ":{0}"
	if !index.IsMemory(cfg.Index.URL) && rc == nil {
		opt, err := redis.ParseURL(cfg.Index.URL)
		if err != nil {
			return err
		}
		rc = redis.NewClient(opt)
		defer rc.Close()
		if err := flush(ctx, rc); err != nil {
			return err
		}
	}
	before, err := usage(ctx, rc)
	if err != nil {
		return err
	}
	var pc pipeline.Config
	var ix index.Store
	var nextGen func()
	if genAt > 0 {
		pc, ix, nextGen, err = openTwoGenerations(ctx, &cfg)
	} else {
		pc, ix, err = pipeline.OpenStore(ctx, &cfg, "bytesbench")
	}
	if err != nil {
		return err
	}
	defer ix.Close()
	pp, err := pipeline.New(pc, nil)
	if err != nil {
		return err
	}
	ops := &opCounter{simTables: pp.IndexParams().SimHashK + 1}
	pl, err := pipeline.New(pc, counted(ix, ops))
	if err != nil {
		return err
	}
	st := c.Stats()
	fmt.Printf("bytesbench: corpus %s: %v\nprofile %s (%d×%d bands, max_shingles %d), index %s, index.timeout %v, index.batch %d, GOMAXPROCS=%d, %s\n\n",
		c.Name, st, profile, pc.Bands, pc.Rows, cfg.Sketch.MaxShingles, cfg.Index.URL, cfg.Index.Timeout, cfg.Index.Batch,
		runtime.GOMAXPROCS(0), runtime.Version())

	ids := sampleIDs(c.Docs, 2000)
	w := newWindow(rc, srv.slowAt)
	w.ops, w.prefix = ops, prefix
	if st, ok := ix.(interface{ Stats() index.Stats }); ok {
		w.stats = st.Stats
		w.cands0 = st.Stats().Candidates
	}
	fmt.Println("| documents | docs/s | neardup µs/doc | redis-server µs/doc | both | script calls | redis-server µs/call | call p50 | call p99 | longest call | calls > 20 ms | used_memory B/doc (all so far) | candidates/doc |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	tally := newTally()
	done, next := 0, 0
	read := (&consumer.Files{Paths: []string{path}, MaxBytes: cfg.Sketch.MaxBytes}).Run
	err = pl.Stream(ctx, read, func(o pipeline.Output) error {
		done++
		tally.add(o)
		if done == genAt {
			nextGen()
		}
		if next < len(checks) && done == checks[next] {
			next++
			return w.report(ctx, done, before)
		}
		return nil
	})
	if err != nil {
		return err
	}
	w.printInside()
	if rc != nil && floorN > 0 {
		if err := w.printGrowth(ctx, int64(floorN)); err != nil {
			return err
		}
	}
	sc := c.Score(tally.pairs)
	fmt.Printf("\nevents %v; dead letters %v\n", tally.kinds, tally.dead)
	fmt.Printf("precision %.4f (%d of %d reported pairs), recall %.4f (%d of %d copies)\n",
		sc.Precision, sc.Correct, sc.Pairs, sc.Recall, sc.Found, sc.Copies)
	if err := storedPerDocument(ctx, ix, ids, pc.Bands); err != nil {
		return err
	}
	pl = nil
	after, err := usage(ctx, rc)
	if err != nil {
		return err
	}
	what := "Go heap (runtime.MemStats.HeapAlloc after GC, index and corpus)"
	if rc != nil {
		what = "Redis used_memory"
	}
	fmt.Printf("%s: %.1f MB → %.1f MB: %.0f bytes per document\n", what, float64(before)/1e6, float64(after)/1e6, float64(after-before)/float64(n))
	if srv.logPath != "" {
		slow, first, err := slowScripts(srv.logPath)
		if err != nil {
			return err
		}
		fmt.Printf("redis-server log: %d \"Slow script\" lines%s\n", slow, first)
	}
	if rc != nil {
		if err := keysSections(ctx, rc, prefix, pc.Bands); err != nil {
			return err
		}
		return byKind(ctx, rc, prefix, n)
	}
	runtime.KeepAlive(ix)
	return nil
}

// corpusFile returns the path of c as JSON lines: spec itself when it is
// a .jsonl file, else a temporary file cleanup removes.
func corpusFile(spec string, c *corpus.Corpus) (path string, cleanup func(), err error) {
	if strings.HasSuffix(spec, ".jsonl") {
		return spec, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "bytesbench")
	if err != nil {
		return "", nil, err
	}
	path = filepath.Join(dir, "corpus.jsonl")
	if err := c.Write(path); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return path, func() { os.RemoveAll(dir) }, nil
}

// server is the Redis server of a run, as far as bytesbench knows it.
type server struct {
	url     string
	rc      *redis.Client // nil for the memory index
	logPath string        // its log, when bytesbench started it
	slowAt  time.Duration // SLOWLOG's threshold; < 0 unknown
}

// startRedis starts a redis-server of the run's own (-index local-redis)
// that logs slow calls of slowUS µs or more; stop stops it and removes
// its log.
func startRedis(ctx context.Context, slowUS int) (srv server, stop func(), err error) {
	dir, err := os.MkdirTemp("", "bytesbench-redis")
	if err != nil {
		return srv, nil, err
	}
	logPath := filepath.Join(dir, "redis.log")
	addr, client, stopServer, err := servebench.StartRedis(ctx, "--logfile", logPath,
		"--slowlog-log-slower-than", strconv.Itoa(slowUS), "--slowlog-max-len", "1000000")
	if err != nil {
		os.RemoveAll(dir)
		return srv, nil, err
	}
	srv = server{url: "redis://" + addr, rc: client, logPath: logPath, slowAt: time.Duration(slowUS) * time.Microsecond}
	return srv, func() { stopServer(); os.RemoveAll(dir) }, nil
}

// loadConfig loads the configuration of profile with index.url ixURL, the
// namespace bytesbench and the key=value overrides of -set.
func loadConfig(profile, ixURL, set string) (config.Config, error) {
	o := &config.Overrides{}
	o.Add("profile", profile)
	o.Add("index.url", ixURL)
	o.Add("index.namespace", "bytesbench")
	for _, kv := range strings.Split(set, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			o.Add(k, v)
		}
	}
	return config.Load("", nil, o)
}

// sampleIDs is a reservoir sample of up to k of the documents' ids.
func sampleIDs(docs []corpus.Doc, k int) []string {
	ids := make([]string, 0, k)
	rng := rand.New(rand.NewPCG(1, 1))
	for i, d := range docs {
		if len(ids) < cap(ids) {
			ids = append(ids, d.ID)
		} else if j := rng.IntN(i + 1); j < len(ids) {
			ids[j] = d.ID
		}
	}
	return ids
}

// tally counts a run's outputs: events by kind, dead letters by reason
// and the reported (duplicate, duplicate_of) pairs.
type tally struct {
	kinds, dead map[string]int
	pairs       map[[2]string]bool
}

func newTally() *tally {
	return &tally{kinds: map[string]int{}, dead: map[string]int{}, pairs: map[[2]string]bool{}}
}

func (t *tally) add(o pipeline.Output) {
	if e := o.Event; e != nil {
		t.kinds[e.Kind]++
		if e.DuplicateOf != "" {
			t.pairs[[2]string{e.ID, e.DuplicateOf}] = true
		}
	}
	if o.Dead != nil {
		t.dead[string(o.Dead.Reason)]++
	}
}

// storedPerDocument prints what the index keeps per document, features
// and verdict record, measured on the stored documents of ids.
func storedPerDocument(ctx context.Context, ix index.Store, ids []string, bands int) error {
	probe := make([]index.Entry, len(ids))
	for i, id := range ids {
		probe[i] = index.Entry{ID: id, Bands: make([]uint64, bands)}
	}
	found, err := ix.Lookup(ctx, probe) // a stored id's Seq
	if err != nil {
		return err
	}
	seqs := make([]uint64, len(found))
	for i, r := range found {
		if r.Replay {
			seqs[i] = r.Seq
		}
	}
	feats, err := ix.Features(ctx, seqs)
	if err != nil {
		return err
	}
	verdicts, err := ix.Verdicts(ctx, seqs)
	if err != nil {
		return err
	}
	copies := 0 // exact copies keep no features (index/doc.go, "Exact copies")
	for _, f := range feats {
		if len(f) == 0 {
			copies++
		}
	}
	fmt.Printf("stored per document (sample of %d ids, %d of them stored without features): features %.0f B, verdict record %.0f B\n",
		len(ids), copies, mean(feats), mean(verdicts))
	return featureSections(feats)
}

// openTwoGenerations opens the index as pipeline.OpenStore does, with a
// clock that starts at the start of the previous generation
// (index.generation) and runs on from there; next moves it one generation
// on. The clock never runs ahead of time.Now, and with index.retention
// longer than a generation nothing written expires during the run.
func openTwoGenerations(ctx context.Context, c *config.Config) (pc pipeline.Config, ix index.Store, next func(), err error) {
	if c.Index.Retention <= 0 {
		return pc, nil, nil, fmt.Errorf("-generation-at needs index.retention")
	}
	base := time.Now()
	L := int64(c.Index.Generation / time.Second)
	var start atomic.Int64
	start.Store((base.Unix()/L - 1) * L)
	clock := func() time.Time { return time.Unix(start.Load(), 0).Add(time.Since(base)) }
	pc, ix, err = pipeline.OpenIndex(ctx, c, "bytesbench", index.Options{Clock: clock})
	return pc, ix, func() { start.Add(L) }, err
}

// checkpoints parses -at (default: 20%, 80% and all of n).
func checkpoints(at string, n int) ([]int, error) {
	if at == "" {
		return slices.Compact([]int{max(n/5, 1), max(n*4/5, 1), n}), nil
	}
	var out []int
	for _, s := range strings.Split(at, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k <= 0 || k > n || len(out) > 0 && k <= out[len(out)-1] {
			return nil, fmt.Errorf("-at %q: want increasing document counts from 1 to %d", at, n)
		}
		out = append(out, k)
	}
	return out, nil
}

// window measures the span since the previous checkpoint.
type window struct {
	rc        *redis.Client
	slowAt    time.Duration // SLOWLOG's threshold; < 0 unknown
	t0        time.Time
	docs0     int
	cpu0, rc0 time.Duration
	calls0    int64
	// stats reads the index's counters (nil when it keeps none); the
	// window prints the candidates per document it returned.
	stats  func() index.Stats
	cands0 uint64
	// ops counts the bucket operations (nil: none counted); prefix is
	// the index's key prefix (bucket hashes: prefix+"b").
	ops    *opCounter
	ops0   uint64
	prefix string
	cmds0  map[string][2]float64
	rows   []row
}

// row is what a window measured, for the tables printed after the stream.
type row struct {
	from, to             int
	neardup, redis       float64 // CPU µs per document
	ops                  float64 // bucket ops per document
	in                   inside
	over20               int
	longest              time.Duration
	bytesPerDoc          float64
	shape                keyShape
	haveRedis, haveShape bool
}

func newWindow(rc *redis.Client, slowAt time.Duration) *window {
	w := &window{rc: rc, slowAt: slowAt, t0: time.Now(), cpu0: servebench.ProcessCPU()}
	if rc != nil {
		w.rc0, _ = servebench.RedisCPU(rc)
		w.calls0, _ = scriptCalls(context.Background(), rc)
		w.cmds0, _ = cmdStats(context.Background(), rc)
		rc.SlowLogReset(context.Background())
	}
	return w
}

// report prints one row and starts the next window.
func (w *window) report(ctx context.Context, done int, before int64) error {
	el, cpu := time.Since(w.t0), servebench.ProcessCPU()
	k := float64(done - w.docs0)
	ours := cpu - w.cpu0
	line := fmt.Sprintf("| %d–%d | %.0f | %.0f |", w.docs0, done, k/el.Seconds(), float64(ours.Microseconds())/k)
	rw := row{from: w.docs0, to: done, neardup: float64(ours.Microseconds()) / k}
	if w.ops != nil {
		o, _ := w.ops.read()
		rw.ops = float64(o-w.ops0) / k
		w.ops0 = o
	}
	w.t0, w.cpu0, w.docs0 = time.Now(), cpu, done
	cands := "–"
	if w.stats != nil {
		c := w.stats().Candidates
		cands = fmt.Sprintf("%.2f", float64(c-w.cands0)/k)
		w.cands0 = c
	}
	if w.rc == nil {
		fmt.Println(line + " – | – | – | – | – | – | – | – | – | " + cands + " |")
		w.rows = append(w.rows, rw)
		return nil
	}
	rcpu, _ := servebench.RedisCPU(w.rc)
	cs, err := cmdStats(ctx, w.rc)
	if err != nil {
		return err
	}
	calls, err := scriptCalls(ctx, w.rc)
	if err != nil {
		return err
	}
	slow, err := w.rc.SlowLogGet(ctx, -1).Result()
	if err != nil {
		return err
	}
	w.rc.SlowLogReset(ctx)
	var logged []time.Duration
	for _, s := range slow {
		if len(s.Args) > 0 && (strings.EqualFold(s.Args[0], "evalsha") || strings.EqualFold(s.Args[0], "eval")) {
			logged = append(logged, s.Duration)
		}
	}
	d := callDist(logged, calls-w.calls0, w.slowAt)
	used, err := usage(ctx, w.rc)
	if err != nil {
		return err
	}
	perCall := "–"
	if n := calls - w.calls0; n > 0 {
		perCall = fmt.Sprintf("%.0f", float64((rcpu-w.rc0).Microseconds())/float64(n))
	}
	fmt.Printf("%s %.0f | %.0f | %d | %s | %s | %s | %v | %d | %.0f | %s |\n", line, float64((rcpu-w.rc0).Microseconds())/k,
		float64((ours+rcpu-w.rc0).Microseconds())/k, calls-w.calls0, perCall, d.p50, d.p99,
		d.max.Round(100*time.Microsecond), d.over20, float64(used-before)/float64(done), cands)
	rw.haveRedis, rw.redis = true, float64((rcpu-w.rc0).Microseconds())/k
	rw.in = insideOf(w.cmds0, cs, k)
	rw.over20, rw.longest, rw.bytesPerDoc = d.over20, d.max, float64(used-before)/float64(done)
	// What the floor needs of this checkpoint, read after the window's
	// figures and left out of the next one's.
	if w.prefix != "" {
		if rw.shape, err = sampleShape(ctx, w.rc, w.prefix); err != nil {
			return err
		}
		rw.haveShape = true
	}
	w.rows = append(w.rows, rw)
	w.rc0, _ = servebench.RedisCPU(w.rc)
	w.calls0, _ = scriptCalls(ctx, w.rc)
	w.cmds0, _ = cmdStats(ctx, w.rc)
	w.rc.SlowLogReset(ctx)
	return nil
}

// printInside prints, per window, the bucket ops and Redis commands per
// document and how the script calls' time splits.
func (w *window) printInside() {
	if w.rc == nil || len(w.rows) == 0 {
		return
	}
	fmt.Println("\ninside Redis (INFO commandstats; µs are the server's wall time in the command, Lua is the script calls' time outside the commands they ran):")
	fmt.Println("\n| documents | bucket ops/doc | Redis commands/doc | commands per bucket op | script calls/doc | script µs/doc | in commands | Lua | Lua share | commands per document (µs per call) |")
	fmt.Println("|---|--:|--:|--:|--:|--:|--:|--:|--:|---|")
	for _, r := range w.rows {
		in := r.in
		var top []string
		for i, c := range in.perDoc {
			if i == 8 {
				break
			}
			top = append(top, fmt.Sprintf("%s %.2f (%.2f)", strings.ToUpper(c.name), c.calls, c.usc))
		}
		lua := in.scriptUS - in.nestedUS
		perOp := "–"
		if r.ops > 0 {
			perOp = fmt.Sprintf("%.2f", in.commands/r.ops)
		}
		fmt.Printf("| %d–%d | %.1f | %.1f | %s | %.3f | %.0f | %.0f | %.0f | %.0f %% | %s |\n", r.from, r.to, r.ops, in.commands, perOp,
			in.scriptCalls, in.scriptUS, in.nestedUS, lua, 100*lua/max(in.scriptUS, 1), strings.Join(top, ", "))
	}
}

// printGrowth measures the plain-command floor at each checkpoint's key
// shape (floor.go) and prints the growth table.
func (w *window) printGrowth(ctx context.Context, n int64) error {
	f, err := newFloorRig(ctx)
	if err != nil {
		return err
	}
	defer f.stop()
	fmt.Printf("\nthe plain-command floor: a redis-server of its own, filled to each checkpoint's keys (hashes of the index's mean bucket-hash fields), %d pipelined plain commands (HGET of a field present, HSETNX of a new one, alternately; %d connections, %d a round trip); floor per document = bucket ops per document × the CPU of one command\n", n, floorClients, floorPipe)
	fmt.Println("\n| documents | keys | fields per bucket hash | plain command µs | bucket ops/doc | floor µs/doc | neardup µs/doc | redis-server µs/doc | redis-server / floor | neardup + redis-server | script calls > 20 ms | longest call | used_memory B/doc |")
	fmt.Println("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	var both []float64
	for _, r := range w.rows {
		if !r.haveShape {
			continue
		}
		fc, err := f.measure(ctx, r.shape, n)
		if err != nil {
			return err
		}
		us := float64(fc.perCmd.Nanoseconds()) / 1e3
		floor := r.ops * us
		fmt.Printf("| %d–%d | %d | %.1f | %.2f | %.1f | %.0f | %.0f | %.0f | **%.2f×** | %.0f | %d | %v | %.0f |\n", r.from, r.to, r.shape.keys, r.shape.fields, us,
			r.ops, floor, r.neardup, r.redis, r.redis/max(floor, 1e-9), r.neardup+r.redis, r.over20, r.longest.Round(100*time.Microsecond), r.bytesPerDoc)
		both = append(both, r.neardup+r.redis)
	}
	if len(both) >= 3 {
		last := both[len(both)-1]
		fmt.Printf("\nneardup + redis-server, the last window against the second: %.2f×, against the first: %.2f×\n", last/both[1], last/both[0])
	}
	return nil
}

// scriptCalls returns the script calls (EVALSHA and EVAL) the server has
// served (INFO commandstats).
func scriptCalls(ctx context.Context, rc *redis.Client) (int64, error) {
	info, err := rc.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, err
	}
	var n int64
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || k != "cmdstat_evalsha" && k != "cmdstat_eval" {
			continue
		}
		for _, f := range strings.Split(v, ",") {
			if c, ok := strings.CutPrefix(f, "calls="); ok {
				m, err := strconv.ParseInt(c, 10, 64)
				if err != nil {
					return 0, fmt.Errorf("INFO commandstats %s: %w", k, err)
				}
				n += m
			}
		}
	}
	return n, nil
}

// dist is a distribution of script call durations.
type dist struct {
	p50, p99 string // a duration, or "< threshold" when it fell below SLOWLOG's
	max      time.Duration
	over20   int
}

// callDist is the distribution of calls script calls of which SLOWLOG
// logged those in logged: the others took less than slowAt (< 0:
// unknown, a server bytesbench did not start). A percentile that falls
// among the unlogged calls reads "< slowAt".
func callDist(logged []time.Duration, calls int64, slowAt time.Duration) dist {
	slices.Sort(logged)
	var d dist
	for _, l := range logged {
		if l > 20*time.Millisecond {
			d.over20++
		}
	}
	if len(logged) > 0 {
		d.max = logged[len(logged)-1]
	}
	below := calls - int64(len(logged)) // calls not logged, all faster than slowAt
	pct := func(p float64) string {
		if calls <= 0 {
			return "–"
		}
		r := int64(math.Ceil(p * float64(calls))) // rank from 1, fastest first
		if r <= below {
			if slowAt < 0 {
				return "?"
			}
			return "< " + slowAt.String()
		}
		i := min(int(r-below-1), len(logged)-1)
		return logged[i].Round(100 * time.Microsecond).String()
	}
	d.p50, d.p99 = pct(0.50), pct(0.99)
	return d
}

// slowScripts counts redis-server's "Slow script" log lines and returns
// the first.
func slowScripts(path string) (int, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	n, first := 0, ""
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.Contains(s.Text(), "Slow script") {
			if n == 0 {
				first = ", the first: " + strings.TrimSpace(s.Text())
			}
			n++
		}
	}
	return n, first, s.Err()
}

func flush(ctx context.Context, rc *redis.Client) error {
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
			return nil
		}
	}
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

// featureSections prints the mean bytes of each section of stored
// features (sketch.EncodedSections), over the documents that keep any.
func featureSections(feats [][]byte) error {
	var sum sketch.SectionSizes
	k, shingles, anchors, tokens := 0, 0, 0, 0
	var f sketch.Features
	for _, b := range feats {
		if len(b) == 0 {
			continue // an exact copy, or a document removed meanwhile
		}
		sz, err := sketch.EncodedSections(b)
		if err != nil {
			return err
		}
		if err := f.UnmarshalBinary(b); err != nil {
			return err
		}
		shingles, anchors, tokens = shingles+len(f.Shingles), anchors+len(f.Passage.Anchors), tokens+len(f.Passage.Starts)
		sum.Header += sz.Header
		sum.Shingles += sz.Shingles
		sum.Unique += sz.Unique
		sum.Text += sz.Text
		sum.Fingerprints += sz.Fingerprints
		sum.Anchors += sz.Anchors
		sum.Offsets += sz.Offsets
		sum.Sentences += sz.Sentences
		k++
	}
	k = max(k, 1)
	fmt.Printf("\nper document with features: %.0f shingles kept, %.0f passage anchors, %.0f tokens with offsets\n",
		float64(shingles)/float64(k), float64(anchors)/float64(k), float64(tokens)/float64(k))
	fmt.Println("\n| stored features, by section | bytes per document with features |")
	fmt.Println("|---|--:|")
	for _, r := range []struct {
		name string
		n    int
	}{{"header (version, flags, tokens, content digest, SimHash, I-Match)", sum.Header}, {"shingle sample", sum.Shingles},
		{"unique words", sum.Unique}, {"text", sum.Text}, {"passage fingerprints", sum.Fingerprints},
		{"passage anchors", sum.Anchors}, {"token offsets", sum.Offsets}, {"sentences", sum.Sentences}} {
		fmt.Printf("| %s | %.1f |\n", r.name, float64(r.n)/float64(k))
	}
	return nil
}

// keysSections prints the mean bytes of each part of the keys records,
// over up to 2,000 of them (index.KeysRecordSizes): those the features
// records carry (index.CarriedKeys), then those of their own (exact
// copies').
func keysSections(ctx context.Context, rc *redis.Client, prefix string, bands int) error {
	var sum [4]int
	k := 0
	for _, kind := range []string{"f", "k"} {
		if err := keysOf(ctx, rc, prefix+kind+"*", kind == "f", bands, &sum, &k); err != nil {
			return err
		}
	}
	k = max(k, 1)
	fmt.Printf("\n| keys records (%d), by part | bytes per document |\n|---|--:|\n", k)
	for i, name := range []string{"header", "band keys", "SimHash, I-Match and content digests", "anchor keys"} {
		fmt.Printf("| %s | %.1f |\n", name, float64(sum[i])/float64(k))
	}
	return nil
}

// keysOf adds to sum the parts of the keys records in the hashes that
// match pattern, up to *k = 2,000 records; carried says they are features
// records.
func keysOf(ctx context.Context, rc *redis.Client, pattern string, carried bool, bands int, sum *[4]int, k *int) error {
	var cursor uint64
	for *k < 2000 {
		keys, next, err := rc.Scan(ctx, cursor, pattern, 1000).Result()
		if err != nil {
			return err
		}
		for _, key := range keys {
			vals, err := rc.HVals(ctx, key).Result()
			if err != nil {
				return err
			}
			for _, v := range vals {
				rec := []byte(v)
				if carried {
					if rec = index.CarriedKeys(rec); rec == nil {
						continue
					}
				}
				h, b, d, a, err := index.KeysRecordSizes(rec, bands)
				if err != nil {
					return err
				}
				sum[0], sum[1], sum[2], sum[3] = sum[0]+h, sum[1]+b, sum[2]+d, sum[3]+a
				*k++
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
	return nil
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
	names := map[string]string{"b": "band, SimHash and passage-anchor hashes", "i": "ids", "e": "content lane", "x": "I-Match lane",
		"m": "meta records (external ids)", "f": "features (and keys records)", "v": "verdicts", "c": "clock", "k": "keys records (exact copies')",
		"s": "source records (widely copied texts)"}
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
