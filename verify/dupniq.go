package verify

import (
	"fmt"
	"math"
)

// DUPNIQ thresholds (Yalniz, Can, Manmatha, CIKM 2011, §4.3): the values
// that maximised F-measure on the paper's 151-book training set and held
// on its 1K, 3K (French) and 100K sets.
const (
	// DefaultCS is the DUPNIQ-cs threshold.
	DefaultCS = 0.12
	// DefaultITS is the DUPNIQ-its threshold. its had the best F-measure
	// on the training, 1K and 3K sets and on partial duplicates.
	DefaultITS = 0.72
)

// Score names a DUPNIQ normalisation of the LCS length.
type Score string

const (
	// ScoreITS is the information-theoretic score [ITS].
	ScoreITS Score = "its"
	// ScoreCS is the correlation score [CS].
	ScoreCS Score = "cs"
)

// CS is the DUPNIQ correlation score |LCS| / √(|X|·|Y|) for an LCS of
// length lcs between sequences of lengths x and y. It lies in [0, 1] and
// is 1 for identical sequences; it is 0 when either sequence is empty.
func CS(lcs, x, y int) float64 {
	if lcs <= 0 || x <= 0 || y <= 0 {
		return 0
	}
	return float64(lcs) / math.Sqrt(float64(x)*float64(y))
}

// ITS is the DUPNIQ information-theoretic score
// log|LCS| / log(|X| + |Y| − |LCS|), after Lin's similarity: log of the
// common part over log of the whole description. It lies in [0, 1] and is
// 1 for identical sequences. As in the paper it is 0 when there is no
// common word; it is also 0 for an LCS of one word (log 1 = 0), except
// that two identical one-word sequences score 1, the limit for identical
// sequences. Unlike [CS] it rewards a long shared part even when one book
// is much longer, which is why it finds partial duplicates better.
func ITS(lcs, x, y int) float64 {
	if lcs <= 0 || x <= 0 || y <= 0 {
		return 0
	}
	whole := x + y - lcs
	if whole <= 1 {
		return 1
	}
	return math.Log(float64(lcs)) / math.Log(float64(whole))
}

// MinLCS is DUPNIQ's lower bound L: the least LCS length for which score
// s of sequences of lengths x and y reaches t. Both scores grow with the
// LCS, and the LCS is at most |X ∩ Y|, so a pair whose common words are
// fewer than L cannot reach t and needs no alignment. MinLCS returns
// min(x, y)+1 when no LCS can reach t, and 0 when t ≤ 0. It evaluates the
// same expressions as [CS] and [ITS], so the prune agrees exactly with the
// decision.
func MinLCS(s Score, t float64, x, y int) (int, error) {
	if s != ScoreCS && s != ScoreITS {
		return 0, fmt.Errorf("verify: score %q: want %q or %q", s, ScoreITS, ScoreCS)
	}
	return minLCS(s, t, x, y), nil
}

// score evaluates s, a validated Score.
func score(s Score, lcs, x, y int) float64 {
	if s == ScoreCS {
		return CS(lcs, x, y)
	}
	return ITS(lcs, x, y)
}

func minLCS(s Score, t float64, x, y int) int {
	if t <= 0 {
		return 0
	}
	var guess float64
	if s == ScoreCS {
		guess = t * math.Sqrt(float64(x)*float64(y))
	} else {
		// l ≥ (x+y−l)^t: three fixed-point steps from (x+y)^t land within
		// a unit, since the map's slope t·(x+y−l)^(t−1) is far below 1.
		g := math.Pow(float64(x+y), t)
		for range 3 {
			g = math.Pow(math.Max(float64(x+y)-g, 1), t)
		}
		guess = g
	}
	hi := min(x, y)
	if math.IsNaN(guess) || guess > float64(hi) {
		guess = float64(hi)
	}
	// Step to the exact boundary: a few evaluations from a good guess,
	// still correct from any start.
	return minSatisfying(int(math.Ceil(guess)), 1, hi, func(l int) bool { return score(s, l, x, y) >= t })
}

// minSatisfying returns the least i in [lo, hi] with ok(i) for a predicate
// monotone in i, or hi+1 when ok(hi) is false. It probes near guess first
// and falls back to binary search, so a good guess costs a few
// evaluations and a poor one O(log(hi−lo)).
func minSatisfying(guess, lo, hi int, ok func(int) bool) int {
	if hi < lo || !ok(hi) {
		return hi + 1
	}
	g := min(max(guess, lo), hi)
	// Bracket [a, b] with ok(b) and (a == lo or !ok(a)).
	a, b := lo, hi
	if ok(g) {
		b = g
		if g-4 >= lo && !ok(g-4) {
			a = g - 4
		}
	} else {
		a = g
		if g+4 <= hi && ok(g+4) {
			b = g + 4
		}
	}
	if ok(a) {
		return a
	}
	// Invariant: !ok(a), ok(b).
	for b-a > 1 {
		m := a + (b-a)/2
		if ok(m) {
			b = m
		} else {
			a = m
		}
	}
	return b
}
