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
// either side has no passage section. The words of each side's site
// template (docTpl, candTpl: shingle positions, as template passages are)
// count on neither side of the share: it is a share of the main text.
func passageShares(doc, cand *sketch.Features, al []verify.AlignPassage, k int, docTpl, candTpl []verify.Range) (share, matchShare float64) {
	if len(al) == 0 || doc == nil || cand == nil {
		return 0, 0
	}
	a := make([]verify.Range, 0, len(al))
	b := make([]verify.Range, 0, len(al))
	for _, x := range al {
		a = append(a, verify.Range{Lo: x.A0, Hi: x.A1 + k - 1})
		b = append(b, verify.Range{Lo: x.B0, Hi: x.B1 + k - 1})
	}
	return mainShare(a, len(doc.Passage.Starts), docTpl, k), mainShare(b, len(cand.Passage.Starts), candTpl, k)
}

// mainShare is coveredShare of n words less the words of the template
// passages tpl (shingle positions), on both sides of the ratio.
func mainShare(rs []verify.Range, n int, tpl []verify.Range, k int) float64 {
	if len(tpl) == 0 {
		return coveredShare(rs, n)
	}
	words := make([]verify.Range, 0, len(tpl))
	for _, r := range tpl {
		words = append(words, verify.Range{Lo: r.Lo, Hi: r.Hi + k - 1})
	}
	slices.SortFunc(words, func(x, y verify.Range) int { return x.Lo - y.Lo })
	own := make([]bool, n) // the main text's words
	for i := range own {
		own[i] = true
	}
	for _, r := range words {
		for i := max(r.Lo, 0); i < min(r.Hi, n); i++ {
			own[i] = false
		}
	}
	total, covered := 0, 0
	in := make([]bool, n)
	for _, r := range rs {
		for i := max(r.Lo, 0); i < min(r.Hi, n); i++ {
			in[i] = true
		}
	}
	for i := range n {
		if own[i] {
			total++
			if in[i] {
				covered++
			}
		}
	}
	if total == 0 {
		return 0
	}
	return math.Round(1000*float64(covered)/float64(total)) / 1000
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
