package pipeline

import (
	"slices"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// minGenericTexts is how many distinct earlier texts must hold a passage
// of a document for it to be no evidence of a link between the document
// and any of them but the one that held it first. Two earlier texts
// holding a passage is what a copy is (its source and one earlier copy);
// a generated section (javadoc's inherited descriptions, a "Methods
// inherited from" list) is held by every page that carries it, each with
// content of its own. PAN13 shows a source passage that three
// suspicious documents copied (source-document01238): the third copy
// meets three earlier texts holding it, and its link to the source, the
// first holder, stays.
const minGenericTexts = 3

// genericText weighs evidence by how specific it is. A passage of the
// document that at least minGenericTexts distinct earlier texts hold
// says nothing of which of them the document copies: it is no evidence
// against any of them but its first holder (the earliest candidate
// holding it), which the others hold after it, as copies of it or pages
// inheriting it; a source's copied text stays evidence against the
// source (markSources). Texts are counted, not documents: candidates
// that are one text (near duplicates by the profile's resemblance, or
// one holding the other by its containment, outside their template
// records: p.oneText, the test of the site rules) count once, so the
// copies of a syndicated article, however many, are one text holding it,
// and candidates that are one text with the document are not counted.
// What holds a passage is read from the candidates' stored passage
// anchors, so the count is of the holders the index returned (a common
// key returns its exemplar, the first holder): it can only be too low,
// which keeps evidence. It needs no url, no count of the index and no
// index call. set is scratch, empty.
func (p *Pipeline) genericText(j *job, feats func(*index.Candidate) *sketch.Features, set *hashBits) {
	if j.feats == nil || len(j.seq) == 0 || len(j.feats.Passage.Anchors) == 0 {
		return
	}
	cands := j.cands[:min(j.earlier, len(j.cands))]
	if len(cands) < minGenericTexts {
		return
	}
	mine := anchorSet(j.feats.Passage.Anchors) // template.go
	fs := make([]*sketch.Features, len(cands))
	holders := make([][]int, len(mine)) // per anchor of mine: the other texts' candidates that hold it
	for i := range cands {
		f := feats(&cands[i])
		if f == nil {
			continue
		}
		fs[i] = f
		set.addAnchors(f.Passage.Anchors)
		if slices.IndexFunc(mine, set.has) >= 0 && !p.docOneText(j, i, f) { // not the document's own text (overlap.go)
			for k, h := range mine {
				if set.has(h) {
					holders[k] = append(holders[k], i)
				}
			}
		}
		set.clear()
	}
	same := map[[2]int]bool{} // pairs of candidates found one text, or not
	oneText := func(a, b int) bool {
		k := [2]int{min(a, b), max(a, b)}
		v, ok := same[k]
		if !ok {
			v = p.oneText(fs[a], fs[b], j.discount.TemplateOf(fs[a]), j.discount.TemplateOf(fs[b]))
			same[k] = v
		}
		return v
	}
	texts := func(hs []int) int {
		var reps []int // one candidate of each distinct text
		for _, i := range hs {
			found := false
			for _, r := range reps {
				if oneText(r, i) {
					found = true
					break
				}
			}
			if !found {
				reps = append(reps, i)
				if len(reps) >= minGenericTexts {
					break
				}
			}
		}
		return len(reps)
	}
	n := len(j.seq)
	w := sketch.PassageWindow(n, p.passageWords(), p.cfg.Sketch.Shingle)
	type generic struct {
		r     verify.Range
		first int // the candidate that held it first
	}
	var gs []generic
	for _, a := range j.feats.Passage.Anchors {
		k, _ := slices.BinarySearch(mine, uint32(a.Hash))
		hs := holders[k]
		if pos := int(a.Pos); len(hs) >= minGenericTexts && pos < n && texts(hs) >= minGenericTexts {
			first := hs[0]
			for _, i := range hs[1:] {
				if cands[i].Seq < cands[first].Seq {
					first = i
				}
			}
			gs = append(gs, generic{verify.Range{Lo: max(pos-(w-1), 0), Hi: min(pos+w, n)}, first})
		}
	}
	if len(gs) == 0 {
		return
	}
	ranges := func(skip int) []verify.Range {
		var rs []verify.Range
		for _, g := range gs {
			if g.first != skip {
				rs = withRanges(rs, []verify.Range{g.r})
			}
		}
		return rs
	}
	if j.discount == nil {
		j.discount = &verify.Discount{}
	}
	d := j.discount
	// A source's copied text stays evidence against it (markSources),
	// and a generic passage against the text that held it first: the
	// others hold it after it (copies of it, or pages that inherit it).
	for k, g := range gs {
		if slices.IndexFunc(gs[:k], func(h generic) bool { return h.first == g.first }) >= 0 {
			continue // named already
		}
		f := fs[g.first]
		if slices.IndexFunc(d.Sources, func(s verify.Source) bool { return s.Features == f }) >= 0 {
			continue
		}
		d.Sources = append(d.Sources, verify.Source{Features: f, Common: withRanges(d.Common, ranges(g.first))})
	}
	d.Common = withRanges(d.Common, ranges(-1))
}
