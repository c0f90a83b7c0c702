package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/sketch"
)

// pairParams are the production-shaped parameters: 9 bands of 13 rows.
var pairParams = Params{Hash: "fnv1a64+splitmix64/v1", K: 128, Bands: 9, Rows: 13, Shingle: 5, Seed: 1, SimHashK: 3}

// pairDocs returns 2n documents, each with passage anchors of its own:
// pair i is docs 2i and 2i+1, near duplicates through LSH bands (most
// pairs), through SimHash only, through the I-Match digest only, through
// shared passage anchors only, or exact copies through the content digest
// only (with the same anchors). No two pairs share anything.
func pairDocs(n int, seed uint64) []Entry {
	rng := rand.New(rand.NewPCG(seed, 7))
	docs := make([]Entry, 0, 2*n)
	for i := range n {
		a := entry(pairParams, fmt.Sprintf("p%d-a", i), nil)
		b := entry(pairParams, fmt.Sprintf("p%d-b", i), nil)
		a.Anchors, b.Anchors = anchors(a.ID, 5), anchors(b.ID, 5)
		switch i % 7 {
		case 3: // SimHash only: 2 bits apart
			fp := rng.Uint64()
			a.SimHash, a.HasSimHash = fp, true
			b.SimHash, b.HasSimHash = fp^(1<<rng.IntN(64))^(1<<rng.IntN(64)), true
		case 4: // I-Match lane only
			var d sketch.Digest
			for j := range d {
				d[j] = byte(rng.Uint32())
			}
			a.IMatch, a.HasIMatch = d, true
			b.IMatch, b.HasIMatch = d, true
		case 5: // content lane only: exact copies
			var c sketch.ContentDigest
			for j := range c {
				c[j] = byte(rng.Uint32())
			}
			a.Content, a.HasContent = c, true
			b.Content, b.HasContent = c, true
			b.Anchors = a.Anchors
		case 6: // passage anchors only: 1–3 shared
			for j := range 1 + rng.IntN(3) {
				b.Anchors[j] = a.Anchors[rng.IntN(len(a.Anchors))]
			}
		default: // 1–3 shared bands
			for range 1 + rng.IntN(3) {
				j := rng.IntN(pairParams.Bands)
				b.Bands[j] = a.Bands[j]
			}
		}
		docs = append(docs, a, b)
	}
	return docs
}

