package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/sketch"
	"github.com/redis/go-redis/v9"
)

// TestMetamorphicMemoryRedis drives the memory store and a single Redis
// node with the same random operations (inserts with shared bands, SimHash
// neighbours, shared and repeated passage anchors and repeated digests,
// replays, deletes, verdicts, feature reads, small hot-bucket limits) and
// requires identical answers. Seeds 7 and 8 split the Redis groups every
// document or so (splitLoad 1): seed 7's one generation grows from level
// 4 to 7, seed 8's first generation grows and the later ones start at the
// level their predecessor's count asks for; splits meet every kind of
// operation. Seed 9 is seed 7 on a server whose hashes of more than two
// fields are hashtables, so that splits meet both encodings (a listpack
// group is copied and trimmed, a hashtable group read and rewritten: the
// test requires both).
func TestMetamorphicMemoryRedis(t *testing.T) {
	addr := redistest.StartServer(t)
	for _, tc := range []struct {
		seed     uint64
		timed    bool // generations of 5 s, retention 10 s, a clock that moves
		refresh  bool
		load     int // splitLoad (0: the default)
		listpack int // the server's hash-max-listpack-entries (0: its default)
	}{{1, false, false, 0, 0}, {2, false, false, 0, 0}, {3, false, false, 0, 0}, {4, true, false, 0, 0}, {5, true, true, 0, 0}, {6, true, true, 0, 0},
		{7, false, false, 1, 0}, {8, true, true, 1, 0}, {9, false, false, 1, 2}} {
		t.Run(fmt.Sprint("seed", tc.seed), func(t *testing.T) {
			if tc.listpack > 0 {
				c := redis.NewClient(&redis.Options{Addr: addr})
				defer c.Close()
				ctx := context.Background()
				old, err := c.ConfigGet(ctx, "hash-max-listpack-entries").Result()
				if err != nil {
					t.Fatal(err)
				}
				if err := c.ConfigSet(ctx, "hash-max-listpack-entries", fmt.Sprint(tc.listpack)).Err(); err != nil {
					t.Fatal(err)
				}
				defer c.ConfigSet(ctx, "hash-max-listpack-entries", old["hash-max-listpack-entries"])
				if err := c.ConfigResetStat(ctx).Err(); err != nil {
					t.Fatal(err)
				}
				defer func() {
					stats, err := c.Info(ctx, "commandstats").Result()
					if err != nil {
						t.Fatal(err)
					}
					// HGETALL: a hashtable group split; COPY: a listpack one.
					for _, cmd := range []string{"cmdstat_hgetall:", "cmdstat_copy:"} {
						if !strings.Contains(stats, cmd) {
							t.Errorf("no %s call: the splits did not meet both encodings", strings.TrimSuffix(cmd, ":"))
						}
					}
				}()
			}
			p := testParams
			clk := newFakeClock()
			var ret, gen time.Duration
			if tc.timed {
				ret, gen = 10*time.Second, 5*time.Second
				if tc.load > 0 { // about 80 documents a generation: enough to split
					ret, gen = 2*time.Minute, time.Minute
				}
			}
			mem, err := NewMemory(MemoryConfig{Params: p, CommonDocs: 4, MaxSimHashBucket: 5, MaxCandidates: 3,
				Retention: ret, Generation: gen, RefreshOnMatch: tc.refresh, Clock: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			red := openRedis(t, RedisConfig{Addrs: []string{addr}, Params: p, CommonDocs: 4, MaxSimHashBucket: 5, MaxCandidates: 3,
				Namespace: fmt.Sprint("meta", tc.seed), Capacity: 256, Retention: ret, Generation: gen,
				RefreshOnMatch: tc.refresh, Clock: clk.Now, MaxClockAhead: -1, splitLoad: tc.load})
			tick := func(rng *rand.Rand) {
				if tc.timed {
					clk.Advance(time.Duration(rng.IntN(1500)) * time.Millisecond)
				}
			}
			metamorphic(t, rand.New(rand.NewPCG(tc.seed, 99)), p, mem, red, 600, tick, tc.timed)
			if tc.load > 0 {
				grown := 0
				for _, l := range genLayouts(t, red)[0] {
					grown = max(grown, l.level-minGroupBits)
				}
				t.Logf("layouts %v", genLayouts(t, red)[0])
				if grown < 2 {
					t.Errorf("groups grew %d levels, want splits to meet the operations", grown)
				}
			}
		})
	}
}

// metamorphic runs the random operations on a and b; tick moves their
// clock before each (timed: generations come and go, so hot buckets are
// rarer than in a run without them).
func metamorphic(t *testing.T, rng *rand.Rand, p Params, a, b Store, steps int, tick func(*rand.Rand), timed bool) {
	ctx := context.Background()
	id := func() string { return fmt.Sprint("d", rng.IntN(300)) }
	band := func(i int) uint64 { return key("pool", i*100+rng.IntN(12)) }
	anchor := func() uint64 { return key("anchors", rng.IntN(40)) }
	fps := []uint64{0x0123456789abcdef, 0xfedcba9876543210, 0x5555aaaa5555aaaa, 0x1111222233334444, 0x9999888877776666, 0x0f0f0f0ff0f0f0f0}
	var ops [5]int
	for step := range steps {
		tick(rng)
		switch op := rng.IntN(10); {
		case op < 6:
			ops[0]++
			docs := make([]Entry, 1+rng.IntN(5))
			for i := range docs {
				e := Entry{ID: id(), Bands: make([]uint64, p.Bands)}
				for j := range e.Bands {
					if rng.IntN(3) == 0 {
						e.Bands[j] = band(j)
					} else {
						e.Bands[j] = rng.Uint64()
					}
				}
				if rng.IntN(2) == 0 {
					e.SimHash, e.HasSimHash = fps[rng.IntN(len(fps))]^(1<<rng.IntN(64))^(1<<rng.IntN(64)), true
				}
				if rng.IntN(3) == 0 {
					e.IMatch, e.HasIMatch = sketch.Digest{byte(rng.IntN(4))}, true
				}
				if rng.IntN(2) == 0 {
					e.Content, e.HasContent = sketch.ContentDigest{byte(rng.IntN(6)), 1}, true
				}
				if rng.IntN(2) == 0 {
					e.Features = []byte(fmt.Sprint("f", step, i))
				}
				if rng.IntN(3) > 0 {
					for range rng.IntN(8) {
						e.Anchors = append(e.Anchors, anchor()) // repeats included
					}
					for range rng.IntN(4) {
						e.Anchors = append(e.Anchors, rng.Uint64())
					}
				}
				docs[i] = e
			}
			ra, errA := a.LookupInsert(ctx, docs)
			rb, errB := b.LookupInsert(ctx, docs)
			if errA != nil || errB != nil {
				t.Fatalf("step %d: %v / %v", step, errA, errB)
			}
			for i := range docs {
				if d := diffResult(ra[i], rb[i]); d != "" {
					t.Fatalf("step %d doc %d (%s): %s\nmemory %+v\nredis  %+v", step, i, docs[i].ID, d, ra[i], rb[i])
				}
			}
		case op == 6:
			ops[1]++
			del := []string{id(), id()}
			if err := errors.Join(a.Delete(ctx, del...), b.Delete(ctx, del...)); err != nil {
				t.Fatal(err)
			}
		case op == 7:
			ops[2]++
			x, v := id(), []byte(fmt.Sprint("v", step))
			errA, errB := recordVerdict(ctx, a, x, v), recordVerdict(ctx, b, x, v)
			if errors.Is(errA, ErrNotFound) != errors.Is(errB, ErrNotFound) || (errA == nil) != (errB == nil) {
				t.Fatalf("step %d: RecordVerdict(%s) = %v / %v", step, x, errA, errB)
			}
		default:
			ops[3]++
			q := []string{id(), id(), id()}
			fa, errA := a.Features(ctx, seqsOf(t, a, q...))
			fb, errB := b.Features(ctx, seqsOf(t, b, q...))
			if errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			for i := range q {
				if !bytes.Equal(fa[i], fb[i]) || (fa[i] == nil) != (fb[i] == nil) {
					t.Fatalf("step %d: Features(%s) = %q / %q", step, q[i], fa[i], fb[i])
				}
			}
		}
	}
	sa, sb := a.(interface{ Stats() Stats }).Stats(), b.(interface{ Stats() Stats }).Stats()
	if sa != sb {
		t.Errorf("stats differ:\nmemory %+v\nredis  %+v", sa, sb)
	}
	if sa.Replays == 0 || sa.IMatch == 0 || sa.Candidates == 0 || sa.Passage == 0 || sa.Copies == 0 || sa.Dropped == 0 || (sa.HotBuckets == 0 && !timed) {
		t.Errorf("the run did not exercise everything: %+v", sa)
	}
	t.Logf("ops %v, stats %+v", ops, sa)
}

func diffResult(x, y Result) string {
	switch {
	case x.Seq != y.Seq || x.Replay != y.Replay:
		return "seq/replay"
	case !bytes.Equal(x.Verdict, y.Verdict) || (x.Verdict == nil) != (y.Verdict == nil):
		return "verdict"
	case x.IMatch != y.IMatch || x.IMatchSeq != y.IMatchSeq:
		return "exact"
	case !sameBytes(x.IMatchFeatures, y.IMatchFeatures):
		return "exact features"
	case x.Truncated != y.Truncated:
		return "truncated"
	case x.Copy != y.Copy || x.CopySeq != y.CopySeq:
		return "copy"
	case x.Dropped != y.Dropped:
		return "dropped"
	case !slices.EqualFunc(x.Candidates, y.Candidates, func(a, b Candidate) bool {
		return a.ID == b.ID && a.Seq == b.Seq && a.Via == b.Via && a.Hits == b.Hits && sameBytes(a.Features, b.Features)
	}):
		return "candidates"
	}
	return ""
}

// sameBytes reports whether a and b hold the same bytes and are both nil
// or both non-nil.
func sameBytes(a, b []byte) bool { return bytes.Equal(a, b) && (a == nil) == (b == nil) }

// TestMetamorphicMemoryCluster drives the memory store and a Redis Cluster
// with the same random inserts, one document at a time (a serial run:
// the ordering rule never applies), and requires the same candidates (ids,
// via and hits, in rank order), lane hits, withheld and dropped counts.
// Seqs differ (the cluster's have gaps), and without deletes and replays
// the cluster's known differences (unrepaired buckets, replays that see
// later documents) do not arise. It runs at the default splitLoad and at
// 1, where each shard's groups split every document or so.
func TestMetamorphicMemoryCluster(t *testing.T) {
	addrs := redistest.StartCluster(t)
	for _, load := range []int{0, 1} {
		t.Run(fmt.Sprint("splitLoad", load), func(t *testing.T) { metamorphicCluster(t, addrs, load) })
	}
}

// metamorphicCluster is TestMetamorphicMemoryCluster's run at splitLoad
// load (0: the default; 1: the groups split every document or so in each
// shard).
func metamorphicCluster(t *testing.T, addrs []string, load int) {
	p := testParams
	mem, err := NewMemory(MemoryConfig{Params: p, CommonDocs: 4, MaxSimHashBucket: 5, MaxCandidates: 3})
	if err != nil {
		t.Fatal(err)
	}
	cl := openRedis(t, RedisConfig{Addrs: addrs, Cluster: true, Params: p, CommonDocs: 4, MaxSimHashBucket: 5,
		MaxCandidates: 3, Namespace: fmt.Sprint("metacl", load), Capacity: 256, splitLoad: load})
	rng := rand.New(rand.NewPCG(7, 99))
	ctx := context.Background()
	fps := []uint64{0x0123456789abcdef, 0xfedcba9876543210, 0x5555aaaa5555aaaa}
	for i := range 400 {
		e := Entry{ID: fmt.Sprint("d", i), Bands: make([]uint64, p.Bands)}
		for j := range e.Bands {
			if rng.IntN(4) == 0 {
				e.Bands[j] = key("pool", j*100+rng.IntN(20))
			} else {
				e.Bands[j] = rng.Uint64()
			}
		}
		if rng.IntN(3) == 0 {
			e.SimHash, e.HasSimHash = fps[rng.IntN(len(fps))]^(1<<rng.IntN(64))^(1<<rng.IntN(64)), true
		}
		if rng.IntN(4) == 0 {
			e.IMatch, e.HasIMatch = sketch.Digest{byte(rng.IntN(8))}, true
		}
		if rng.IntN(4) == 0 {
			e.Content, e.HasContent = sketch.ContentDigest{byte(rng.IntN(20)), 2}, true
		}
		for range rng.IntN(10) {
			e.Anchors = append(e.Anchors, key("anchors", rng.IntN(60)))
		}
		ra, errA := mem.LookupInsert(ctx, []Entry{e})
		rb, errB := cl.LookupInsert(ctx, []Entry{e})
		if errA != nil || errB != nil {
			t.Fatalf("%s: %v / %v", e.ID, errA, errB)
		}
		x, y := ra[0], rb[0]
		same := x.Copy == y.Copy && x.IMatch == y.IMatch && x.Truncated == y.Truncated && x.Dropped == y.Dropped &&
			slices.EqualFunc(x.Candidates, y.Candidates, func(a, b Candidate) bool {
				return a.ID == b.ID && a.Via == b.Via && a.Hits == b.Hits
			})
		if !same {
			t.Fatalf("%s:\nmemory  %+v\ncluster %+v", e.ID, x, y)
		}
	}
	sa, sb := mem.Stats(), cl.Stats()
	if sa != sb {
		t.Errorf("stats differ:\nmemory  %+v\ncluster %+v", sa, sb)
	}
	if sa.Passage == 0 || sa.HotBuckets == 0 || sa.Dropped == 0 || sa.Copies == 0 || sa.IMatch == 0 {
		t.Errorf("the run did not exercise everything: %+v", sa)
	}
	t.Logf("stats %+v", sa)
	if load > 0 {
		split := 0
		for _, m := range genLayouts(t, cl) {
			for _, l := range m {
				split += l.splits + (l.level-minGroupBits)<<8
			}
		}
		if split == 0 {
			t.Errorf("no shard's groups split")
		}
	}
}
