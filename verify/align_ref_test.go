package verify

import (
	"hash/fnv"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/dataset"
	"github.com/neardup/neardup/sketch"
)

// refRun is a maximal common run of words: a[A, A+N) equals b[B, B+N).
type refRun struct{ A, B, N int }

// refRuns is the reference aligner: the maximal common runs of words of a
// and b of at least min words, by brute force (the common-suffix lengths
// of every pair of positions, O(len(a)·len(b))). It knows the words
// themselves, where the aligner knows 3 bits of each shingle.
func refRuns(a, b []string, min int) []refRun {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	var runs []refRun
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				cur[j] = prev[j-1] + 1
			} else {
				cur[j] = 0
			}
			// A run ends at (i, j) when it cannot go on.
			if n := cur[j]; n >= min && (i == len(a) || j == len(b) || a[i] != b[j]) {
				runs = append(runs, refRun{i - n, j - n, n})
			}
		}
		prev, cur = cur, prev
	}
	return runs
}

// alignWords builds the aligner's view of a word stream as the sketch
// does: a k-word shingle hash per position, its top FpBits bits, the
// winnowing anchors at window w, and each word's place in the text (words
// joined by one space).
func alignWords(words []string, k, w int) AlignSide {
	var s AlignSide
	var hs []uint64
	for i := 0; i+k <= len(words); i++ {
		h := fnv.New64a()
		h.Write([]byte(strings.Join(words[i:i+k], " ")))
		x := sketch.Mix64(h.Sum64())
		hs = append(hs, x)
		s.Fp = append(s.Fp, byte(x>>(64-FpBits)))
	}
	for _, a := range sketch.Winnow(nil, hs, w) {
		s.Anchors = append(s.Anchors, AlignAnchor{Hash: uint32(a.Hash >> 32), Pos: a.Pos})
	}
	at := uint32(0)
	for _, x := range words {
		n := uint32(len([]rune(x)))
		s.Starts, s.Ends = append(s.Starts, at), append(s.Ends, at+n)
		at += n + 1
	}
	return s
}

