package pipeline

import (
	"cmp"
	"context"
	"slices"

	"github.com/neardup/neardup/index"
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
		if r.docs >= boilerplateDocs && thr == boilerplateDocs {
			// A template the stream knows: its scraps, too short for
			// an anchor of their own, are not evidence either.
			d.MinRun = w
		}
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
		d.Shingles = keptShingles(d.Shingles, j.seq, all, j.feats.ShingleShift)
	}
	return &d
}

// keptShingles adds to dst (sorted, distinct) the stored shingles seq
// holds at the positions of rs, sorted and distinct. Only the shingles the
// stored sample keeps (at shift) can be left out of a stored set: the
// others are dropped before sorting (three in four at a 5 KB page's
// rate).
func keptShingles(dst []uint64, seq []uint32, rs []verify.Range, shift byte) []uint64 {
	unkept := sampledOut(shift)
	for _, r := range rs {
		for _, h := range seq[r.Lo:r.Hi] {
			if h&unkept == 0 {
				dst = append(dst, uint64(h))
			}
		}
	}
	slices.Sort(dst)
	return slices.Compact(dst)
}

// sampledOut returns the bits of which a stored shingle value (at the
// sampling shift of the document's stored set) has one set when the
// sample does not keep it: such a value is in no stored set the document
// is compared on, at its rate or at a coarser one, even cut to a narrower
// width (sketch.AlignSamples, sketch.MaskShingles keep the low bits), so a
// discount need not list it. 0 (keep every value) for a shift beyond
// sketch.StoredBits, where a cut could drop those bits.
func sampledOut(shift byte) uint32 {
	if shift > sketch.StoredBits {
		return 0
	}
	return 1<<shift - 1
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

// Widely copied texts.
//
// A key is common once index.common_docs documents hold it: a site's
// template, but also, in a copy-dense stream, the text of a document
// that many others copied. The template rule (templateDocs) cannot tell
// them apart in the document at hand: a page made of its template and an
// article, and a page made of a passage copied from a widely copied text
// and text of its own, look alike there. What tells them apart is the
// exemplar the common keys name and what its other holders are. A
// template's exemplar is a page with text of its own around the
// template, and the template's other holders are pages whose other text
// differs. A widely copied text's exemplar is its source, and its other
// holders are copies of it: documents that are mostly the source's text,
// all of it common.
//
// So the index stage finds, in input order, the texts that an earlier
// document copied whole: when a document is mostly common text (it is
// judged whole), or is a page with a url (findsSources), and its text is
// held by a candidate, over most of the document and most of the
// candidate, the candidate is a source and the anchors they share are its
// copied text. Against a source, a common passage of a later document
// whose anchors are mostly in the source's copied text is evidence,
// however many documents hold it; the other
// common passages (a template around it) and every common passage
// against any other candidate stay out, as the template rule says. A
// template is not a copied text: a page of its site is mostly its
// template only when its article is short, and then the template's
// exemplar, a page with an article of its own, is not mostly the
// template; a page copied whole with its template (the same article
// crawled twice) makes the template part of its copied text, and the
// template is evidence against that page alone.
//
// The sources are kept in the index, as a record of the source document
// (index.Store.RecordSources: its copied text's anchor hashes, 4 bytes
// each), written once and removed with the document, and read with the
// candidates (Candidate.Source). So every member of a consumer group, and
// a member after a restart, knows every source the stream has found: the
// events do not depend on which member saw which document, nor on how
// long a member has run, and no member keeps more than one batch of them.

// Sourcer is what sharing sources needs of the index; [index.Store]
// implementations satisfy it. An Index without it leaves the sources in
// the pipeline's own memory (at most maxSources, the oldest out first),
// where another pipeline, or this one after a restart, cannot see them.
type Sourcer interface {
	Sources(ctx context.Context, seqs []uint64) ([][]byte, error)
	RecordSources(ctx context.Context, seqs []uint64, copied [][]byte) ([]bool, error)
}

// maxSources bounds the sources a pipeline remembers when its index does
// not store them (no Sourcer): each holds the 32-bit hashes of its copied
// text's anchors (about 200 bytes for a page of 50 anchors), so at most
// about 13 MB. A widely copied text takes one place (its earliest holder;
// markSources), so this is the number of widely copied texts a stream can
// have in play at once: past it the oldest are forgotten and their later
// partial copies missed (on bench/corpus real, 100,000 documents in 5,000
// clusters, a bound of 2,000 took recall from 0.9644 to 0.8228). With a
// Sourcer the pipeline keeps only the sources its current batch found,
// until they are recorded.
const maxSources = 1 << 16

// sourceSet remembers the copied text of at most max sources (the oldest
// out first), by the source document's Seq: the stored hashes of their
// anchors that a whole copy held, and the Seq of that copy (the finder).
// The index stage owns it (one goroutine: processBatch). pending lists
// the sources added since the last flush, in order.
type sourceSet struct {
	max     int
	copied  map[uint64]source
	ring    []uint64
	next    int
	pending []uint64
}

// source is a source's copied text (sorted hashes) and its finder.
type source struct {
	hashes []uint32
	by     uint64
}

func newSourceSet(n int) *sourceSet {
	return &sourceSet{max: n, copied: map[uint64]source{}}
}

// add records hashes (sorted), found copied whole by document by, as the
// copied text of document seq.
func (s *sourceSet) add(seq, by uint64, hashes []uint32) {
	if s.max <= 0 || len(hashes) == 0 {
		return
	}
	if _, ok := s.copied[seq]; ok {
		return // the first whole copy says what the copied text is
	}
	if len(s.ring) < s.max {
		s.ring = append(s.ring, seq)
	} else {
		delete(s.copied, s.ring[s.next])
		s.ring[s.next] = seq
		s.next = (s.next + 1) % s.max
	}
	s.copied[seq] = source{hashes, by}
	s.pending = append(s.pending, seq)
}

// reset forgets every source.
func (s *sourceSet) reset() {
	clear(s.copied)
	s.ring, s.next, s.pending = s.ring[:0], 0, s.pending[:0]
}

// recordSources writes the sources the batch found to the index, in one
// call, and forgets them: from the next batch on they come with the
// candidates. Without a Sourcer they stay in the pipeline's memory.
func (p *Pipeline) recordSources(ctx context.Context) error {
	s := p.sources
	sr, ok := p.ix.(Sourcer)
	if !ok || len(s.pending) == 0 {
		s.pending = s.pending[:0]
		return nil
	}
	var seqs []uint64
	var recs [][]byte
	for _, seq := range s.pending {
		if c, ok := s.copied[seq]; ok {
			seqs, recs = append(seqs, seq), append(recs, index.AppendSource(nil, c.by, c.hashes))
		}
	}
	if len(seqs) > 0 {
		// Stored false: the source was deleted or expired since it was
		// found; it is no one's source any more.
		if err := p.retry(ctx, "record-sources", func(ctx context.Context) error {
			_, err := sr.RecordSources(ctx, seqs, recs)
			return err
		}); err != nil {
			return err
		}
	}
	s.reset()
	return nil
}

// fetchSources reads, with Store.Sources in one call, the source records
// of the candidates markSources looks at that came without one (Redis
// Cluster, or features fetched after the lookup): the earlier candidates
// of jobs with common passages. Without a Sourcer there is nothing to
// read.
func (p *Pipeline) fetchSources(ctx context.Context, jobs []*job) error {
	sr, ok := p.ix.(Sourcer)
	if !ok {
		return nil
	}
	var missing []uint64
	seen := map[uint64]bool{}
	for _, j := range jobs {
		if j.discount == nil {
			continue
		}
		for _, c := range j.cands[:min(j.earlier, len(j.cands))] {
			if c.Source == nil && !seen[c.Seq] {
				seen[c.Seq] = true
				missing = append(missing, c.Seq)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var recs [][]byte
	if err := p.retry(ctx, "sources", func(ctx context.Context) error {
		var err error
		recs, err = sr.Sources(ctx, missing)
		return err
	}); err != nil {
		return err
	}
	got := make(map[uint64][]byte, len(missing))
	for i, seq := range missing {
		got[seq] = []byte{} // read: none
		if i < len(recs) && recs[i] != nil {
			got[seq] = recs[i]
		}
	}
	for _, j := range jobs {
		if j.discount == nil {
			continue
		}
		for i := range j.cands[:min(j.earlier, len(j.cands))] {
			if c := &j.cands[i]; c.Source == nil {
				c.Source = got[c.Seq]
			}
		}
	}
	return nil
}

// sourceOf returns the copied text of candidate c when it is a source
// found by a document before j (a lower Seq; nil otherwise): what this
// batch found, else its source record from the index, decoded once per
// batch (decoded). A source found by a later document (one decided
// before j was replayed, or on another member meanwhile) is not j's: j's
// verdict is the one an uninterrupted run gives. A record that does not
// decode (written by something else) makes no source.
func (p *Pipeline) sourceOf(j *job, c *index.Candidate, decoded map[uint64]source) []uint32 {
	if src, ok := p.sources.copied[c.Seq]; ok && src.by < j.res.Seq {
		return src.hashes
	}
	if len(c.Source) == 0 {
		return nil
	}
	src, ok := decoded[c.Seq]
	if !ok {
		src.by, src.hashes, _ = index.DecodeSource(nil, c.Source)
		if len(src.hashes) == 0 {
			src.hashes = nil
		}
		decoded[c.Seq] = src
	}
	if src.by >= j.res.Seq {
		return nil
	}
	return src.hashes
}

// markSources runs in the index stage, in input order, once the
// candidates' features are fetched. For each job it first names, in the
// job's discount, the candidates that are sources whose copied text makes
// some of the job's common passages (those passages are evidence against
// them), then records the candidates the job copied whole as sources.
// feats returns a candidate's decoded features (nil when gone or
// undecodable), decoding only those asked for.
func (p *Pipeline) markSources(jobs []*job, feats func(c *index.Candidate) *sketch.Features) {
	decoded := map[uint64]source{}
	var mine []uint32 // a job's anchors' stored hashes, sorted (copiedWholeOf)
	for _, j := range jobs {
		if j.discount == nil || j.feats == nil {
			continue
		}
		cands := j.cands[:min(j.earlier, len(j.cands))]
		common := p.commonAnchors(j)
		if len(j.discount.Common) > 0 {
			for i := range cands {
				c := &cands[i]
				copied := p.sourceOf(j, c, decoded)
				if copied == nil {
					continue
				}
				f := feats(c)
				if f == nil {
					continue
				}
				if kept, ok := sourceCommon(j.discount.Common, common, copied); ok {
					// The site's template is evidence against no
					// candidate, a source's copied text or not.
					kept = withRanges(kept, j.siteTemplate)
					j.discount.Sources = append(j.discount.Sources, verify.Source{Features: f, Common: kept})
				}
			}
		}
		if !findsSources(j) {
			continue
		}
		// The source is the earliest candidate the document copied whole:
		// the text's first holder, which its common keys name as their
		// exemplar. Later copies of it are not sources of their own, so a
		// cluster takes one place among the sources, not one per copy.
		order := make([]int, len(cands))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(cands[a].Seq, cands[b].Seq) })
		mine = ownHashes(mine, j.feats.Passage.Anchors)
		for _, i := range order {
			c := &cands[i]
			if f := feats(c); f != nil {
				if shared := copiedWholeOf(common, mine, f); shared != nil {
					if p.sourceOf(j, c, decoded) == nil {
						p.sources.add(c.Seq, j.res.Seq, p.ownText(shared, c, f, cands, feats))
					}
					break
				}
			}
		}
	}
	for _, j := range jobs {
		p.firstHolder(j, feats)                // holders.go
		p.genericText(j, feats, &p.anchorBits) // generic.go
		p.copyOwnLinks(j, feats, &p.anchorBits)
		j.overlaps = nil // overlap.go: the two rules' shared comparisons
	}
}

// findsSources reports whether j, a job with common passages, looks for
// the candidate it copied whole (markSources). A document that is mostly
// common text does: the template rule would otherwise take its copied
// text for a template. So does a page with a url, whatever share of it is
// common yet: the site rules keep its site's template out of the evidence
// against every source (markSources adds j.siteTemplate to what stays
// out), so a page copied whole makes its original the source of a text
// that copies of it, not a site, hold. A syndicated article's copies are
// lightly edited, each in its own frame, and none need be mostly common
// text while the article's keys are held by more documents than any
// template (templateDocs); without its source, a later page quoting the
// article was linked to nothing (the site sets: a passage held by nine
// copies, missed). Without a url the site's template is not known apart,
// and a page republished on its own site would carry that template into
// its original's copied text, making it evidence between the site's pages
// (measured on the site sets without urls: sites-html-boiler precision
// 0.919 → 0.868). A page placed by its edges (edgeHost) is one without a
// url until its site's pages show three distinct texts (template.go,
// edgeSite), and one with a url from then on.
func findsSources(j *job) bool {
	return j.commonShare > MaxDiscountShare || j.feats.Host != 0 && !j.noSite
}

// copyOwnLinks keeps a copy from re-reporting its original's passages. A
// document that is a near duplicate of an earlier candidate (one text,
// by the profile's resemblance on their stored samples) shares with a
// third candidate what its earlier copy shares with it: that copy's own
// event reported the link, and the document is linked to its copy. So
// against every candidate that is not a near duplicate of the document,
// the text that the document, the candidate and an earlier near
// duplicate of the document all hold (their stored passage anchors,
// widened by a winnowing window less one like a common passage) is no
// evidence: a later variant of a reference page is not linked to the
// other pages its first version shares inherited descriptions with, and
// a document is still linked to whatever it shares with others beyond
// its earlier copy's text. Containment is not one text here: a document
// held by a longer one (PAN13's short suspicious documents) can copy
// from a source what the longer one copied too, and is linked to it. set
// is scratch, empty.
func (p *Pipeline) copyOwnLinks(j *job, feats func(*index.Candidate) *sketch.Features, set *hashBits) {
	if j.feats == nil || len(j.seq) == 0 || len(j.feats.Passage.Anchors) == 0 {
		return
	}
	cands := j.cands[:min(j.earlier, len(j.cands))]
	if len(cands) < 2 {
		return
	}
	near := make([]bool, len(cands))
	for i := range cands {
		f := feats(&cands[i])
		if f == nil {
			continue
		}
		if !p.docResembles(j, i, f) { // overlap.go
			continue
		}
		near[i] = true
		set.addAnchors(f.Passage.Anchors) // what the document's earlier near duplicates hold
	}
	if !slices.Contains(near, true) {
		return
	}
	n := len(j.seq)
	var held []sketch.Anchor // the document's anchors its earlier near duplicates hold
	for _, a := range j.feats.Passage.Anchors {
		if set.has(uint32(a.Hash)) && int(a.Pos) < n {
			held = append(held, a)
		}
	}
	set.clear()
	if len(held) == 0 {
		return
	}
	w := sketch.PassageWindow(n, p.passageWords(), p.cfg.Sketch.Shingle)
	for i := range cands {
		f := feats(&cands[i])
		if near[i] || f == nil {
			continue
		}
		set.addAnchors(f.Passage.Anchors)
		var rs []verify.Range
		for _, a := range held {
			if set.has(uint32(a.Hash)) {
				pos := int(a.Pos)
				rs = addRange(rs, verify.Range{Lo: max(pos-(w-1), 0), Hi: min(pos+w, n)})
			}
		}
		set.clear()
		if len(rs) == 0 {
			continue
		}
		if j.discount == nil {
			j.discount = &verify.Discount{}
		}
		d := j.discount
		k := slices.IndexFunc(d.Sources, func(s verify.Source) bool { return s.Features == f })
		if k < 0 {
			d.Sources = append(d.Sources, verify.Source{Features: f, Common: withRanges(d.Common, rs)})
		} else {
			d.Sources[k].Common = withRanges(d.Sources[k].Common, rs)
		}
	}
}

// ownText returns the part of shared (a source's copied text: stored
// anchor hashes, sorted) that no earlier distinct text holds: hashes
// that an earlier candidate than the source c (f its features) holds
// are left out unless that candidate is one text with c (a near
// duplicate of it or one holding the other: p.oneText). A source is the
// first holder of its text, which copies of it hold after it; a text
// that a different, earlier page held before it is not its own (an
// inherited description, a generated section of a reference page that
// many pages carry), and a later page holding that text has not copied
// the source. So counting texts, not documents: copies of one text never
// make its passages another's, and a block of a template-heavy page
// copied whole by its own variant does not become the copied text that
// unrelated pages are then linked to it through.
func (p *Pipeline) ownText(shared []uint32, c *index.Candidate, f *sketch.Features, cands []index.Candidate, feats func(*index.Candidate) *sketch.Features) []uint32 {
	var held []uint32 // hashes earlier distinct texts hold
	for i := range cands {
		d := &cands[i]
		if d.Seq >= c.Seq {
			continue
		}
		g := feats(d)
		if g == nil {
			continue
		}
		var in []uint32
		for _, a := range g.Passage.Anchors {
			if _, ok := slices.BinarySearch(shared, uint32(a.Hash)); ok {
				in = append(in, uint32(a.Hash))
			}
		}
		if len(in) == 0 || p.oneText(f, g, nil, nil) {
			continue
		}
		held = append(held, in...)
	}
	if len(held) == 0 {
		return shared
	}
	slices.Sort(held)
	out := make([]uint32, 0, len(shared))
	for _, h := range shared {
		if _, ok := slices.BinarySearch(held, h); !ok {
			out = append(out, h)
		}
	}
	return out
}

// anchorAt is one of a document's common anchors: its stored hash (the
// low 32 bits) and its shingle position.
type anchorAt struct {
	hash uint32
	pos  int
	docs int // documents that hold it
}

// commonAnchors returns j's common passage anchors, sorted by hash.
func (p *Pipeline) commonAnchors(j *job) []anchorAt {
	as := j.feats.Passage.Anchors
	keys := j.entry.Anchors[:min(j.sentenceBase, len(j.entry.Anchors), len(as))]
	var out []anchorAt
	for i, k := range keys {
		if c, ok := slices.BinarySearch(j.res.CommonAnchors, k); ok {
			a := anchorAt{hash: uint32(as[i].Hash), pos: int(as[i].Pos)}
			if c < len(j.res.CommonAnchorDocs) {
				a.docs = j.res.CommonAnchorDocs[c]
			}
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b anchorAt) int { return cmp.Compare(a.hash, b.hash) })
	return out
}

// copiedWhole returns the stored hashes (sorted, distinct) of the text a
// document copied from candidate f, when it copied f whole: the document
// (its passage anchors own, its common ones common sorted by hash) shares
// more than MaxDiscountShare of its anchors with f, and f more than
// MaxDiscountShare of its anchors with the document. Otherwise it returns
// nil. The caller asks only for a document that is mostly common text,
// or a page with a url (findsSources).
//
// The shared anchors are counted whether or not they are common yet: in
// a cluster of noisy copies an anchor becomes common only once enough
// copies kept it intact, so of a copy's anchors the common ones that the
// source holds can be fewer than MaxDiscountShare long after the copy's
// text is widely held (at 3 % of words edited, a passage anchor is common
// on the fourth copy only when the three before kept it: ~0.64). Counted
// among the common anchors only, such a cluster found no source, and its
// later partial copies, whose copied passage is common, were unique
// (bench/corpus real: 627 of 5,686 partial copies at 20,000 documents).
func copiedWhole(common []anchorAt, own []sketch.Anchor, f *sketch.Features) []uint32 {
	return copiedWholeOf(common, ownHashes(nil, own), f)
}

// ownHashes returns the stored hashes of anchors (their low 32 bits),
// sorted, repeats kept, in dst's storage.
func ownHashes(dst []uint32, anchors []sketch.Anchor) []uint32 {
	dst = dst[:0]
	for _, a := range anchors {
		dst = append(dst, uint32(a.Hash))
	}
	slices.Sort(dst)
	return dst
}

// copiedWholeOf is copiedWhole with the document's anchors as mine, their
// stored hashes sorted (ownHashes).
func copiedWholeOf(common []anchorAt, mine []uint32, f *sketch.Features) []uint32 {
	fa := f.Passage.Anchors
	if len(mine) == 0 || len(fa) == 0 || len(common) == 0 {
		return nil
	}
	held := 0
	var shared, narrow []uint32
	for _, a := range fa {
		h := uint32(a.Hash)
		if _, ok := slices.BinarySearch(mine, h); !ok {
			continue
		}
		held++
		shared = append(shared, h)
		i, ok := slices.BinarySearchFunc(common, h, func(x anchorAt, h uint32) int { return cmp.Compare(x.hash, h) })
		if !ok || common[i].docs < boilerplateDocs {
			narrow = append(narrow, h)
		}
	}
	slices.Sort(shared)
	shared = slices.Compact(shared)
	ownShared := 0
	for _, h := range mine {
		if _, ok := slices.BinarySearch(shared, h); ok {
			ownShared++
		}
	}
	if float64(ownShared) <= MaxDiscountShare*float64(len(mine)) || float64(held) <= MaxDiscountShare*float64(len(fa)) {
		return nil
	}
	if len(narrow) > 0 {
		// A template held by many documents around a text copied by few
		// (a page copied whole with its site's template): the copied
		// text is the part held by few.
		slices.Sort(narrow)
		return slices.Compact(narrow)
	}
	return shared
}

// sourceCommon returns the common passages rs of a document (its common
// anchors common) that stay out of the evidence against a source whose
// copied text is copied (sorted): those whose common anchors are not
// mostly in it. ok is false when that is all of them (the source changes
// nothing).
func sourceCommon(rs []verify.Range, common []anchorAt, copied []uint32) (kept []verify.Range, ok bool) {
	for _, r := range rs {
		in, all := 0, 0
		for _, a := range common {
			if a.pos < r.Lo || a.pos >= r.Hi {
				continue
			}
			all++
			if _, found := slices.BinarySearch(copied, a.hash); found {
				in++
			}
		}
		if 2*in > all {
			ok = true
			continue
		}
		kept = append(kept, r)
	}
	return kept, ok
}

// withRanges returns the ranges of a and b (each sorted by Lo), merged.
func withRanges(a, b []verify.Range) []verify.Range {
	if len(b) == 0 {
		return a
	}
	all := slices.Concat(a, b)
	slices.SortFunc(all, func(x, y verify.Range) int { return x.Lo - y.Lo })
	var out []verify.Range
	for _, r := range all {
		out = addRange(out, r)
	}
	return out
}
