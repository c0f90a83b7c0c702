package verify

import (
	"cmp"
	"slices"
	"sync"

	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/stream"
)

// Scores are the scores a verification computed (defined with the event
// they are part of, in package stream).
type Scores = stream.Scores

// Verdict is the outcome of verifying one candidate.
type Verdict struct {
	Kind Kind `json:"kind"`
	// Check is the method of the check that fired; for Distinct, the last
	// check that applied to the pair, or empty when none did.
	Check  string `json:"method"`
	Scores Scores `json:"scores"`
	// Passages are the aligned passages of a near or partial verdict, in
	// order of the document's positions, when both documents have passage
	// sections (shingle positions; [sketch.Passage.Range] maps them to
	// text).
	Passages []AlignPassage `json:"-"`
	// Sentences are the matched sentence pairs (sentence mode, whatever
	// Kind is), in order of the document's sentences.
	Sentences []SentencePair `json:"-"`
	// Settled marks a candidate that was not verified (Kind Distinct, no
	// check): a member of its group (Job.Groups) verified before it was
	// a near or exact duplicate.
	Settled bool `json:"settled,omitempty"`
}

// scoreVals backs the pointers of one [Scores], so that a verdict costs
// one allocation however many scores it carries.
type scoreVals struct {
	jaccard, cab, cba, cs, its, edit, alab, alba float64
	hamming, lcs, aligned                        int
	imatch                                       bool
}

// scratch is the reusable memory of one verifying goroutine.
type scratch struct {
	al       Aligner
	ed       Editor
	pa       PassageAligner
	sa, sb   []AlignAnchor
	saFor    *sketch.Features // the document sa holds the anchors of
	passages []AlignPassage
	// Shingle sets less a Discount.
	da, db []uint64
	// Shingle sets less a candidate's own template (Discount.Templates).
	ta, tb []uint64
	// The sentence check.
	ec EditClassifier
	// settled marks the groups of the job being verified that a near or
	// exact verdict settled (Pool, Job.Groups).
	settled []bool
}

// Verifier runs a [Profile]'s cascade on pairs of features. It is safe for
// concurrent use: each call borrows scratch buffers from a sync.Pool.
type Verifier struct {
	p       Profile
	scratch sync.Pool
	// passageFloor is the per-passage floor of the profile's passage
	// check, used for the passages of near and partial verdicts.
	passageFloor int
	// sent is the sentence check (sentOn: the profile has one).
	sent   SentenceCheck
	sentOn bool
}

// New returns a Verifier for p, or an error naming the first invalid
// check. The profile is copied.
func New(p Profile) (*Verifier, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	p.Checks = slices.Clone(p.Checks)
	v := &Verifier{p: p, passageFloor: DefaultPassageShared}
	if p.Sentences != nil {
		c := p.Sentences.WithDefaults()
		if err := c.validate(); err != nil {
			return nil, err
		}
		v.sent, v.sentOn, v.p.Sentences = c, true, &c
	}
	for _, c := range p.Checks {
		if c.Method == MethodPassage && c.MinShared > 0 {
			v.passageFloor = c.MinShared
		}
	}
	v.scratch.New = func() any { return new(scratch) }
	return v, nil
}

// Profile returns a copy of the profile in use.
func (v *Verifier) Profile() Profile {
	p := v.p
	p.Checks = slices.Clone(p.Checks)
	return p
}

// Verify runs the cascade on a, the incoming document, and b, a stored
// candidate. Containment "ab" is the fraction of a found in b. A nil
// document is Distinct with no check applied.
func (v *Verifier) Verify(a, b *sketch.Features) Verdict {
	s := v.scratch.Get().(*scratch)
	s.saFor = nil // the caller's features may have changed since (runTask)
	defer v.scratch.Put(s)
	return v.verify(a, b, nil, s, nil)
}

// VerifyDiscounted is Verify leaving out of both documents what d
// discounts of a (nil: nothing).
func (v *Verifier) VerifyDiscounted(a, b *sketch.Features, d *Discount) Verdict {
	s := v.scratch.Get().(*scratch)
	s.saFor = nil // the caller's features may have changed since (runTask)
	defer v.scratch.Put(s)
	return v.verify(a, b, d, s, nil)
}

