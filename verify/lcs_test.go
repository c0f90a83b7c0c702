package verify

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/neardup/neardup/sketch"
)

// lcsDP is the textbook O(|a|·|b|) dynamic program over hashes, with two
// rows of memory: the reference that LCS via LIS is tested and benchmarked
// against.
func lcsDP(a, b []sketch.UniqueWord, row []int32) int {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	prev := row[:len(b)+1]
	cur := row[len(b)+1 : 2*(len(b)+1)]
	clear(prev)
	cur[0] = 0
	for _, x := range a {
		for j, y := range b {
			if x.Hash == y.Hash {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return int(prev[len(b)])
}

func dpRow(a, b []sketch.UniqueWord) []int32 { return make([]int32, 2*(len(b)+1)) }

// randSeqs returns two unique-word sequences of lengths na and nb whose
// words come from a vocabulary of size vocab, each sequence without
// repeats; a smaller vocabulary means more common words. Positions grow
// by random gaps as in a document. With order true, b keeps most common
// words in a's order (an edited copy), else its order is random.
func randSeqs(r *rand.Rand, na, nb, vocab int, order bool) (a, b []sketch.UniqueWord) {
	pick := func(n int) []int {
		p := r.Perm(vocab)[:n]
		return p
	}
	pa := pick(na)
	var pb []int
	if order {
		// Copy a with random deletions, insertions and a few swaps.
		used := make(map[int]bool, na+nb)
		for _, w := range pa {
			used[w] = true
		}
		fresh := func() (int, bool) {
			w := r.IntN(vocab)
			if used[w] {
				return 0, false
			}
			used[w] = true
			return w, true
		}
		for _, w := range pa {
			if len(pb) < nb && r.IntN(4) != 0 {
				pb = append(pb, w)
			}
			if len(pb) < nb && r.IntN(3) == 0 {
				if w2, ok := fresh(); ok {
					pb = append(pb, w2)
				}
			}
		}
		for tries := 0; len(pb) < nb && tries < 100*nb; tries++ {
			if w2, ok := fresh(); ok {
				pb = append(pb, w2)
			}
		}
		// Words of a left out above, when the vocabulary ran short.
		for i := 0; len(pb) < nb; i++ {
			if !slices.Contains(pb, pa[i]) {
				pb = append(pb, pa[i])
			}
		}
		for range len(pb) / 20 {
			i, j := r.IntN(len(pb)), r.IntN(len(pb))
			pb[i], pb[j] = pb[j], pb[i]
		}
	} else {
		pb = pick(nb)
	}
	return toSeq(r, pa), toSeq(r, pb)
}

func toSeq(r *rand.Rand, words []int) []sketch.UniqueWord {
	out := make([]sketch.UniqueWord, len(words))
	pos := uint32(0)
	for i, w := range words {
		pos += 1 + uint32(r.IntN(30))
		out[i] = sketch.UniqueWord{Hash: sketch.Mix64(uint64(w) + 1), Pos: pos}
	}
	return out
}

// checkPairs verifies that pairs is a common subsequence of a and b:
// positions strictly increasing on both sides, hashes equal.
func checkPairs(t *testing.T, a, b []sketch.UniqueWord, aln Alignment) {
	t.Helper()
	if len(aln.Pairs) != aln.Len {
		t.Fatalf("%d pairs for LCS length %d", len(aln.Pairs), aln.Len)
	}
	ha := make(map[uint32]uint64, len(a))
	for _, w := range a {
		ha[w.Pos] = w.Hash
	}
	hb := make(map[uint32]uint64, len(b))
	for _, w := range b {
		hb[w.Pos] = w.Hash
	}
	for k, p := range aln.Pairs {
		x, okA := ha[p[0]]
		y, okB := hb[p[1]]
		if !okA || !okB || x != y {
			t.Fatalf("pair %d %v: not a common word", k, p)
		}
		if k > 0 && (p[0] <= aln.Pairs[k-1][0] || p[1] <= aln.Pairs[k-1][1]) {
			t.Fatalf("pair %d %v after %v: not increasing", k, p, aln.Pairs[k-1])
		}
	}
}

// TestLCSMatchesDP is the property test: on random sequences of many
// shapes, LCS via LIS has the length of the O(n·m) dynamic program, its
// pairs form a common subsequence, and the result is symmetric.
func TestLCSMatchesDP(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var al Aligner
	for iter := range 600 {
		na, nb := r.IntN(200), r.IntN(200)
		vocab := max(na, nb) + r.IntN(3*max(na, nb)+1)
		a, b := randSeqs(r, na, nb, vocab, iter%2 == 0)
		want := lcsDP(a, b, dpRow(a, b))
		aln := al.Align(a, b)
		if aln.Len != want {
			t.Fatalf("iter %d |a|=%d |b|=%d: LCS = %d, DP = %d", iter, na, nb, aln.Len, want)
		}
		checkPairs(t, a, b, aln)
		if n, common, ok := al.Len(a, b, 0); n != want || !ok || common != aln.Common {
			t.Fatalf("Len = %d, %d, %v; want %d, %d, true", n, common, ok, want, aln.Common)
		}
		if back := LCS(b, a); back.Len != want || back.Common != aln.Common {
			t.Fatalf("LCS(b, a) = %d/%d, LCS(a, b) = %d/%d", back.Len, back.Common, want, aln.Common)
		}
		if wantC := commonWords(a, b); aln.Common != wantC {
			t.Fatalf("Common = %d, want %d", aln.Common, wantC)
		}
	}
}

func commonWords(a, b []sketch.UniqueWord) int {
	in := make(map[uint64]bool, len(a))
	for _, w := range a {
		in[w.Hash] = true
	}
	n := 0
	for _, w := range b {
		if in[w.Hash] {
			n++
		}
	}
	return n
}

func TestLCSTable(t *testing.T) {
	w := func(hs ...uint64) []sketch.UniqueWord {
		out := make([]sketch.UniqueWord, len(hs))
		for i, h := range hs {
			out[i] = sketch.UniqueWord{Hash: h, Pos: uint32(10 * i)}
		}
		return out
	}
	tests := []struct {
		name        string
		a, b        []sketch.UniqueWord
		len, common int
		pairs       [][2]uint32
	}{
		{"both empty", nil, nil, 0, 0, nil},
		{"a empty", nil, w(1, 2), 0, 0, nil},
		{"b empty", w(1, 2), nil, 0, 0, nil},
		{"disjoint", w(1, 2, 3), w(4, 5), 0, 0, nil},
		{"identical", w(1, 2, 3), w(1, 2, 3), 3, 3, [][2]uint32{{0, 0}, {10, 10}, {20, 20}}},
		{"reversed", w(1, 2, 3), w(3, 2, 1), 1, 3, nil},
		{"inserted", w(1, 2, 3), w(9, 1, 8, 2, 3, 7), 3, 3, [][2]uint32{{0, 10}, {10, 30}, {20, 40}}},
		{"swap", w(1, 2, 3, 4), w(1, 3, 2, 4), 3, 4, nil},
		{"hash zero", w(0, 5), w(0, 5), 2, 2, [][2]uint32{{0, 0}, {10, 10}}},
		// Contract broken: repeats count once, by first occurrence.
		{"repeats", w(1, 1, 2), w(2, 1, 1), 1, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			aln := LCS(tt.a, tt.b)
			if aln.Len != tt.len || aln.Common != tt.common {
				t.Fatalf("LCS = len %d common %d, want %d %d", aln.Len, aln.Common, tt.len, tt.common)
			}
			if tt.pairs != nil && fmt.Sprint(aln.Pairs) != fmt.Sprint(tt.pairs) {
				t.Fatalf("pairs %v, want %v", aln.Pairs, tt.pairs)
			}
			if aln.Len == 0 && aln.Pairs != nil {
				t.Fatalf("pairs %v for empty LCS", aln.Pairs)
			}
		})
	}
}

func TestAlignerPrune(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var al Aligner
	for range 200 {
		a, b := randSeqs(r, 50+r.IntN(100), 50+r.IntN(100), 400, true)
		full := LCS(a, b)
		minLen := r.IntN(150)
		n, common, ok := al.Len(a, b, minLen)
		switch {
		case ok != (full.Common >= minLen):
			t.Fatalf("minLen %d common %d: ok = %v", minLen, full.Common, ok)
		case ok && n != full.Len:
			t.Fatalf("Len = %d, want %d", n, full.Len)
		case !ok && n != 0:
			t.Fatalf("pruned Len = %d, want 0", n)
		case common != full.Common && minLen <= min(len(a), len(b)):
			t.Fatalf("common = %d, want %d", common, full.Common)
		}
		aln, ok2 := al.AlignAtLeast(a, b, minLen)
		if ok2 != ok || ok && aln.Len != full.Len {
			t.Fatalf("AlignAtLeast = %d, %v; Len = %d, %v", aln.Len, ok2, n, ok)
		}
	}
}

// TestLCSHuge runs 100 000-word sequences: time stays near-linear and the
// Aligner drops its large buffers afterwards.
func TestLCSHuge(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const n = 100_000
	a, b := randSeqs(r, n, n, 3*n, false)
	same := toSeq(r, r.Perm(n))
	var al Aligner
	start := time.Now()
	aln := al.Align(a, b)
	self := al.Align(same, same)
	if el := time.Since(start); el > 2*time.Second && !raceEnabled {
		t.Errorf("two 100k alignments took %v", el)
	}
	if aln.Common == 0 || aln.Len == 0 || aln.Len > aln.Common {
		t.Errorf("random 100k: len %d common %d", aln.Len, aln.Common)
	}
	if self.Len != n || len(self.Pairs) != n {
		t.Errorf("self-alignment of %d words: len %d", n, self.Len)
	}
	if cap(al.slots) > 2*maxRetained || cap(al.seq) > maxRetained {
		t.Errorf("Aligner kept %d slots, %d seq after a huge pair", cap(al.slots), cap(al.seq))
	}
}

func TestLCSAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	a, b := randSeqs(r, 256, 256, 400, true)
	var al Aligner
	al.Len(a, b, 0)
	if n := testing.AllocsPerRun(50, func() { al.Len(a, b, 0) }); n != 0 {
		t.Errorf("Aligner.Len allocates %v times per call", n)
	}
	if n := testing.AllocsPerRun(50, func() { al.Align(a, b) }); n != 1 {
		t.Errorf("Aligner.Align allocates %v times per call, want 1 (the pairs)", n)
	}
}

// TestLCSSpeedup checks LIS against the DP at 256 × 256, pair by pair
// (the same length), and measures the two (run with -v). They are timed in
// alternating rounds and each keeps its fastest round, so a busy machine
// slows neither side alone. The gate that always runs is a floor far below
// the measured 30–40× that still fails if LIS lost its O(n log n)
// advantage (a quadratic LIS is about 1×): ≥ 5×. The documented targets
// (≥ 20×, ≤ 10 µs) are asserted with NEARDUP_PERF=1, on a quiet machine.
func TestLCSSpeedup(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing test")
	}
	assert := os.Getenv("NEARDUP_PERF") == "1"
	r := rand.New(rand.NewPCG(15, 16))
	pairs := make([][2][]sketch.UniqueWord, 32)
	for i := range pairs {
		a, b := randSeqs(r, 256, 256, 400, i%2 == 0)
		pairs[i] = [2][]sketch.UniqueWord{a, b}
	}
	var al Aligner
	row := dpRow(nil, pairs[0][1])
	for i, p := range pairs {
		got, _, _ := al.Len(p[0], p[1], 0)
		if want := lcsDP(p[0], p[1], row); got != want {
			t.Fatalf("pair %d: LIS length %d, DP %d", i, got, want)
		}
	}
	var sink int
	round := func(f func(a, b []sketch.UniqueWord) int) time.Duration {
		start := time.Now()
		for _, p := range pairs {
			sink += f(p[0], p[1])
		}
		return time.Since(start) / time.Duration(len(pairs))
	}
	lis := func(a, b []sketch.UniqueWord) int { n, _, _ := al.Len(a, b, 0); return n }
	dp := func(a, b []sketch.UniqueWord) int { return lcsDP(a, b, row) }
	bestLIS, bestDP := time.Hour, time.Hour
	for range 15 {
		for range 10 {
			bestLIS = min(bestLIS, round(lis))
		}
		bestDP = min(bestDP, round(dp))
	}
	ratio := float64(bestDP) / float64(bestLIS)
	t.Logf("LCS 256×256: LIS %v/pair, DP %v/pair, ratio %.1f× (sink %d)", bestLIS, bestDP, ratio, sink)
	const floor = 5
	if ratio < floor {
		t.Errorf("LIS only %.1f× faster than the DP, want ≥ %d× even on a busy machine", ratio, floor)
	}
	if assert && ratio < 20 {
		t.Errorf("LIS only %.1f× faster than the DP, want ≥ 20×", ratio)
	}
	if assert && bestLIS > 10*time.Microsecond {
		t.Errorf("LIS %v per 256×256 pair, want ≤ 10 µs", bestLIS)
	}
}

// BenchmarkLCS compares LCS via LIS (length only, with pairs) against the
// O(n·m) DP on the same pairs; the ratio of lis-len to dp is the speed-up.
func BenchmarkLCS(b *testing.B) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, n := range []int{64, 256, 1024} {
		pairs := make([][2][]sketch.UniqueWord, 16)
		for i := range pairs {
			a, c := randSeqs(r, n, n, n*3/2, true)
			pairs[i] = [2][]sketch.UniqueWord{a, c}
		}
		b.Run(fmt.Sprintf("lis-len/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var al Aligner
			k := 0
			for b.Loop() {
				p := pairs[k%len(pairs)]
				al.Len(p[0], p[1], 0)
				k++
			}
		})
		b.Run(fmt.Sprintf("lis-pairs/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var al Aligner
			k := 0
			for b.Loop() {
				p := pairs[k%len(pairs)]
				al.Align(p[0], p[1])
				k++
			}
		})
		b.Run(fmt.Sprintf("dp/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			row := dpRow(nil, pairs[0][1])
			k := 0
			for b.Loop() {
				p := pairs[k%len(pairs)]
				lcsDP(p[0], p[1], row)
				k++
			}
		})
	}
}
