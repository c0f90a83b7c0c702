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