// VerifyAll verifies doc against every candidate, appending the verdicts
// to dst in candidate order.
func (v *Verifier) VerifyAll(dst []Verdict, doc *sketch.Features, cands []*sketch.Features) []Verdict {
	s := v.scratch.Get().(*scratch)
	s.saFor = nil // the caller's features may have changed since (runTask)
	defer v.scratch.Put(s)
	vals := make([]scoreVals, len(cands))
	for i, c := range cands {
		dst = append(dst, v.verify(doc, c, nil, s, &vals[i]))
	}
	return dst
}

// pair is the state of one verification: the aligned inputs and what has
// been computed so far, so that checks sharing a computation run it once.
type pair struct {
	a, b     *sketch.Features
	d        *Discount // nil: nothing discounted
	sa, sb   []uint64
	ua, ub   []sketch.UniqueWord
	ushift   uint // unique-word sampling shift of both sequences
	vals     *scoreVals
	sc       Scores
	s        *scratch
	interNed int  // need the intersection was computed with, −1 if not yet
	inter    int  // |A ∩ B| if interOK, else an upper bound below interNed
	interOK  bool //
	lcsNeed  int  // minimum length the LCS was run with, −1 if not yet
	lcsLen   int  //
	lcsOK    bool // the alignment ran (common words ≥ lcsNeed)
	psgDone  bool // passages aligned (p.s.passages, p.psgA, p.psgB)
	psgMin   int  // the per-passage floor they were aligned with
	psgA     int  // aligned positions of a
	psgB     int  // aligned positions of b (bounded by each passage's extent)
}

func (p *pair) scores() *scoreVals {
	if p.vals == nil {
		p.vals = new(scoreVals)
	}
	return p.vals
}

func (v *Verifier) verify(a, b *sketch.Features, d *Discount, s *scratch, vals *scoreVals) Verdict {
	if a == nil || b == nil {
		return Verdict{Kind: Distinct}
	}
	if d.empty() || slices.Contains(d.Whole, b) {
		d = nil
	}
	p := pair{a: a, b: b, d: d, s: s, vals: vals, interNed: -1, lcsNeed: -1}
	p.sa, p.sb, p.ua, p.ub = a.Shingles, b.Shingles, a.Unique, b.Unique
	if a.ShingleShift != b.ShingleShift || a.UniqueShift != b.UniqueShift {
		p.sa, p.sb, p.ua, p.ub = sketch.AlignSamples(a, b)
	}
	if d != nil && len(d.Shingles) > 0 {
		ds := d.Shingles // stored at a's width
		if b.ShingleShift < a.ShingleShift {
			ds = sketch.MaskShingles(nil, ds, b.ShingleShift) // the narrower width AlignSamples cut to
		}
		s.da = without(s.da[:0], p.sa, ds)
		s.db = without(s.db[:0], p.sb, ds)
		p.sa, p.sb = s.da, s.db
	}
	if ts := d.TemplateOf(b); len(ts) > 0 {
		// The candidate's own template (another site's), stored at b's
		// width, out of both sides too.
		if a.ShingleShift < b.ShingleShift {
			ts = sketch.MaskShingles(nil, ts, a.ShingleShift)
		}
		s.ta = without(s.ta[:0], p.sa, ts)
		s.tb = without(s.tb[:0], p.sb, ts)
		p.sa, p.sb = s.ta, s.tb
	}
	p.ushift = uint(max(a.UniqueShift, b.UniqueShift))
	out := Verdict{Kind: Distinct}
	for _, c := range v.p.Checks {
		applies, fires := p.run(c)
		if !applies {
			continue
		}
		out.Check = string(c.Method)
		if fires {
			out.Kind = c.kind()
			break
		}
	}
	if (out.Kind == Near || out.Kind == Partial) && p.passages(v.passageFloor) {
		out.Passages = slices.Clone(p.s.passages)
	}
	if v.sentOn {
		out.Sentences = v.sentencePairs(nil, &a.Sentences, &b.Sentences, s)
	}
	out.Scores = p.sc
	return out
}

