package index

import (
	"math/rand/v2"
	"testing"
)

// TestFlatMap checks flatMap against a Go map over random sets, gets and
// deletes, with keys drawn from small ranges (long probe runs, wrapping
// around the table's end) and from all 32 bits.
func TestFlatMap(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys uint32 // keys drawn from [0, keys); 0: any uint32
		ops  int
	}{
		{"tiny", 8, 2000},
		{"small", 100, 20000},
		{"collisions", 5000, 100000},
		{"full range", 0, 100000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(tc.keys), 7))
			key := func() uint32 {
				if tc.keys == 0 {
					return r.Uint32()
				}
				return r.Uint32N(tc.keys)
			}
			var m flatMap
			ref := map[uint32]uint32{}
			for i := range tc.ops {
				k := key()
				switch r.IntN(3) {
				case 0:
					v := r.Uint32N(bigTag + 1) // handles and bigTag
					m.set(k, v)
					ref[k] = v
				case 1:
					m.del(k)
					delete(ref, k)
				}
				got, ok := m.get(k)
				want, wantOK := ref[k]
				if ok != wantOK || got != want {
					t.Fatalf("op %d: get(%d) = %d, %v; want %d, %v", i, k, got, ok, want, wantOK)
				}
				if m.len() != len(ref) {
					t.Fatalf("op %d: len %d, want %d", i, m.len(), len(ref))
				}
			}
			for k, want := range ref {
				if got, ok := m.get(k); !ok || got != want {
					t.Fatalf("get(%d) = %d, %v; want %d, true", k, got, ok, want)
				}
			}
			n := 0
			for _, s := range m.slots {
				if s != 0 {
					n++
				}
			}
			if n != len(ref) {
				t.Fatalf("%d occupied slots, want %d", n, len(ref))
			}
		})
	}
}

// TestBigMap checks bigMap against a Go map: sets, replacements and
// deletes with index reuse, and keys listing every bucket once.
func TestBigMap(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	var m bigMap
	ref := map[uint32]*memBucket{}
	for i := range 20000 {
		k := r.Uint32N(500)
		switch r.IntN(3) {
		case 0, 1:
			b := &memBucket{overflow: i}
			m.set(k, b)
			ref[k] = b
		case 2:
			m.del(k)
			delete(ref, k)
		}
		if got, ok := m.get(k); ok != (ref[k] != nil) || got != ref[k] {
			t.Fatalf("op %d: get(%d) = %v, %v; want %v", i, k, got, ok, ref[k])
		}
	}
	if m.len() != len(ref) {
		t.Fatalf("len %d, want %d", m.len(), len(ref))
	}
	seen := map[uint32]bool{}
	for k := range m.keys {
		if seen[k] || ref[k] == nil {
			t.Fatalf("keys: %d listed twice or not held", k)
		}
		seen[k] = true
	}
	if len(seen) != len(ref) {
		t.Fatalf("keys listed %d, want %d", len(seen), len(ref))
	}
	if len(m.b) > 500 {
		t.Fatalf("%d bucket slots for at most 500 keys: freed indices not reused", len(m.b))
	}
}

// len returns the number of keys.
func (m *flatMap) len() int { return m.n }

// keys calls yield with each key, in no particular order, until it
// returns false. The map must not change meanwhile.
func (m *flatMap) keys(yield func(uint32) bool) {
	for _, s := range m.slots {
		if s != 0 && !yield(uint32(s>>32)) {
			return
		}
	}
}

// len returns the number of buckets.
func (m *bigMap) len() int { return m.idx.len() }

// keys calls yield with each bucket's key until it returns false.
func (m *bigMap) keys(yield func(uint32) bool) { m.idx.keys(yield) }
