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

// minRun is the fewest common anchors that make a common passage, unless
// one of them is held by at least boilerplateDocs documents.
const minRun = 2

// boilerplateDocs is how many documents make one common anchor a common
// passage by itself: a sentence quoted by a few documents is shared by
// as many as copied it, a site's footer by every page of the site.
const boilerplateDocs = 8

// discount computes what verification leaves out of j: its common
// passages. A common passage is a run of at least two common anchors,
// each within a winnowing window of the next, widened by a window less
// one on both sides (where winnowing may have placed no anchor); a single
// common anchor is a frequent phrase, not a passage. It sets
// j.commonShare, and returns nil when the document has no common passage.
// A document whose common passages cover more than MaxDiscountShare of it
// is judged whole on resemblance and containment; its passages are still
// evidence only beyond its template passages (see templateDocs).
func (p *Pipeline) discount(j *job) *verify.Discount {
	if len(j.res.CommonAnchors) == 0 || j.feats == nil || len(j.seq) == 0 {
		return nil
	}
	as := j.feats.Passage.Anchors
	keys := j.entry.Anchors[:min(j.sentenceBase, len(j.entry.Anchors), len(as))]
	n := len(j.seq)
	w := sketch.PassageWindow(n, p.passageWords(), p.cfg.Sketch.Shingle)
	var runs []commonRun
	first, last, count, docs := -1, -1, 0, 0 // the current run of common anchors
	flush := func() {
		if count >= minRun || docs >= boilerplateDocs {
			runs = append(runs, commonRun{Range: verify.Range{Lo: max(first-(w-1), 0), Hi: min(last+w, n)}, docs: docs})
		}
		first, last, count, docs = -1, -1, 0, 0
	}
	for i, k := range keys {
		pos := int(as[i].Pos)
		c, ok := slices.BinarySearch(j.res.CommonAnchors, k)
		if !ok || pos >= n {
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
		if c < len(j.res.CommonAnchorDocs) {
			docs = max(docs, j.res.CommonAnchorDocs[c])
		}
	}
	flush()
	if len(runs) == 0 {
		return nil
	}
	var d verify.Discount
	var all []verify.Range
	thr := templateDocs(runs)
	for _, r := range runs {
		all = addRange(all, r.Range)
		if r.docs >= thr {
			d.Common = addRange(d.Common, r.Range)
		}
	}
	covered := 0
	for _, r := range all {
		covered += r.Hi - r.Lo
	}
	j.commonShare = float64(covered) / float64(n)
	if j.commonShare <= MaxDiscountShare {
		for _, r := range all {
			for _, h := range j.seq[r.Lo:r.Hi] {
				d.Shingles = append(d.Shingles, uint64(h))
			}
		}
		slices.Sort(d.Shingles)
		d.Shingles = slices.Compact(d.Shingles)
	}
	return &d
}

// commonRun is a common passage and the most documents that hold one of
// its anchors.
type commonRun struct {
	verify.Range
	docs int
}

// addRange appends r to rs (sorted by Lo), merged with the last range
// when they overlap or touch.
func addRange(rs []verify.Range, r verify.Range) []verify.Range {
	if k := len(rs); k > 0 && rs[k-1].Hi >= r.Lo {
		rs[k-1].Hi = max(rs[k-1].Hi, r.Hi)
		return rs
	}
	return append(rs, r)
}

// templateDocs returns how many documents hold the document's template:
// its common passages held by at least that many are template (no
// passage evidence), those held by fewer are text that few documents
// copied (a source copied twice is held by three), and are evidence.
//
// A key is common once index.common_docs documents hold it, whether it
// is a site's template or a text copied that many times; what tells them
// apart is who else holds it. A template is held by every page of its
// site, and the stream meets many: when most of the document's common
// text is held by boilerplateDocs documents or more, that is its
// template, and a passage held by fewer is not. When most of it is held
// by fewer (a site the stream has seen few pages of, or no template at
// all), the most widely held of those passages is taken as the template,
// and only passages held by fewer still are evidence: a young site's
// template and a text copied as often look alike, and the stream keeps
// to the template until it has seen the site long enough to tell.
func templateDocs(runs []commonRun) int {
	wide, narrow, most := 0, 0, 0 // positions held by ≥ boilerplateDocs, by fewer, and the most of the fewer
	for _, r := range runs {
		if r.docs >= boilerplateDocs {
			wide += r.Hi - r.Lo
		} else {
			narrow += r.Hi - r.Lo
			most = max(most, r.docs)
		}
	}
	if narrow > wide {
		return most
	}
	return boilerplateDocs
}
