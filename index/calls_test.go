package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/sketch"
)

// webParams are the web profile's sketch parameters (30×4 bands, k = 3
// SimHash blocks): the most ops a page brings outside its anchors.
var webParams = Params{Hash: "fnv1a64+splitmix64/v1", K: 120, Bands: 30, Rows: 4, Shingle: 5, Seed: 1, SimHashK: 3}

// Calls are cut by ops at maxCallOps, whatever the pages: a batch of 64
// web pages (~80 ops) travels as calls of at most 256 ops, a page with
// the most anchors the sketcher keeps travels alone, and a batch of
// pages without anchors packs 7 to a call.
func TestCallChunksWebPages(t *testing.T) {
	r := &Redis{p: webParams}
	page := func(anchors int) Entry {
		return Entry{Bands: make([]uint64, webParams.Bands), HasSimHash: true, Anchors: make([]uint64, anchors)}
	}
	pages := func(n int, anchors ...int) []Entry {
		var out []Entry
		for i := range n {
			out = append(out, page(anchors[i%len(anchors)]))
		}
		return out
	}
	for _, tt := range []struct {
		name      string
		docs      []Entry
		wantCalls int
	}{
		{"64 web pages", pages(64, 46), 22},            // 80 ops: 3 a call
		{"64 pages without anchors", pages(64, 0), 10}, // 34 ops: 7 a call
		{"largest page alone", pages(3, 10, sketch.MaxAnchors, 10), 3},
		{"two large pages", pages(2, 200, 200), 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			starts := callChunks(tt.docs, DefaultBatch, maxCallOps, r.docOps)
			if len(starts) != tt.wantCalls {
				t.Errorf("%d calls, want %d", len(starts), tt.wantCalls)
			}
			for ci, lo := range starts {
				hi := len(tt.docs)
				if ci+1 < len(starts) {
					hi = starts[ci+1]
				}
				ops := 0
				for i := lo; i < hi; i++ {
					ops += r.docOps(&tt.docs[i])
				}
				if ops > maxCallOps && hi-lo > 1 {
					t.Errorf("call %d: %d documents of %d ops, over %d", ci, hi-lo, ops, maxCallOps)
				}
			}
		})
	}
}

// budgetBackend opens Redis stores whose calls end after budget, each in
// a namespace of its own that starts with ns.
func budgetBackend(addr, ns string, budget time.Duration) backend {
	var n atomic.Int64
	return backend{name: fmt.Sprintf("redis, call budget %v", budget), open: func(t *testing.T, o storeOpts) Store {
		s := openRedis(t, RedisConfig{Addrs: []string{addr}, Namespace: fmt.Sprintf("%s%d", ns, n.Add(1)), Params: o.params,
			CommonDocs: o.commonDocs, MaxCandidates: o.maxCandidates, MaxClockAhead: -1, Capacity: 4096})
		s.callBudget = budget
		return s
	}}
}

// A call that ends on its time budget changes no result: with a budget of
// 1 µs every call decides one document and the calls after it in the
// round trip do nothing, so a batch takes as many round trips as it has
// documents, and every result equals that of calls without a budget, in
// a single caller's stream and with pairs of near-duplicates racing from
// several callers (each sees the other, as without a budget). Look-ups
// (Lookup) cut the same way answer the same and write nothing. No stop
// key outlives its round.
func TestCallBudgetResults(t *testing.T) {
	addr := redistest.StartServer(t)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx := context.Background()
	docs := pairDocs(120, 3)
	run := func(budget time.Duration) (*Redis, []Result, int64) {
		s := budgetBackend(addr, fmt.Sprintf("b%d", budget), budget).open(t, storeOpts{params: pairParams}).(*Redis)
		before := commandCalls(t, c, "evalsha")
		var out []Result
		for lo := 0; lo < len(docs); lo += DefaultBatch {
			res, err := s.LookupInsert(ctx, docs[lo:min(lo+DefaultBatch, len(docs))])
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, res...)
		}
		return s, out, commandCalls(t, c, "evalsha") - before
	}
	sw, whole, wholeCalls := run(-1)
	sc, cut, cutCalls := run(time.Microsecond)
	if !reflect.DeepEqual(whole, cut) {
		for i := range whole {
			if !reflect.DeepEqual(whole[i], cut[i]) {
				t.Fatalf("%s: without a budget %+v, with 1 µs %+v", docs[i].ID, whole[i], cut[i])
			}
		}
	}
	if cutCalls < int64(len(docs)) || cutCalls <= wholeCalls {
		t.Errorf("%d calls with a budget of 1 µs, %d without, for %d documents: want one a document at least", cutCalls, wholeCalls, len(docs))
	}
	t.Logf("%d documents: %d calls without a budget, %d with 1 µs", len(docs), wholeCalls, cutCalls)

	// Look-ups of the same documents under other ids.
	probe := make([]Entry, DefaultBatch)
	for i := range probe {
		probe[i] = docs[i]
		probe[i].ID = "probe/" + docs[i].ID
	}
	keys0 := c.DBSize(ctx).Val()
	var looked [2][]Result
	for i, s := range []*Redis{sw, sc} {
		before := commandCalls(t, c, "evalsha")
		res, err := s.Lookup(ctx, probe)
		if err != nil {
			t.Fatal(err)
		}
		looked[i] = res
		if i == 1 && commandCalls(t, c, "evalsha")-before < int64(len(probe)) {
			t.Errorf("Lookup of %d documents with a 1 µs budget took %d calls", len(probe), commandCalls(t, c, "evalsha")-before)
		}
	}
	if !reflect.DeepEqual(looked[0], looked[1]) {
		t.Errorf("Lookup results differ with a 1 µs budget")
	}
	found := 0
	for _, r := range looked[1] {
		if len(r.Candidates) > 0 || r.Copy != "" || r.IMatch != "" {
			found++
		}
	}
	if found < len(probe)/2 {
		t.Errorf("%d of %d look-ups of stored documents found them", found, len(probe))
	}
	if n := c.DBSize(ctx).Val(); n != keys0 {
		t.Errorf("Lookup changed the key count: %d -> %d", keys0, n)
	}

	runConcurrentPairs(t, budgetBackend(addr, "race", time.Microsecond), 200, 4)

	keys, err := c.Keys(ctx, "*}z*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) > 0 {
		t.Errorf("stop keys left: %v", keys)
	}
}