// TestAlignAgainstReference: a passage covers the copied words. Pairs of
// real-text documents (cut at random from two Gutenberg first editions),
// the second holding a copy of a span of the first (40 to 200 words), one
// in three with a word changed inside it: each passage the
// aligner reports, mapped to words ([A0, A1+k−1) for shingles of k
// words), is compared with the reference aligner's common runs (refRuns:
// the words themselves, by brute force). It never misses a copied word,
// and a passage ends past the copy only when a word next to it has a
// fingerprint and a length equal to the word next to the copy on the
// other side: without the words' lengths (the aligner before issue 37)
// one end in about eight did (the README's example took in one word
// before the quote: aligned 24 → 25, offset 299 → 294).
func TestAlignAgainstReference(t *testing.T) {
	// The first document is cut from one book, the rest of the second
	// from another, so that they share only the copy.
	var texts [2][]string
	for i, name := range []string{"pg1342.txt", "pg11.txt"} {
		b, err := os.ReadFile(dataset.Gutenberg(t, name))
		if err != nil {
			t.Fatal(err)
		}
		texts[i] = strings.Fields(string(b))
	}
	const k, w, trials = 5, 26, 3000
	r := rand.New(rand.NewPCG(37, 6))
	cut := func(book, n int) []string {
		text := texts[book]
		at := r.IntN(len(text) - n)
		return append([]string(nil), text[at:at+n]...)
	}
	var al PassageAligner
	type tally struct {
		ends, exact, over, short, missed int
		past                             [10]int // ends past the copy by n words (9: 9 or more)
	}
	var with, without tally
	for range trials {
		a := cut(0, 200+r.IntN(200))
		span := 40 + r.IntN(161)
		from := r.IntN(len(a) - span + 1)
		copied := append([]string(nil), a[from:from+span]...)
		if r.IntN(3) == 0 { // a word changed inside: the aligner bridges it
			copied[10+r.IntN(span-20)] = "CHANGED"
		}
		rest := cut(1, 200+r.IntN(200))
		at := r.IntN(len(rest) + 1)
		bw := append(append(append([]string(nil), rest[:at]...), copied...), rest[at:]...)

		// The reference: the longest common run of words, joined with the
		// common runs of at least k words (a shingle in common) that
		// follow it on its diagonal across a gap of at most 12 words (the
		// changed word, which breaks k shingles).
		runs := refRuns(a, bw, k)
		if len(runs) == 0 {
			continue
		}
		best := runs[0]
		for _, x := range runs {
			if x.N > best.N {
				best = x
			}
		}
		if best.N < k+w { // shorter than the anchors guarantee
			continue
		}
		wantA0, wantA1, wantB0, wantB1 := best.A, best.A+best.N, best.B, best.B+best.N
		for grown := true; grown; {
			grown = false
			for _, x := range runs {
				diag := (x.B - x.A) - (wantB0 - wantA0)
				if diag < -3 || diag > 3 {
					continue
				}
				switch {
				case x.A >= wantA1 && x.A-wantA1 <= 12 && x.B >= wantB1:
					wantA1, wantB1, grown = x.A+x.N, x.B+x.N, true
				case x.A+x.N <= wantA0 && wantA0-(x.A+x.N) <= 12 && x.B+x.N <= wantB0:
					wantA0, wantB0, grown = x.A, x.B, true
				}
			}
		}

		sa, sb := alignWords(a, k, w), alignWords(bw, k, w)
		for _, c := range []struct {
			words bool
			tl    *tally
		}{{true, &with}, {false, &without}} {
			x, y := sa, sb
			if !c.words {
				x.Starts, x.Ends, y.Starts, y.Ends = nil, nil, nil, nil
			}
			ps, _ := al.Align(nil, x, y, AlignOptions{MinMatched: 20})
			c.tl.ends += 2
			if len(ps) != 1 {
				c.tl.missed++
				continue
			}
			p := ps[0]
			gotA0, gotA1, gotB0, gotB1 := p.A0, p.A1+k-1, p.B0, p.B1+k-1
			for _, d := range [][2]int{{wantA0 - gotA0, wantB0 - gotB0}, {gotA1 - wantA1, gotB1 - wantB1}} {
				switch {
				case d[0] == 0 && d[1] == 0:
					c.tl.exact++
				case d[0] < 0 || d[1] < 0:
					c.tl.short++
				default:
					c.tl.over++
					c.tl.past[min(max(d[0], d[1]), 9)]++
				}
			}
		}
	}
	t.Logf("%d pairs, %d passage ends: with the words' lengths %d exact, %d past the copy (by n words: %v), %d short, %d passages missed; fingerprints only %d exact, %d past (%v), %d short, %d missed",
		trials, with.ends, with.exact, with.over, with.past, with.short, with.missed, without.exact, without.over, without.past, without.short, without.missed)
	if with.missed > 0 || with.short > 0 {
		t.Errorf("%d passages missed, %d ends short of the copy: a copied word was left out", with.missed, with.short)
	}
	// An end goes past the copy when the word beside it matches by
	// fingerprint (1/8) and length (about 1/7 in this text): under 2.5%
	// of the ends, against about 1/8 with fingerprints only.
	if rate := float64(with.over) / float64(with.ends); rate > 0.025 {
		t.Errorf("%.3f of the passage ends go past the copy, want ≤ 0.025", rate)
	}
	if without.over <= 3*with.over {
		t.Errorf("the words' lengths take the ends past the copy from %d to only %d", without.over, with.over)
	}
}

// BenchmarkAlignWords aligns a 1,000-word text against another holding a
// 300-word copy of it, with the words' lengths (as the verifier does) and
// with fingerprints only.
func BenchmarkAlignWords(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	vocab := make([]string, 5000)
	for i := range vocab {
		w := make([]byte, 2+r.IntN(9))
		for j := range w {
			w[j] = byte('a' + r.IntN(26))
		}
		vocab[i] = string(w)
	}
	words := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = vocab[r.IntN(len(vocab))]
		}
		return out
	}
	x, y := words(1000), words(1000)
	copy(y[400:700], x[200:500])
	sx, sy := alignWords(x, 5, 36), alignWords(y, 5, 36)
	for _, c := range []struct {
		name  string
		words bool
	}{{"lengths", true}, {"fingerprints", false}} {
		b.Run(c.name, func(b *testing.B) {
			a, bb := sx, sy
			if !c.words {
				a.Starts, a.Ends, bb.Starts, bb.Ends = nil, nil, nil, nil
			}
			var al PassageAligner
			var dst []AlignPassage
			b.ReportAllocs()
			for b.Loop() {
				dst, _ = al.Align(dst[:0], a, bb, AlignOptions{})
			}
		})
	}
}