// runConcurrently processes docs with workers goroutines such that the two
// documents of a pair run at the same time on different workers, in
// batches of 1–3 of a worker's documents.
func runConcurrently(t *testing.T, s Store, docs []Entry, workers int) []Result {
	t.Helper()
	out := make([]Result, len(docs))
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	start := make(chan struct{})
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			var mine []int
			for i := w; i < len(docs); i += workers {
				mine = append(mine, i)
			}
			<-start
			for len(mine) > 0 {
				n := min(1+rng.IntN(3), len(mine))
				batch := make([]Entry, n)
				for j, i := range mine[:n] {
					batch[j] = docs[i]
				}
				res, err := s.LookupInsert(context.Background(), batch)
				if err != nil {
					errs <- err
					return
				}
				for j, i := range mine[:n] {
					out[i] = res[j]
				}
				mine = mine[n:]
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return out
}

// links returns the oriented near-duplicate links a run found: "x>y" means
// the later document y (higher Seq) and the earlier x are candidates or an
// exact hit, whichever side reported it.
func links(docs []Entry, res []Result) map[string]bool {
	seqOf := map[string]uint64{}
	for i := range docs {
		seqOf[docs[i].ID] = res[i].Seq
	}
	m := map[string]bool{}
	add := func(x, y string) {
		if seqOf[x] > seqOf[y] {
			x, y = y, x
		}
		m[x+">"+y] = true
	}
	for i := range docs {
		for _, c := range res[i].Candidates {
			add(c.ID, docs[i].ID)
		}
		if res[i].IMatch != "" {
			add(res[i].IMatch, docs[i].ID)
		}
		if res[i].Copy != "" {
			add(res[i].Copy, docs[i].ID)
		}
	}
	return m
}

func sees(r Result, id string) bool {
	if r.IMatch == id || r.Copy == id {
		return true
	}
	for _, c := range r.Candidates {
		if c.ID == id {
			return true
		}
	}
	return false
}

// runConcurrentPairs checks the concurrency guarantee: for every pair of
// near-duplicates processed at the same time, at least one side sees the
// other, and the links found equal those of a serial run in Seq order.
func runConcurrentPairs(t *testing.T, b backend, pairs, workers int) {
	docs := pairDocs(pairs, 1)
	s := b.open(t, storeOpts{params: pairParams})
	defer s.Close()
	res := runConcurrently(t, s, docs, workers)

	order := make([]int, len(docs))
	seqs := map[uint64]bool{}
	for i := range docs {
		order[i] = i
		if res[i].Replay || res[i].Seq == 0 || seqs[res[i].Seq] {
			t.Fatalf("%s: bad result %+v", docs[i].ID, res[i])
		}
		seqs[res[i].Seq] = true
	}
	higherSeen := 0
	for i := 0; i < len(docs); i += 2 {
		ra, rb := res[i], res[i+1]
		a, bb := docs[i].ID, docs[i+1].ID
		if !sees(ra, bb) && !sees(rb, a) {
			t.Errorf("pair %s/%s: neither sees the other", a, bb)
		}
		for _, r := range []Result{ra, rb} {
			if len(r.Candidates) > 1 {
				t.Errorf("pair %s/%s: candidates outside the pair: %v", a, bb, ids(r.Candidates))
			}
		}
		early, late := ra, rb
		eid := a
		if rb.Seq < ra.Seq {
			early, late, eid = rb, ra, bb
		}
		if len(early.Candidates) > 0 || early.IMatch != "" || early.Copy != "" {
			higherSeen++
			if !b.cluster {
				t.Errorf("%s: the earlier document saw a later one: %+v", b.name, early)
			}
		}
		if !b.cluster && !sees(late, eid) {
			t.Errorf("%s: the later document missed the earlier %s: %+v", b.name, eid, late)
		}
	}
	t.Logf("%s: %d pairs, %d workers, %d pairs found from the earlier side (cluster rule)", b.name, pairs, workers, higherSeen)

	// The serial run, in the order of the concurrent run's seqs.
	serialDocs := make([]Entry, len(docs))
	byseq := make([]int, len(docs))
	copy(byseq, order)
	sortBy(byseq, func(i int) uint64 { return res[i].Seq })
	for j, i := range byseq {
		serialDocs[j] = docs[i]
	}
	ser := b.open(t, storeOpts{params: pairParams})
	defer ser.Close()
	serialRes := make([]Result, len(docs))
	for j := range serialDocs {
		serialRes[j] = insert(t, ser, serialDocs[j])[0]
	}
	got, want := links(docs, res), links(serialDocs, serialRes)
	if len(want) != len(docs)/2 {
		t.Errorf("serial run found %d links, want %d", len(want), len(docs)/2)
	}
	for l := range want {
		if !got[l] {
			t.Errorf("link %s of the serial run is missing", l)
		}
	}
	for l := range got {
		if !want[l] {
			t.Errorf("link %s is not in the serial run", l)
		}
	}
}

func sortBy(x []int, key func(int) uint64) {
	for i := 1; i < len(x); i++ {
		for j := i; j > 0 && key(x[j]) < key(x[j-1]); j-- {
			x[j], x[j-1] = x[j-1], x[j]
		}
	}
}

func TestMemoryConcurrentPairs(t *testing.T) { runConcurrentPairs(t, memoryBackend(), 1000, 16) }

func TestRedisConcurrentPairs(t *testing.T) {
	addr := redistest.StartServer(t)
	runConcurrentPairs(t, redisBackend([]string{addr}, false), 1000, 16)
}

func TestClusterConcurrentPairs(t *testing.T) {
	addrs := redistest.StartCluster(t)
	runConcurrentPairs(t, redisBackend(addrs, true), 500, 16)
}