// passages aligns the documents' passages with the per-passage floor
// minShared unless done, and reports whether both documents have passage
// sections. The aligned scores are set.
func (p *pair) passages(minShared int) bool {
	a, b := &p.a.Passage, &p.b.Passage
	if len(a.Fp) == 0 || len(b.Fp) == 0 || len(a.Anchors) == 0 || len(b.Anchors) == 0 {
		return false
	}
	if p.psgDone && p.psgMin == minShared {
		return true
	}
	s := p.s
	if s.saFor != p.a {
		// The document's anchors are converted (and sorted, by the
		// aligner) once for all the candidates of one call or task,
		// which is as long as a pointer names one document (whoever
		// clears saFor clears the aligner's table with it).
		s.sa, s.saFor = alignAnchors(s.sa[:0], a.Anchors), p.a
		s.pa.aKey = nil
	}
	s.sb = alignAnchors(s.sb[:0], b.Anchors)
	s.passages, p.psgA = s.pa.alignKeyed(s.passages[:0], AlignSide{Fp: a.Fp, Anchors: s.sa, Starts: a.Starts, Ends: a.Ends},
		AlignSide{Fp: b.Fp, Anchors: s.sb, Starts: b.Starts, Ends: b.Ends},
		AlignOptions{MinMatched: minShared, MaxPassages: MaxPassages}, p.a)
	if common := p.d.commonFor(p.b); len(common) > 0 {
		// A passage is evidence only for what it holds beyond the
		// document's common passages.
		s.passages, p.psgA = dropCommon(s.passages, common, s.pa.cover, minShared, p.d.MinRun)
	}
	p.psgB = 0
	for _, x := range s.passages {
		p.psgB += min(x.Matched, x.B1-x.B0)
	}
	p.psgDone, p.psgMin = true, minShared
	v := p.scores()
	v.aligned = p.psgA
	v.alab, v.alba = float64(p.psgA)/float64(len(a.Fp)), float64(p.psgB)/float64(len(b.Fp))
	p.sc.Aligned, p.sc.AlignedAB, p.sc.AlignedBA = &v.aligned, &v.alab, &v.alba
	return true
}

// MaxPassages bounds the passages of one verdict: the longest are kept.
const MaxPassages = 32

// alignAnchors converts stored anchors (their hash's top 32 bits in the
// low half) for the aligner.
func alignAnchors(dst []AlignAnchor, as []sketch.Anchor) []AlignAnchor {
	for _, x := range as {
		dst = append(dst, AlignAnchor{Hash: uint32(x.Hash), Pos: x.Pos})
	}
	return dst
}

