package verify

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// randSet returns n distinct sorted hashes drawn from a universe of size
// u (u ≥ n), so two sets from small universes overlap a lot.
func randSet(r *rand.Rand, n, u int) []uint64 {
	seen := make(map[uint64]bool, n)
	out := make([]uint64, 0, n)
	for len(out) < n {
		v := uint64(r.IntN(u)) * 0x9E3779B97F4A7C15 // spread, still distinct
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// setInter is the reference: set arithmetic with a map.
func setInter(a, b []uint64) int {
	in := make(map[uint64]bool, len(a))
	for _, x := range a {
		in[x] = true
	}
	n := 0
	for _, y := range b {
		if in[y] {
			n++
		}
	}
	return n
}

func TestResemblanceTable(t *testing.T) {
	tests := []struct {
		name       string
		a, b       []uint64
		j, cab, cb float64
	}{
		{"both empty", nil, nil, 0, 0, 0},
		{"a empty", nil, []uint64{1, 2}, 0, 0, 0},
		{"b empty", []uint64{1, 2}, nil, 0, 0, 0},
		{"equal", []uint64{1, 2, 3}, []uint64{1, 2, 3}, 1, 1, 1},
		{"disjoint", []uint64{1, 3, 5}, []uint64{2, 4, 6}, 0, 0, 0},
		{"a inside b", []uint64{2, 3}, []uint64{1, 2, 3, 4}, 0.5, 1, 0.5},
		{"half", []uint64{1, 2, 3, 4}, []uint64{3, 4, 5, 6}, 2.0 / 6, 0.5, 0.5},
		{"extremes", []uint64{0, 1<<64 - 1}, []uint64{1<<64 - 1}, 0.5, 0.5, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Jaccard(tt.a, tt.b); got != tt.j {
				t.Errorf("Jaccard = %v, want %v", got, tt.j)
			}
			if got := Containment(tt.a, tt.b); got != tt.cab {
				t.Errorf("Containment(a, b) = %v, want %v", got, tt.cab)
			}
			if got := Containment(tt.b, tt.a); got != tt.cb {
				t.Errorf("Containment(b, a) = %v, want %v", got, tt.cb)
			}
			o := OverlapOf(tt.a, tt.b)
			if ab, ba := o.Containment(); o.Jaccard() != tt.j || ab != tt.cab || ba != tt.cb {
				t.Errorf("OverlapOf: Jaccard %v, Containment %v, %v; want %v, %v, %v", o.Jaccard(), ab, ba, tt.j, tt.cab, tt.cb)
			}
		})
	}
}

// TestResemblanceMatchesSetArithmetic checks merge and galloping against a
// map-based intersection on random sets of many shapes, and the early-exit
// variants against the plain ones at random thresholds.
func TestResemblanceMatchesSetArithmetic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 1, 2, 7, 63, 64, 65, 200, 800, 3000}
	for range 400 {
		na, nb := sizes[r.IntN(len(sizes))], sizes[r.IntN(len(sizes))]
		u := max(na, nb) + r.IntN(2*max(na, nb)+1)
		a, b := randSet(r, na, u), randSet(r, nb, u)
		want := setInter(a, b)
		if got := Intersection(a, b); got != want {
			t.Fatalf("|a|=%d |b|=%d: Intersection = %d, want %d", na, nb, got, want)
		}
		wantJ := 0.0
		if want > 0 {
			wantJ = float64(want) / float64(na+nb-want)
		}
		if got := Jaccard(a, b); got != wantJ {
			t.Fatalf("Jaccard = %v, want %v", got, wantJ)
		}
		wantC := 0.0
		if want > 0 {
			wantC = float64(want) / float64(na)
		}
		if got := Containment(a, b); got != wantC {
			t.Fatalf("Containment = %v, want %v", got, wantC)
		}
		o := OverlapOf(a, b)
		if ab, ba := o.Containment(); o.Jaccard() != Jaccard(a, b) || ab != Containment(a, b) || ba != Containment(b, a) {
			t.Fatalf("OverlapOf differs from Jaccard and Containment: %+v", o)
		}
		th := r.Float64()
		j, ok := JaccardAtLeast(a, b, th)
		if ok != (wantJ >= th) {
			t.Fatalf("JaccardAtLeast(%v) ok = %v, Jaccard %v", th, ok, wantJ)
		}
		if ok && j != wantJ || !ok && j < wantJ {
			t.Fatalf("JaccardAtLeast(%v) = %v, %v; want exact or upper bound of %v", th, j, ok, wantJ)
		}
		c, ok := ContainmentAtLeast(a, b, th)
		if ok != (wantC >= th) {
			t.Fatalf("ContainmentAtLeast(%v) ok = %v, containment %v", th, ok, wantC)
		}
		if ok && c != wantC || !ok && c < wantC {
			t.Fatalf("ContainmentAtLeast(%v) = %v, %v; want exact or upper bound of %v", th, c, ok, wantC)
		}
	}
}

