package index

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// With Capacity set, the memory store starts a new generation every
// Capacity documents and evicts the oldest beyond two: it never holds
// more than 2×Capacity documents (plus one call's batch), and an evicted
// document is neither a candidate nor a replay.
func TestMemoryCapacity(t *testing.T) {
	const capacity = 100
	m, err := NewMemory(MemoryConfig{Params: testParams, Capacity: capacity})
	if err != nil {
		t.Fatal(err)
	}
	shared := key("shared", 0)
	var batch []Entry
	for i := range 1000 {
		batch = append(batch, entry(testParams, fmt.Sprint("d", i), map[int]uint64{0: shared}))
		if len(batch) == 10 {
			// Not insert: a candidate may be evicted by the time its
			// features are read back (the call itself closes a generation).
			if _, err := m.LookupInsert(context.Background(), batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
		if n := m.docsHeld(); n > 2*capacity+10 {
			t.Fatalf("after %d documents the store holds %d, want ≤ %d", i+1, n, 2*capacity+10)
		}
	}
	f := features(t, m, []string{"d0", "d500", "d999"})
	if f[0] != nil || f[1] != nil || f[2] == nil {
		t.Errorf("features of d0, d500, d999 = %q, want evicted, evicted, present", f)
	}
	r := insert(t, m, entry(testParams, "d0", map[int]uint64{0: shared}))[0]
	if r.Replay {
		t.Errorf("an evicted id came back as a replay: %+v", r)
	}
	for _, c := range r.Candidates {
		var n int
		fmt.Sscan(c.ID[1:], &n)
		if n < 1000-2*capacity-10 {
			t.Errorf("evicted document %s returned as a candidate", c.ID)
		}
	}
	// Handles of evicted documents are reused: the table does not grow.
	if n := m.docs.next; n > 2*capacity+30 {
		t.Errorf("%d handles allocated for at most %d live documents", n, 2*capacity+10)
	}
}

// Generations by time: a document is findable for at least Retention and
// at most Retention+Generation, then its generation is evicted whole and
// its memory released.
func TestMemoryEvictsByGeneration(t *testing.T) {
	clk := newFakeClock()
	m, err := NewMemory(MemoryConfig{Params: testParams, Retention: 10 * time.Second, Generation: 5 * time.Second, Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		insert(t, m, entry(testParams, fmt.Sprint("d", i), nil))
		clk.Advance(100 * time.Millisecond) // 30 s in all
	}
	// Now: the last 10–15 s of documents are held, in at most 3
	// generations.
	held := m.docsHeld()
	if held < 100 || held > 150 || len(m.gens) > 3 {
		t.Errorf("%d documents in %d generations, want 100–150 in ≤ 3", held, len(m.gens))
	}
}

// docsHeld counts the documents whose records are held (for tests).
func (m *Memory) docsHeld() int {
	m.genMu.RLock()
	defer m.genMu.RUnlock()
	n := 0
	for _, g := range m.gens {
		g.hmu.Lock()
		for _, h := range g.handles {
			if d := m.docs.get(h); d.gen.Load() == g {
				n++
			}
		}
		g.hmu.Unlock()
	}
	return n
}
