package pipeline

import (
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// The index stage's rules compare a document with its candidates on their
// stored shingle samples (p.oneText, resemblesOn): genericText asks
// whether a candidate is the document's own text, copyOwnLinks whether it
// is a near duplicate, both on the same two samples. One intersection answers
// both (verify.Overlap), computed once per job and candidate.

// overlapMemo is the overlap of a job's sample with one candidate's (f).
type overlapMemo struct {
	f  *sketch.Features
	o  verify.Overlap
	ok bool
}

// docOverlap returns the overlap of j's stored sample with that of its
// candidate j.cands[i], whose features are f, aligned to a common rate
// (sketch.AlignSamples): computed the first time it is asked for j.
func (j *job) docOverlap(i int, f *sketch.Features) verify.Overlap {
	if len(j.overlaps) != len(j.cands) {
		j.overlaps = make([]overlapMemo, len(j.cands))
	}
	m := &j.overlaps[i]
	if !m.ok || m.f != f {
		sa, sb, _, _ := sketch.AlignSamples(j.feats, f)
		*m = overlapMemo{f: f, o: verify.OverlapOf(sa, sb), ok: true}
	}
	return m.o
}

// docOneText is p.oneText(j.feats, f, nil, j.discount.TemplateOf(f)) for
// j's candidate j.cands[i] (features f).
func (p *Pipeline) docOneText(j *job, i int, f *sketch.Features) bool {
	if tpl := j.discount.TemplateOf(f); len(tpl) > 0 {
		return p.oneText(j.feats, f, nil, tpl)
	}
	return p.oneTextOn(j.docOverlap(i, f))
}

// docResembles reports whether j and its candidate j.cands[i] (features
// f) are near duplicates by the profile's resemblance on their aligned
// samples.
func (p *Pipeline) docResembles(j *job, i int, f *sketch.Features) bool {
	return p.resemblesOn(j.docOverlap(i, f))
}

// resemblesOn reports whether two aligned stored samples
// (sketch.AlignSamples) whose overlap is o are near duplicates by the
// profile's resemblance; empty samples are not.
func (p *Pipeline) resemblesOn(o verify.Overlap) bool {
	return o.A > 0 && o.B > 0 && o.Jaccard() >= p.threshold(verify.MethodJaccard, verify.DefaultJaccard)
}

// oneTextOn is oneText's test on the overlap of two samples (outside
// what it drops): near duplicates by the profile's resemblance, or one
// holding the other at its containment; empty samples are neither.
func (p *Pipeline) oneTextOn(o verify.Overlap) bool {
	if o.A == 0 || o.B == 0 {
		return false
	}
	ab, ba := o.Containment()
	return p.resemblesOn(o) || max(ab, ba) >= p.threshold(verify.MethodContainment, verify.DefaultContainment)
}
