package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/sketch"
)

// TestMetamorphicMemoryRedis drives the memory store and a single Redis
// node with the same random operations (inserts with shared bands, SimHash
// neighbours and repeated digests, replays, deletes, verdicts, feature
// reads, small hot-bucket limits) and requires identical answers.
func TestMetamorphicMemoryRedis(t *testing.T) {
	addr := redistest.StartServer(t)
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			p := testParams
			mem, err := NewMemory(MemoryConfig{Params: p, MaxBucket: 4, MaxSimHashBucket: 5})
			if err != nil {
				t.Fatal(err)
			}
			red := openRedis(t, RedisConfig{Addrs: []string{addr}, Params: p, MaxBucket: 4, MaxSimHashBucket: 5,
				Namespace: fmt.Sprint("meta", seed), Capacity: 256})
			metamorphic(t, rand.New(rand.NewPCG(seed, 99)), p, mem, red, 600)
		})
	}
}

func metamorphic(t *testing.T, rng *rand.Rand, p Params, a, b Store, steps int) {
	ctx := context.Background()
	id := func() string { return fmt.Sprint("d", rng.IntN(300)) }
	band := func(i int) uint64 { return key("pool", i*100+rng.IntN(12)) }
	fps := []uint64{0x0123456789abcdef, 0xfedcba9876543210, 0x5555aaaa5555aaaa, 0x1111222233334444, 0x9999888877776666, 0x0f0f0f0ff0f0f0f0}
	var ops [5]int
	for step := range steps {
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
					e.Features = []byte(fmt.Sprint("f", step, i))
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
			errA, errB := a.RecordVerdict(ctx, x, v), b.RecordVerdict(ctx, x, v)
			if errors.Is(errA, ErrNotFound) != errors.Is(errB, ErrNotFound) || (errA == nil) != (errB == nil) {
				t.Fatalf("step %d: RecordVerdict(%s) = %v / %v", step, x, errA, errB)
			}
		default:
			ops[3]++
			q := []string{id(), id(), id()}
			fa, errA := a.Features(ctx, q)
			fb, errB := b.Features(ctx, q)
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
	if sa.Replays == 0 || sa.HotBuckets == 0 || sa.Exact == 0 || sa.Candidates == 0 {
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
	case x.Exact != y.Exact || x.ExactSeq != y.ExactSeq:
		return "exact"
	case x.Truncated != y.Truncated:
		return "truncated"
	case !slices.Equal(x.Candidates, y.Candidates):
		return "candidates"
	}
	return ""
}