// The worst script calls the stores at the defaults can meet, on a real
// redis-server: at the default retention (three live generations), every
// bucket a batch reads full in every generation, SimHash buckets at
// MaxSimHashBucket (4,096 near members) and LSH and passage buckets one
// member short of turning common (63), every member a live document.
//
//   - hot SimHash: 14 pages (30 bands, 4 SimHash blocks) whose SimHash
//     buckets are full: each page reads 3 × 4 × 4,096 members, all of
//     them candidates to rank. Cut by ops alone (7 pages a call) a call
//     holds the server for seven such pages, seconds on a loaded machine,
//     past index.timeout's default (5 s); the time budget ends each call
//     after about callBudget and one page, with the same results.
//   - the largest page: 30 bands, 4 SimHash blocks and sketch.MaxAnchors
//     anchors, every bucket full: 3 × (30·63 + 4·4,096 + 1,024·63) =
//     248,352 members read and ~66,000 resolved, in one call of its own.
//
// A page is never split, so one page's work bounds a call from below:
// both stay under half of index.timeout's default, on a loaded machine.
func TestCallWorstCase(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	ctx := context.Background()
	for _, cmd := range [][]any{{"config", "set", "slowlog-log-slower-than", "0"}, {"config", "set", "slowlog-max-len", "100000"}} {
		if err := c.Do(ctx, cmd...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	const (
		retention = 30 * 24 * time.Hour
		gen       = retention / 2
		timeout   = 5 * time.Second // config's index.timeout default
	)
	now := time.Unix(1_800_000_000, 0)
	open := func(ns string, budget time.Duration) *Redis {
		s := openRedis(t, RedisConfig{Addrs: []string{srv.Addr}, Namespace: ns, Params: webParams,
			Retention: retention, Generation: gen, Clock: func() time.Time { return now }, MaxClockAhead: -1,
			ReadTimeout: time.Minute}) // the call durations are measured, not cut
		s.callBudget = budget
		return s
	}
	fp := uint64(0x9e3779b97f4a7c15)
	page := func(id string, anchors int) Entry {
		e := entry(webParams, id, nil)
		e.SimHash, e.HasSimHash = fp, true
		e.Anchors = make([]uint64, anchors)
		for i := range e.Anchors {
			e.Anchors[i] = key(id+"/anchor", i)
		}
		return e
	}
	// calls runs docs in one LookupInsert and returns the results and the
	// durations of its script calls (SLOWLOG), longest first.
	calls := func(s *Redis, docs []Entry) ([]Result, []time.Duration) {
		if err := c.SlowLogReset(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		res, err := s.LookupInsert(ctx, docs)
		if err != nil {
			t.Fatal(err)
		}
		logged, err := c.SlowLogGet(ctx, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		var d []time.Duration
		for _, l := range logged {
			if len(l.Args) > 0 && strings.EqualFold(l.Args[0], "evalsha") {
				d = append(d, l.Duration)
			}
		}
		if len(d) == 0 {
			t.Fatal("no script call in SLOWLOG")
		}
		return res, d
	}

	s0ops := webParams.Bands + webParams.SimHashK + 1
	t.Run("hot SimHash", func(t *testing.T) {
		var docs []Entry
		for i := range 2 * maxCallOps / s0ops {
			docs = append(docs, page(fmt.Sprintf("sim%d", i), 0))
		}
		var results [2][]Result
		var durs [2][]time.Duration
		for i, budget := range []time.Duration{-1, 0} { // none, callBudget
			s := open(fmt.Sprintf("sim%d", i), budget)
			fillHot(t, c, s, docs, false)
			results[i], durs[i] = calls(s, docs)
		}
		if !reflect.DeepEqual(results[0], results[1]) {
			t.Errorf("results differ with the time budget")
		}
		if n := len(results[1][0].Candidates); n != DefaultMaxCandidates {
			t.Errorf("%d candidates of a page in full buckets, want %d", n, DefaultMaxCandidates)
		}
		whole, cut := slowest(durs[0]), slowest(durs[1])
		t.Logf("%d pages: cut by ops only, %d calls, longest %v; with the %v budget, %d calls, longest %v",
			len(docs), len(durs[0]), whole, callBudget, len(durs[1]), cut)
		// That the budget cut the calls shows in their number; their
		// durations are logged, not compared: on a loaded machine one
		// call of either run can wait for the CPU longer than the budget.
		if len(durs[1]) <= len(durs[0]) {
			t.Errorf("the time budget did not cut the calls: %d calls, longest %v, against %d, %v", len(durs[1]), cut, len(durs[0]), whole)
		}
		if cut > timeout/2 {
			t.Errorf("longest call %v, want < %v", cut, timeout/2)
		}
	})

	t.Run("largest page", func(t *testing.T) {
		// For scale: the same page in a new namespace, every bucket new.
		fresh, alone := open("fresh", 0), page("fresh", sketch.MaxAnchors)
		fcpu := redisCPU(t, c)
		_, fd := calls(fresh, []Entry{alone})
		t.Logf("the largest page in new buckets (%d ops): a call of %v, redis-server CPU %v", fresh.docOps(&alone),
			slowest(fd), time.Duration((redisCPU(t, c)-fcpu)*float64(time.Second)))
		s := open("large", 0)
		docs := []Entry{page("large", sketch.MaxAnchors)}
		fillHot(t, c, s, docs, true)
		cpu0 := redisCPU(t, c)
		res, d := calls(s, docs)
		cpu := time.Duration((redisCPU(t, c) - cpu0) * float64(time.Second))
		if len(d) != 1 {
			t.Errorf("%d calls for one page, want 1", len(d))
		}
		if n := len(res[0].Candidates); n != DefaultMaxCandidates {
			t.Errorf("%d candidates, want %d", n, DefaultMaxCandidates)
		}
		t.Logf("one page of %d ops, every bucket full in 3 generations: a call of %v, redis-server CPU %v", s.docOps(&docs[0]), slowest(d), cpu)
		if slowest(d) > timeout/2 {
			t.Errorf("call of %v, want < %v", slowest(d), timeout/2)
		}
	})
}

func slowest(d []time.Duration) time.Duration {
	var m time.Duration
	for _, x := range d {
		m = max(m, x)
	}
	return m
}

// fillHot writes straight into s's namespace, in the current generation
// and the two before it, the buckets docs will read, as full as the
// guards let them be: each SimHash bucket MaxSimHashBucket members at
// docs' fingerprint (all near), and with bands each LSH and passage
// bucket 63 members. The 4,096 members are live documents (meta records)
// stored before docs (the Seq counter is past them).
func fillHot(t *testing.T, c *redis.Client, s *Redis, docs []Entry, bands bool) {
	t.Helper()
	ctx := context.Background()
	const members = DefaultMaxSimHashBucket
	p := s.prefix[0]
	g := s.now().Unix() / s.genSec
	pipe := c.Pipeline()
	// Every generation gets the first generation's lane bits
	// (index.capacity's) as its bucket level, with no split (clock field
	// y): what the scripts read.
	b := int(groupBits(DefaultCapacity))
	pipe.HSet(ctx, s.clock[0], "f", s.fp, "g", g, "s", g, "u", 0, "q", members, "w", fmt.Sprintf("%d,%d", g-2, g-1),
		"y", fmt.Sprintf("%d:%d:%d:0,%d:%d:%d:0,%d:%d:%d:0", g-2, b, b, g-1, b, b, g, b, b), "n", 0, "t", g*s.genSec)
	for seq := 1; seq <= members; seq++ {
		pipe.HSet(ctx, fmt.Sprintf("%sm%d", p, seq/metaGroup), seq%metaGroup, fmt.Sprintf("hot%d", seq))
	}
	seq6 := func(seq int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(seq))[2:] }
	put := func(h int64, t int, k uint64, val []byte) {
		op := s.appendOp(nil, t, k)
		c := b
		if t == s.p.passageTable() {
			c++
		}
		pipe.HSet(ctx, fmt.Sprintf("%sb%d:%d:%s", p, h, t, op[:c]), string(op[len(op)-fieldBytes:]), val)
	}
	n := 0
	for h := g - 2; h <= g; h++ {
		for i := range docs {
			e := &docs[i]
			for j, k := range simBlockKeys(nil, e.SimHash, s.p.SimHashK) {
				var v []byte
				for m := 1; m <= members; m++ {
					v = binary.BigEndian.AppendUint64(append(v, seq6(m)...), e.SimHash)
				}
				put(h, s.p.Bands+j, k, v)
			}
			if !bands {
				continue
			}
			full := func() []byte {
				var v []byte
				for range DefaultCommonDocs - 1 {
					n++
					v = append(v, seq6(n%members+1)...)
				}
				return v
			}
			for tb, k := range e.Bands {
				put(h, tb, k, full())
			}
			for _, k := range anchorKeys(nil, e.Anchors) {
				put(h, s.p.passageTable(), k, full())
			}
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}
