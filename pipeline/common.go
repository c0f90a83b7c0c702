package pipeline

import (
	"slices"

	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// MaxDiscountShare bounds the share of a document that verification may
// leave out as boilerplate. Keys become common when many documents hold
// them: a site's template around different articles, but also the text of
// a document copied many times. The two look alike to an index; what
// tells them apart is what is left. A page whose common passages frame a
// main text of its own (at least 1 − MaxDiscountShare of it) is judged on
// that text; a document that is mostly common text is a copy in a large
// cluster, or a page that is all template, and is judged whole.
const MaxDiscountShare = 2.0 / 3

// minRun is the fewest common anchors that make a common passage.
const minRun = 2

// discount computes what verification leaves out of j: its common
// passages. A common passage is a run of at least two common anchors,
// each within a winnowing window of the next, widened by a window less
// one on both sides (where winnowing may have placed no anchor); a single
// common anchor is a frequent phrase, not a passage. It sets
// j.commonShare, and returns nil when the document has no common passage.
// A document whose common passages cover more than MaxDiscountShare of it
// is judged whole on resemblance and containment; its passages are still
// evidence only beyond the common ones.
func (p *Pipeline) discount(j *job) *verify.Discount {
	if len(j.res.CommonAnchors) == 0 || j.feats == nil || len(j.seq) == 0 {
		return nil
	}
	as := j.feats.Passage.Anchors
	keys := j.entry.Anchors[:min(j.sentenceBase, len(j.entry.Anchors), len(as))]
	n := len(j.seq)
	w := sketch.PassageWindow(n, p.passageWords(), p.cfg.Sketch.Shingle)
	var d verify.Discount
	first, last, count := -1, -1, 0 // the current run of common anchors
	flush := func() {
		if count >= minRun {
			lo, hi := max(first-(w-1), 0), min(last+w, n)
			if k := len(d.Common); k > 0 && d.Common[k-1].Hi >= lo {
				d.Common[k-1].Hi = hi
			} else {
				d.Common = append(d.Common, verify.Range{Lo: lo, Hi: hi})
			}
		}
		first, last, count = -1, -1, 0
	}
	for i, k := range keys {
		pos := int(as[i].Pos)
		if _, ok := slices.BinarySearch(j.res.CommonAnchors, k); !ok || pos >= n {
			flush()
			continue
		}
		if count > 0 && pos-last > w {
			flush()
		}
		if count == 0 {
			first = pos
		}
		last = pos
		count++
	}
	flush()
	if len(d.Common) == 0 {
		return nil
	}
	covered := 0
	for _, r := range d.Common {
		covered += r.Hi - r.Lo
	}
	j.commonShare = float64(covered) / float64(n)
	if j.commonShare <= MaxDiscountShare {
		for _, r := range d.Common {
			for _, h := range j.seq[r.Lo:r.Hi] {
				d.Shingles = append(d.Shingles, uint64(h))
			}
		}
		slices.Sort(d.Shingles)
		d.Shingles = slices.Compact(d.Shingles)
	}
	return &d
}