// TestGallop covers the skewed-size path directly, including need.
func TestGallop(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		big := randSet(r, 2000+r.IntN(2000), 6000)
		small := randSet(r, 1+r.IntN(40), 6000)
		want := setInter(small, big)
		if n, done := gallop(small, big, 0); n != want || !done {
			t.Fatalf("gallop = %d, %v; want %d", n, done, want)
		}
		if n, done := merge(small, big, 0); n != want || !done {
			t.Fatalf("merge = %d, %v; want %d", n, done, want)
		}
		for _, need := range []int{want, want + 1, len(small)} {
			n, done := gallop(small, big, need)
			if done && n != want || !done && n < want || need <= want && !done {
				t.Fatalf("gallop need %d = %d, %v; want exact %d or an upper bound", need, n, done, want)
			}
		}
	}
}

func TestMinJaccardInter(t *testing.T) {
	for _, th := range []float64{0.01, 0.3, 0.5, 0.8, 0.9, 1} {
		for na := 0; na < 60; na += 7 {
			for nb := 0; nb < 60; nb += 5 {
				got := minJaccardInter(th, na, nb)
				want := min(na, nb) + 1
				for i := 1; i <= min(na, nb); i++ {
					if jaccard(i, na, nb) >= th {
						want = i
						break
					}
				}
				if got != want {
					t.Fatalf("minJaccardInter(%v, %d, %d) = %d, want %d", th, na, nb, got, want)
				}
			}
		}
	}
}

// benchPairs returns sorted pairs of n random hashes each sharing shared
// of them. Benchmarks cycle through 64 pairs: with a single pair the
// branch predictor learns the merge's data-dependent branches and reports
// an unreal speed.
func benchPairs(r *rand.Rand, n, shared int) (xs, ys [][]uint64) {
	for range 64 {
		u := make([]uint64, 2*n-shared)
		for i := range u {
			u[i] = r.Uint64()
		}
		xs = append(xs, slices.Sorted(slices.Values(u[:n])))
		ys = append(ys, slices.Sorted(slices.Values(u[n-shared:])))
	}
	return xs, ys
}

// BenchmarkJaccard measures exact resemblance at several sizes and
// overlaps (J = 0, 1/3, 0.78, 1), the early-exit variant at threshold
// 0.5, and a map-based intersection as the named peer.
func BenchmarkJaccard(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{100, 800, 4096} {
		for _, frac := range []float64{0, 0.5, 0.875, 1} {
			xs, ys := benchPairs(r, n, int(frac*float64(n)))
			name := fmt.Sprintf("%d/J=%.2f", n, Jaccard(xs[0], ys[0]))
			b.Run("exact/"+name, func(b *testing.B) {
				b.ReportAllocs()
				k := 0
				for b.Loop() {
					Jaccard(xs[k&63], ys[k&63])
					k++
				}
			})
			b.Run("atleast0.5/"+name, func(b *testing.B) {
				b.ReportAllocs()
				k := 0
				for b.Loop() {
					JaccardAtLeast(xs[k&63], ys[k&63], 0.5)
					k++
				}
			})
			if frac == 0.5 {
				b.Run("map/"+name, func(b *testing.B) {
					b.ReportAllocs()
					k := 0
					for b.Loop() {
						setInter(xs[k&63], ys[k&63])
						k++
					}
				})
			}
		}
	}
}

// FuzzResemblance: sorted sets from arbitrary bytes agree with set
// arithmetic; the same bytes unsorted must not panic.
func FuzzResemblance(f *testing.F) {
	f.Add([]byte("abcdefgh"), []byte("bcdefghi"))
	f.Add(make([]byte, 8*300), make([]byte, 8*70))
	f.Fuzz(func(t *testing.T, x, y []byte) {
		a, b := toSet(x), toSet(y)
		Jaccard(unsorted(x), unsorted(y)) // must not panic
		Containment(unsorted(y), unsorted(x))
		if got, want := Intersection(a, b), setInter(a, b); got != want {
			t.Fatalf("Intersection = %d, want %d", got, want)
		}
	})
}

func unsorted(p []byte) []uint64 {
	out := make([]uint64, len(p)/8)
	for i := range out {
		for k := range 8 {
			out[i] = out[i]<<8 | uint64(p[8*i+k])
		}
	}
	return out
}

func toSet(p []byte) []uint64 {
	s := unsorted(p)
	slices.Sort(s)
	return slices.Compact(s)
}
