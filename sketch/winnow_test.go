package sketch

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// winnowBrute is the definition: the rightmost minimum of every window,
// each selected position once.
func winnowBrute(hashes []uint64, w int) []Anchor {
	var out []Anchor
	last := -1
	if len(hashes) == 0 {
		return nil
	}
	ends := []int{}
	for e := w - 1; e < len(hashes); e++ {
		ends = append(ends, e)
	}
	if len(hashes) < w {
		ends = []int{len(hashes) - 1}
	}
	for _, e := range ends {
		s := max(0, e-w+1)
		m := s
		for i := s; i <= e; i++ {
			if hashes[i] <= hashes[m] {
				m = i
			}
		}
		if m != last {
			out = append(out, Anchor{hashes[m], uint32(m)})
			last = m
		}
	}
	return out
}

func TestWinnowMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		n, w := r.IntN(300), 1+r.IntN(40)
		h := make([]uint64, n)
		for i := range h {
			h[i] = r.Uint64N(uint64(1 + r.IntN(50))) // many ties
		}
		got := Winnow(nil, h, w)
		if want := winnowBrute(h, w); !slices.Equal(got, want) {
			t.Fatalf("n %d w %d:\n got %v\nwant %v", n, w, got, want)
		}
	}
}

// Two documents sharing a run of at least w shingles share an anchor, and
// the density is about 2/(w+1).
func TestWinnowGuarantee(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const w = 26
	selected, total := 0, 0
	for range 500 {
		a := make([]uint64, 200+r.IntN(800))
		b := make([]uint64, 200+r.IntN(800))
		for i := range a {
			a[i] = r.Uint64()
		}
		for i := range b {
			b[i] = r.Uint64()
		}
		run := w + r.IntN(20)
		pa, pb := r.IntN(len(a)-run), r.IntN(len(b)-run)
		copy(b[pb:pb+run], a[pa:pa+run])
		aa := Winnow(nil, a, w)
		ab := Winnow(nil, b, w)
		selected += len(aa)
		total += len(a)
		inA := map[uint64]bool{}
		for _, x := range aa {
			inA[x.Hash] = true
		}
		shared := false
		for _, x := range ab {
			shared = shared || inA[x.Hash]
		}
		if !shared {
			t.Fatalf("run of %d shingles shared without a common anchor", run)
		}
	}
	if d, want := float64(selected)/float64(total), 2.0/(w+1); d < 0.8*want || d > 1.2*want {
		t.Errorf("density %.4f, want about %.4f", d, want)
	}
}

func TestWinnowWindow(t *testing.T) {
	if WinnowWindow(30, 5) != 26 || WinnowWindow(3, 5) != 1 {
		t.Error("window")
	}
}

func BenchmarkWinnow(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	h := make([]uint64, 1000)
	for i := range h {
		h[i] = r.Uint64()
	}
	var dst []Anchor
	b.ReportAllocs()
	for b.Loop() {
		dst = Winnow(dst[:0], h, 26)
	}
}
