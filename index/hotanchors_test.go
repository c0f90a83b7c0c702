package index

import (
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// TestHotAnchors checks hotAnchors against a map-based reference: the
// anchors at positions idx of a's sorted distinct values, sorted and
// distinct, each with the most documents any of its positions listed.
func TestHotAnchors(t *testing.T) {
	reference := func(a []uint64, idx, docs []int) ([]uint64, []int) {
		if len(idx) == 0 {
			return nil, nil
		}
		d := slices.Compact(slices.Sorted(slices.Values(a)))
		held := map[uint64]int{}
		for k, i := range idx {
			if i >= 0 && i < len(d) {
				held[d[i]] = max(held[d[i]], docs[k])
			}
		}
		out := slices.Sorted(maps.Keys(held))
		n := make([]int, len(out))
		for i, x := range out {
			n[i] = held[x]
		}
		return out, n
	}
	for _, tc := range []struct {
		name      string
		a         []uint64
		idx, docs []int
	}{
		{"none", []uint64{3, 1}, nil, nil},
		{"one", []uint64{9, 4, 7}, []int{1}, []int{5}},
		{"repeated anchor and position", []uint64{9, 4, 9, 7}, []int{2, 0, 2}, []int{3, 8, 6}},
		{"out of range", []uint64{1, 2}, []int{5, -1}, []int{1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, n := hotAnchors(tc.a, tc.idx, tc.docs)
			wantOut, wantN := reference(tc.a, tc.idx, tc.docs)
			if !reflect.DeepEqual(out, wantOut) || !reflect.DeepEqual(n, wantN) {
				t.Fatalf("hotAnchors = %v, %v; want %v, %v", out, n, wantOut, wantN)
			}
		})
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		a := make([]uint64, 1+r.IntN(60))
		for i := range a {
			a[i] = r.Uint64N(40)
		}
		idx, docs := make([]int, r.IntN(20)), []int{}
		for i := range idx {
			idx[i] = r.IntN(len(a) + 2)
			docs = append(docs, r.IntN(300))
		}
		out, n := hotAnchors(a, idx, docs)
		wantOut, wantN := reference(a, idx, docs)
		if !reflect.DeepEqual(out, wantOut) || !reflect.DeepEqual(n, wantN) {
			t.Fatalf("hotAnchors(%v, %v, %v) = %v, %v; want %v, %v", a, idx, docs, out, n, wantOut, wantN)
		}
	}
}