// run evaluates one check; applies is false when the check does not apply
// to this pair (missing features or sizes out of range).
func (p *pair) run(c Check) (applies, fires bool) {
	a, b := p.a, p.b
	switch c.Method {
	case MethodExact:
		if !identical(a, b) {
			return true, false
		}
		v := p.scores()
		v.jaccard = 1
		p.sc.Jaccard = &v.jaccard
		return true, true

	case MethodIMatch:
		if !a.HasIMatch || !b.HasIMatch {
			return false, false
		}
		v := p.scores()
		v.imatch = a.IMatch == b.IMatch
		p.sc.IMatchEqual = &v.imatch
		return true, v.imatch

	case MethodSimHash:
		if a.Tokens == 0 || b.Tokens == 0 {
			return false, false
		}
		v := p.scores()
		v.hamming = sketch.Hamming(a.SimHash, b.SimHash)
		p.sc.Hamming = &v.hamming
		return true, float64(v.hamming) <= c.Threshold

	case MethodJaccard, MethodContainment:
		na, nb := len(p.sa), len(p.sb)
		// Sizes of the whole documents: the stored sets may be samples
		// (less the discounted share, when there is one).
		fa, fb := max(a.ShingleCount, len(a.Shingles)), max(b.ShingleCount, len(b.Shingles))
		if p.d != nil {
			fa, fb = scaled(fa, na, len(a.Shingles)), scaled(fb, nb, len(b.Shingles))
		}
		if na == 0 || nb == 0 || min(fa, fb) < c.MinSize {
			return false, false
		}
		var need int
		if c.Method == MethodJaccard {
			need = minJaccardInter(c.Threshold, na, nb)
		} else {
			// The larger containment is the smaller set's.
			need = minContainmentInter(c.Threshold, min(na, nb))
		}
		if !p.intersect(need) {
			return true, false
		}
		v := p.scores()
		if c.Method == MethodJaccard {
			v.jaccard = jaccard(p.inter, na, nb)
			p.sc.Jaccard = &v.jaccard
			return true, v.jaccard >= c.Threshold
		}
		v.cab, v.cba = containment(p.inter, na), containment(p.inter, nb)
		p.sc.ContainmentAB, p.sc.ContainmentBA = &v.cab, &v.cba
		fires := max(v.cab, v.cba) >= c.Threshold
		if c.Asymmetric {
			// The whole documents' sizes, not the samples' (whose ratio
			// varies by a few percent around it).
			fires = fires && float64(min(fa, fb)) < c.Threshold*float64(max(fa, fb))
		}
		return true, fires

	case MethodLCS:
		x, y := len(p.ua), len(p.ub)
		if x == 0 || y == 0 || min(x, y)<<p.ushift < c.MinSize {
			return false, false
		}
		// Lengths at the full rate: sampled sequences keep one word in
		// 2^shift, so scores use the counts scaled back.
		sx, sy := x<<p.ushift, y<<p.ushift
		bound := minLCS(c.score(), c.Threshold, sx, sy)
		need := (bound + 1<<p.ushift - 1) >> p.ushift
		if !p.align(need) {
			return true, false
		}
		v := p.scores()
		l := p.lcsLen << p.ushift
		v.lcs, v.cs, v.its = p.lcsLen, CS(l, sx, sy), ITS(l, sx, sy)
		p.sc.LCS, p.sc.CS, p.sc.ITS = &v.lcs, &v.cs, &v.its
		return true, score(c.score(), l, sx, sy) >= c.Threshold

	case MethodPassage:
		if !p.passages(cmp.Or(c.MinShared, DefaultPassageShared)) {
			return false, false
		}
		v := p.scores()
		return true, v.aligned > 0 && max(v.alab, v.alba) >= c.Threshold

	case MethodEdit:
		if a.Text == nil || b.Text == nil {
			return false, false
		}
		la, lb := len(a.Text), len(b.Text)
		if min(la, lb) < c.MinSize || c.MaxSize > 0 && max(la, lb) > c.MaxSize {
			return false, false
		}
		sim, ok := p.s.ed.SimilarityAtLeast(a.Text, b.Text, c.Threshold)
		if !ok {
			return true, false
		}
		v := p.scores()
		v.edit = sim
		p.sc.Edit = &v.edit
		return true, true
	}
	return false, false
}

// scaled is n × kept/of: a document's shingle count less the share of its
// stored sample that a Discount left out.
func scaled(n, kept, of int) int {
	if of == 0 {
		return n
	}
	return int(int64(n) * int64(kept) / int64(of))
}

// intersect makes sure |A ∩ B| is known exactly if it is at least need,
// reusing an earlier computation when it settles the question, and
// reports whether it is known (if not, it is below need).
func (p *pair) intersect(need int) bool {
	switch {
	case p.interNed >= 0 && p.interOK:
		return true
	case p.interNed >= 0 && need >= p.interNed:
		return false // an earlier, lower need was already out of reach
	}
	p.inter, p.interOK = intersectAtLeast(p.sa, p.sb, need)
	p.interNed = need
	return p.interOK
}

// align makes sure the LCS is known if the common words reach need,
// reusing an earlier alignment, and reports whether it is known.
func (p *pair) align(need int) bool {
	switch {
	case p.lcsNeed >= 0 && p.lcsOK:
		return true
	case p.lcsNeed >= 0 && need >= p.lcsNeed:
		return false
	}
	p.lcsLen, _, p.lcsOK = p.s.al.Len(p.ua, p.ub, need)
	p.lcsNeed = need
	return p.lcsOK
}

// identical reports whether a and b have the same normalized text: equal
// content digests of the whole token stream ([sketch.ContentDigest]), not
// of a sample. Empty documents are never identical.
func identical(a, b *sketch.Features) bool {
	return a.Tokens > 0 && a.Tokens == b.Tokens && a.Content == b.Content
}
