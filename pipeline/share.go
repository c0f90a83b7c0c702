package pipeline

import (
	"math"
	"slices"

	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// passageShares returns the share of the document's words and of the
// candidate's words that the aligned passages al cover (each side's union
// of the words of its passages over its word count), rounded to three
// decimals: how much of each text the copy is. A passage of shingle
// positions [p0, p1) covers the words [p0, p1+k−1). Both are 0 when
// either side has no passage section.
func passageShares(doc, cand *sketch.Features, al []verify.AlignPassage, k int) (share, matchShare float64) {
	if len(al) == 0 || doc == nil || cand == nil {
		return 0, 0
	}
	a := make([]verify.Range, 0, len(al))
	b := make([]verify.Range, 0, len(al))
	for _, x := range al {
		a = append(a, verify.Range{Lo: x.A0, Hi: x.A1 + k - 1})
		b = append(b, verify.Range{Lo: x.B0, Hi: x.B1 + k - 1})
	}
	return coveredShare(a, len(doc.Passage.Starts)), coveredShare(b, len(cand.Passage.Starts))
}

// coveredShare is the share of n words that the union of rs covers,
// rounded to three decimals; rs is sorted in place.
func coveredShare(rs []verify.Range, n int) float64 {
	if n <= 0 {
		return 0
	}
	slices.SortFunc(rs, func(x, y verify.Range) int { return x.Lo - y.Lo })
	covered, end := 0, 0
	for _, r := range rs {
		lo, hi := max(r.Lo, end, 0), min(r.Hi, n)
		if hi > lo {
			covered += hi - lo
			end = hi
		}
	}
	return math.Round(1000*float64(covered)/float64(n)) / 1000
}
