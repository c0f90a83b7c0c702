package sketch

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestHashSorter(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 9))
	var s hashSorter
	for _, n := range []int{0, 1, 2, 31, 32, 33, 1000, 5000, 70000} {
		for _, skew := range []string{"uniform", "narrow", "dups"} {
			keys := make([]uint64, n)
			vals := make([]uint32, n)
			for i := range keys {
				switch skew {
				case "uniform":
					keys[i] = r.Uint64()
				case "narrow": // all in one top-bits bucket
					keys[i] = r.Uint64() & 0xffffff
				case "dups":
					keys[i] = uint64(r.IntN(10)) << 60
				}
				vals[i] = uint32(i)
			}
			orig := slices.Clone(keys)
			s.sort(keys, vals)
			if !slices.IsSorted(keys) {
				t.Fatalf("n=%d %s: not sorted", n, skew)
			}
			for i, v := range vals {
				if orig[v] != keys[i] {
					t.Fatalf("n=%d %s: value %d does not follow its key", n, skew, i)
				}
				if i > 0 && keys[i] == keys[i-1] && vals[i] < vals[i-1] {
					t.Fatalf("n=%d %s: not stable at %d", n, skew, i)
				}
			}
			plain := slices.Clone(orig)
			s.sort(plain, nil)
			slices.Sort(orig)
			if !slices.Equal(plain, orig) {
				t.Fatalf("n=%d %s: keys-only sort differs from slices.Sort", n, skew)
			}
		}
	}
}

func BenchmarkSortHashes(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	src := make([]uint64, 1100)
	for i := range src {
		src[i] = r.Uint64()
	}
	keys := make([]uint64, len(src))
	var s hashSorter
	b.Run("hashSorter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			copy(keys, src)
			s.sort(keys, nil)
		}
	})
	b.Run("pdqsort", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			copy(keys, src)
			slices.Sort(keys)
		}
	})
}
