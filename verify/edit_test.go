package verify

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// levenshteinDP is the textbook Wagner–Fischer dynamic program over code
// points, the reference for the bit-parallel implementation.
func levenshteinDP(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func dpSimilarity(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	l := max(len(ra), len(rb))
	if l == 0 {
		return 0
	}
	return 1 - float64(levenshteinDP(ra, rb))/float64(l)
}

func TestEditTable(t *testing.T) {
	one, three := 1.0, 3.0
	third := 1 - one/three // as computed at run time, not as a constant
	tests := []struct {
		a, b string
		d    int
		s    float64
	}{
		{"", "", 0, 0},
		{"", "abc", 3, 0},
		{"abc", "", 3, 0},
		{"abc", "abc", 0, 1},
		{"kitten", "sitting", 3, 1 - 3.0/7},
		{"flaw", "lawn", 2, 0.5},
		{"ab", "ba", 2, 0},
		{"naïve café", "naive cafe", 2, 0.8},   // code points, not bytes
		{"日本語", "日本", 1, third},                // multi-byte runes
		{"a\xffb", "a\xfeb", 1, third},         // invalid bytes differ
		{"a\xffb", "a\uFFFDb", 1, third},       // … and differ from U+FFFD
		{strings.Repeat("a", 200), "", 200, 0}, // multi-block, one side empty
		{strings.Repeat("ab", 100), strings.Repeat("ab", 100), 0, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%.12q/%.12q", tt.a, tt.b), func(t *testing.T) {
			if d := EditDistance([]byte(tt.a), []byte(tt.b)); d != tt.d {
				t.Errorf("EditDistance = %d, want %d", d, tt.d)
			}
			if s := EditSimilarity([]byte(tt.a), []byte(tt.b)); s != tt.s {
				t.Errorf("EditSimilarity = %v, want %v", s, tt.s)
			}
		})
	}
}

// mutate applies n random edits (substitute, insert, delete) to s, with
// letters from alpha.
func mutate(r *rand.Rand, s []rune, n int, alpha []rune) []rune {
	out := append([]rune(nil), s...)
	for range n {
		c := alpha[r.IntN(len(alpha))]
		switch i := r.IntN(len(out) + 1); {
		case r.IntN(3) == 0 || len(out) == 0:
			out = append(out[:i], append([]rune{c}, out[i:]...)...)
		case r.IntN(2) == 0 && i < len(out):
			out[i] = c
		case i < len(out):
			out = append(out[:i], out[i+1:]...)
		}
	}
	return out
}

func randRunes(r *rand.Rand, n int, alpha []rune) []rune {
	out := make([]rune, n)
	for i := range out {
		out[i] = alpha[r.IntN(len(alpha))]
	}
	return out
}

// TestEditMatchesDP is the property test: on random strings of 0 to 300
// code points (one to five 64-row blocks), small and large alphabets,
// related and unrelated pairs, the bit-parallel distance equals the
// textbook DP, and the banded early-exit variant agrees with it at random
// thresholds.
func TestEditMatchesDP(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	alphas := [][]rune{[]rune("ab"), []rune("acgt"), []rune("abcdefghijklmnopqrstuvwxyz "), []rune("aéü日本語ß")}
	var e Editor
	iters := 1500
	if testing.Short() {
		iters = 500 // the race run (-short, make race); the editor is serial
	}
	for iter := range iters {
		alpha := alphas[r.IntN(len(alphas))]
		a := randRunes(r, r.IntN(300), alpha)
		var b []rune
		if iter%3 == 0 {
			b = randRunes(r, r.IntN(300), alpha)
		} else {
			b = mutate(r, a, r.IntN(len(a)/3+2), alpha)
		}
		sa, sb := []byte(string(a)), []byte(string(b))
		want := levenshteinDP(a, b)
		if got := e.Distance(sa, sb); got != want {
			t.Fatalf("iter %d: Distance(%q, %q) = %d, want %d", iter, a, b, got, want)
		}
		wantS := dpSimilarity(string(a), string(b))
		th := r.Float64()
		if iter%4 == 0 {
			th = wantS // exactly at the threshold
		}
		s, ok := e.SimilarityAtLeast(sa, sb, th)
		if ok != (wantS >= th) {
			t.Fatalf("iter %d: SimilarityAtLeast(%v) ok = %v, similarity %v (|a|=%d |b|=%d d=%d)", iter, th, ok, wantS, len(a), len(b), want)
		}
		if ok && s != wantS || !ok && s < wantS {
			t.Fatalf("iter %d: SimilarityAtLeast(%v) = %v; want exact or upper bound of %v", iter, th, s, wantS)
		}
	}
}

