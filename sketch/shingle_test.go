package sketch

import (
	"math/rand/v2"
	"testing"
)

func TestShinglesMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{0, 1, 4, 5, 6, 50} {
		for _, w := range []int{1, 2, 5} {
			toks := make([]uint64, n)
			for i := range toks {
				toks[i] = r.Uint64()
			}
			got := AppendShingles([]uint64{42}, toks, w)
			var want []uint64 = []uint64{42}
			if n > 0 && n < w {
				want = append(want, ShingleHash(toks))
			}
			for i := 0; i+w <= n; i++ {
				want = append(want, ShingleHash(toks[i:i+w]))
			}
			if len(got) != len(want) {
				t.Fatalf("n=%d w=%d: %d vs %d", n, w, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("n=%d w=%d i=%d", n, w, i)
				}
			}
		}
	}
}
