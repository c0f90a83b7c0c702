package pipeline

import (
	"math"
	"slices"

	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// mainWords counts a page's main text (its words outside its template)
// and those of them a match's passages cover.
type mainWords struct{ covered, total int }

// share is covered over total, rounded to three decimals (0 when total is).
func (w mainWords) share() float64 {
	if w.total == 0 {
		return 0
	}
	return math.Round(1000*float64(w.covered)/float64(w.total)) / 1000
}

// passageWords counts, on each side, the main text's words and those the
// aligned passages al cover (the union of the words of its passages); their
// share (rounded to three decimals) is how much of each text the copy is.
// A passage of shingle positions [p0, p1) covers the words [p0, p1+k−1).
// Both are zero when either side has no passage section. The words of
// each side's site template (docTpl, candTpl: shingle positions, as
// template passages are) count on neither side: it is a share of the main
// text.
func passageWords(doc, cand *sketch.Features, al []verify.AlignPassage, k int, docTpl, candTpl []verify.Range) (a, b mainWords) {
	if len(al) == 0 || doc == nil || cand == nil {
		return mainWords{}, mainWords{}
	}
	ra := make([]verify.Range, 0, len(al))
	rb := make([]verify.Range, 0, len(al))
	for _, x := range al {
		ra = append(ra, verify.Range{Lo: x.A0, Hi: x.A1 + k - 1})
		rb = append(rb, verify.Range{Lo: x.B0, Hi: x.B1 + k - 1})
	}
	return mainCover(ra, len(doc.Passage.Starts), docTpl, k), mainCover(rb, len(cand.Passage.Starts), candTpl, k)
}

// mainCover counts the n words less the words of the template passages
// tpl (shingle positions), and those of them rs covers.
func mainCover(rs []verify.Range, n int, tpl []verify.Range, k int) mainWords {
	if len(tpl) == 0 {
		return mainWords{covered: covered(rs, n), total: max(n, 0)}
	}
	own := make([]bool, n) // the main text's words
	for i := range own {
		own[i] = true
	}
	for _, r := range tpl {
		for i := max(r.Lo, 0); i < min(r.Hi+k-1, n); i++ {
			own[i] = false
		}
	}
	in := make([]bool, n)
	for _, r := range rs {
		for i := max(r.Lo, 0); i < min(r.Hi, n); i++ {
			in[i] = true
		}
	}
	var w mainWords
	for i := range n {
		if own[i] {
			w.total++
			if in[i] {
				w.covered++
			}
		}
	}
	return w
}

// covered counts the words of [0, n) that the union of rs covers; rs is
// sorted in place.
func covered(rs []verify.Range, n int) int {
	slices.SortFunc(rs, func(x, y verify.Range) int { return x.Lo - y.Lo })
	c, end := 0, 0
	for _, r := range rs {
		lo, hi := max(r.Lo, end, 0), min(r.Hi, n)
		if hi > lo {
			c += hi - lo
			end = hi
		}
	}
	return c
}