// TestEditBandedDistance drives runeDistance directly at every k near the
// true distance, where the band and the early exit are tightest.
func TestEditBandedDistance(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	alpha := []rune("abcd")
	var e Editor
	for range 300 {
		a := randRunes(r, 1+r.IntN(260), alpha)
		b := mutate(r, a, r.IntN(80), alpha)
		want := levenshteinDP(a, b)
		for k := max(0, want-3); k <= want+3; k++ {
			e.ra, e.rb = append(e.ra[:0], a...), append(e.rb[:0], b...)
			d, ok := e.runeDistance(k)
			if ok != (want <= k) || ok && d != want || !ok && (d <= k || d > want) {
				t.Fatalf("|a|=%d |b|=%d k=%d: runeDistance = %d, %v; distance %d", len(a), len(b), k, d, ok, want)
			}
		}
	}
}

func TestEditAtLeastEdges(t *testing.T) {
	if s, ok := EditSimilarityAtLeast(nil, nil, 0.5); ok || s != 0 {
		t.Errorf("empty texts: %v, %v; want 0, false", s, ok)
	}
	if s, ok := EditSimilarityAtLeast([]byte("abc"), []byte("abc"), 1); !ok || s != 1 {
		t.Errorf("equal texts at t=1: %v, %v", s, ok)
	}
	if _, ok := EditSimilarityAtLeast([]byte("abc"), []byte("abc"), 1.01); ok {
		t.Error("t > 1 reached")
	}
	// A length difference beyond the budget exits before any work.
	if s, ok := EditSimilarityAtLeast([]byte("a"), []byte(strings.Repeat("a", 100)), 0.75); ok || s > 0.25 {
		t.Errorf("length filter: %v, %v", s, ok)
	}
}

// TestEditHuge: 100 000-rune texts, unrelated, stop early under a
// threshold in a fraction of the full O(m·n/64) work.
func TestEditHuge(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	alpha := []rune("abcdefghijklmnopqrstuvwxyz ")
	a := []byte(string(randRunes(r, 100_000, alpha)))
	b := []byte(string(randRunes(r, 100_000, alpha)))
	allocs := testing.AllocsPerRun(1, func() {
		if _, ok := EditSimilarityAtLeast(a, b, DefaultEdit); ok {
			t.Error("unrelated 100k texts reached the threshold")
		}
	})
	if allocs > 20 {
		t.Errorf("%v allocations", allocs)
	}
	c := []byte(string(mutate(r, []rune(string(a)), 1000, alpha)))
	if s, ok := EditSimilarityAtLeast(a, c, 0.95); !ok || s < 0.99 {
		t.Errorf("1000 edits in 100k: %v, %v", s, ok)
	}
}

func BenchmarkEdit(b *testing.B) {
	r := rand.New(rand.NewPCG(27, 28))
	alpha := []rune("abcdefghijklmnopqrstuvwxyz     ")
	for _, n := range []int{50, 150, 500} {
		x := randRunes(r, n, alpha)
		near := []byte(string(mutate(r, x, n/10, alpha)))
		far := []byte(string(randRunes(r, n, alpha)))
		xs := []byte(string(x))
		b.Run(fmt.Sprintf("distance/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var e Editor
			for b.Loop() {
				e.Distance(xs, near)
			}
		})
		b.Run(fmt.Sprintf("atleast-near/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var e Editor
			for b.Loop() {
				e.SimilarityAtLeast(xs, near, DefaultEdit)
			}
		})
		b.Run(fmt.Sprintf("atleast-far/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var e Editor
			for b.Loop() {
				e.SimilarityAtLeast(xs, far, DefaultEdit)
			}
		})
		b.Run(fmt.Sprintf("dp/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			rn := []rune(string(near))
			for b.Loop() {
				levenshteinDP(x, rn)
			}
		})
	}
}

// FuzzEditDistance: the bit-parallel distance equals the textbook DP on
// arbitrary bytes, invalid UTF-8 included, and the banded form agrees at
// a threshold derived from the input.
func FuzzEditDistance(f *testing.F) {
	f.Add([]byte("kitten"), []byte("sitting"), uint8(128))
	f.Add([]byte("naïve\xff"), []byte("naive\xfe"), uint8(200))
	f.Add([]byte(strings.Repeat("ab", 70)), []byte(strings.Repeat("ba", 71)), uint8(64))
	f.Fuzz(func(t *testing.T, a, b []byte, th uint8) {
		if len(a) > 1000 || len(b) > 1000 {
			return
		}
		var e Editor
		e.decode(a, b)
		want := levenshteinDP(append([]rune(nil), e.ra...), append([]rune(nil), e.rb...))
		if got := e.Distance(a, b); got != want {
			t.Fatalf("Distance = %d, want %d", got, want)
		}
		l := max(len(e.ra), len(e.rb))
		if l == 0 {
			return
		}
		wantS := 1 - float64(want)/float64(l)
		tt := float64(th) / 255
		if s, ok := e.SimilarityAtLeast(a, b, tt); ok != (wantS >= tt) || ok && s != wantS {
			t.Fatalf("SimilarityAtLeast(%v) = %v, %v; similarity %v", tt, s, ok, wantS)
		}
	})
}
