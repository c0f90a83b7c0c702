package pipeline

import (
	"context"
	"slices"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// Revisions: links taken back once a site shows its template.
//
// A site's first page cannot tell its template from its article: nothing
// of its site came before it. When it shares a block with a page of
// another site that is also new (a comment policy, a promotion, a consent
// notice that both frame their articles with), the two are linked as a
// partial duplicate, exactly as a quote would be; at that moment nothing
// tells them apart (docs/boilerplate.md, "Revisions"). Its site's next
// page that finds a template with it writes its template record
// (template.go, templaterec.go), or, when the page wrote its own, is the
// site's second page. That is when its links can be judged again, and
// they are, once:
//
//   - The first page's partial matches that the finding document has as
//     candidates are verified again, the first page leaving out the
//     template its record marks and the finding document found (its
//     passages and sample shingles, as a page whose template is known
//     leaves out its own), and each match its own record's template
//     (verify.Discount). So are the partial links that later candidates
//     made to the first page, each leaving out its text that the first
//     page's template holds (as a page adopts another page's record).
//   - A match that is then no duplicate is withdrawn. The page's recorded
//     verdict is replaced (a compare-and-set on the verdict read,
//     index.Store.ReviseVerdicts) by the same verdict without it: its other
//     matches, and its cluster while its best match stands; a unique
//     verdict, its own cluster, when none is left. When the best match is
//     withdrawn and others stand, nothing is revised (the new best's
//     cluster would have to be read; the verdict keeps the link), nor when
//     the page listed more matches than its record keeps (they could not
//     be listed again). The revised event lists the matches as the record
//     keeps them, without passages (abridged).
//   - A revision event (stream.Event.Revised, with the withdrawn ids and the
//     finding document in RevisedBy) goes out after the finding document's
//     own event, before the next document is resolved. It replaces the
//     page's earlier event: what a consumer keyed by id keeps, what `check`
//     and a replay of the page answer.
//
// Only a site's first page, and links made to it, are revised: the pages
// after it knew some of their site's frame when they were decided, and
// what a young site's record marks (text half of its few pages hold) may
// be a passage two of them copied, whose link must stand.
//
// Nothing here is kept between documents: the first page, its matches and
// their template records are the finding document's candidates and the
// index's records, so memory, a Redis node and a Redis Cluster revise the
// same verdicts. A page whose verdict is not recorded yet (another member
// of a consumer group has not recorded it) is not revised. Documents that
// joined the page's cluster before the revision stay in it.

// firstOfSite reports whether page i of seqs (a document's earlier
// candidates of its site) is its site's first page: no other of them came
// before it. A young site's pages share its frame, whose keys, once
// common, return their first holder, so the site's first page is among
// them.
func firstOfSite(seqs []uint64, i int) bool {
	for k, s := range seqs {
		if k != i && s < seqs[i] {
			return false
		}
	}
	return true
}

// planTemplate returns what a revision of page f leaves out: what body
// (the record body document finder just found for f) and had (f's
// record, nil: none) mark.
func planTemplate(f *sketch.Features, finder uint64, had, body []byte) (templateRec, bool) {
	b, ok := decodeTemplateRec(index.AppendTemplate(nil, finder, body), f)
	if !ok || had == nil {
		return b, ok
	}
	if a, ok := decodeTemplateRec(had, f); ok {
		for i := range b.anchors {
			b.anchors[i] = b.anchors[i] || a.anchors[i]
		}
		for i := range b.shingles {
			b.shingles[i] = b.shingles[i] || a.shingles[i]
		}
	}
	return b, true
}

// revision is an earlier page of a document's site whose template record
// the document wrote: its partial matches are verified again with disc
// once the document's verdict is recorded.
type revision struct {
	seq  uint64
	id   string
	f    *sketch.Features
	disc *verify.Discount
	// only, when set, is the one match verified again: the page whose
	// record was written (the page's links to other pages are not at
	// issue).
	only string
}

// planRevision notes on j that page f (seq, id), an earlier page of its
// site, has the template r (planTemplate): once j's verdict is recorded,
// f's partial matches among j's candidates are verified again without it.
func (p *Pipeline) planRevision(j *job, seq uint64, id string, f *sketch.Features, r templateRec) {
	d := &verify.Discount{
		Common:   p.heldRanges(f, r.templateAnchors(f), j.feats),
		Shingles: r.templateShingles(f),
		MinRun:   sketch.PassageWindow(len(f.Passage.Fp), p.passageWords(), p.cfg.Sketch.Shingle),
	}
	if len(d.Common) == 0 {
		return
	}
	if j.discount != nil {
		// The candidates' own templates (their records), found above.
		d.Templates = slices.Clone(j.discount.Templates)
	}
	j.revise = append(j.revise, revision{seq: seq, id: id, f: f, disc: d})
}

// planLinkRevisions notes on j that the earlier pages among its candidates
// that came after page f (seq, id) and hold text its template r marks (f's site's frame) have their partial link to f, if
// any, verified again without that text, as a page that knows the frame
// from f's record leaves it out (adopted, template.go). feats returns a
// candidate's decoded features.
func (p *Pipeline) planLinkRevisions(j *job, seq uint64, id string, f *sketch.Features, r templateRec, feats func(c *index.Candidate) *sketch.Features) {
	tpl := r.templateAnchors(f)
	own := verify.Template{Content: f.Content, Tokens: f.Tokens, Shingles: r.templateShingles(f)}
	for ci := range j.cands[:min(j.earlier, len(j.cands))] {
		c := &j.cands[ci]
		if c.Seq <= seq {
			continue
		}
		cf := feats(c)
		if cf == nil {
			continue
		}
		rs := p.heldRanges(cf, tpl, f)
		if len(rs) == 0 {
			continue
		}
		w := sketch.PassageWindow(len(cf.Passage.Fp), p.passageWords(), p.cfg.Sketch.Shingle)
		d := &verify.Discount{Common: rs, MinRun: w, Templates: []verify.Template{own}}
		j.revise = append(j.revise, revision{seq: c.Seq, id: c.ID, f: cf, disc: d, only: id})
	}
}

// heldRanges returns the passages of page f (sorted, disjoint) around its
// anchors whose stored hash is in tpl (sorted): each the text around the
// anchor, up to a winnowing window less one either side, that holder
// holds there too (their stored per-position fingerprints agree), as a
// template passage is what the page holding it as template holds
// (templateRanges): a quote next to an author box keeps its every word.
func (p *Pipeline) heldRanges(f *sketch.Features, tpl []uint32, holder *sketch.Features) []verify.Range {
	n := len(f.Passage.Fp)
	w := sketch.PassageWindow(n, p.passageWords(), p.cfg.Sketch.Shingle)
	fp := f.Passage.Fp
	var rs []verify.Range
	for _, a := range f.Passage.Anchors {
		h, pos := uint32(a.Hash), int(a.Pos)
		if _, in := slices.BinarySearch(tpl, h); !in || pos >= n {
			continue
		}
		r := verify.Range{Lo: max(pos-(w-1), 0), Hi: min(pos+w, n)}
		if holder != nil {
			r = heldRange(fp, pos, r, holder, h) // template.go
		}
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b verify.Range) int { return a.Lo - b.Lo })
	var out []verify.Range
	for _, r := range rs {
		out = addRange(out, r)
	}
	return out
}

// reviseEarlier carries out the revisions j planned, in order, once the
// verdicts decided before it are recorded, and adds their events to j's
// output o.
func (p *Pipeline) reviseEarlier(ctx context.Context, j *job, o *Output) error {
	plans := j.revise
	j.revise = nil
	if len(plans) == 0 {
		return nil
	}
	rv, ok := p.ix.(Reviser)
	if !ok {
		return nil
	}
	seqs := make([]uint64, len(plans))
	for i, pl := range plans {
		seqs[i] = pl.seq
	}
	cur, err := p.readVerdicts(ctx, seqs) // correct.go
	if err != nil {
		return err
	}
	var (
		rseqs       []uint64
		old, recs   [][]byte
		events      []*Event
		newClusters []string
	)
	seen := map[uint64]bool{}
	for i, pl := range plans {
		if seen[pl.seq] || i >= len(cur) || len(cur[i]) == 0 {
			continue // not stored (yet, or any more): nothing to revise
		}
		rec, err := decodeRecord(pl.id, cur[i])
		if err != nil || len(rec.Matches) == 0 || rec.Listed > len(rec.Matches) {
			// Matches the record does not keep could not be listed
			// again: the verdict stands.
			continue
		}
		var kept []Match
		var withdrawn []string
		for _, m := range rec.Matches {
			if m.Kind != string(verify.Partial) || pl.only != "" && m.ID != pl.only || !p.withdraws(j, pl, m.ID) {
				kept = append(kept, m)
				continue
			}
			withdrawn = append(withdrawn, m.ID)
		}
		if len(withdrawn) == 0 || len(kept) > 0 && kept[0].ID != rec.Matches[0].ID {
			continue
		}
		next := *rec
		next.Matches = kept
		if len(kept) == 0 {
			next.Cluster = ""
		}
		seen[pl.seq] = true
		rseqs, old, recs = append(rseqs, pl.seq), append(old, cur[i]), append(recs, marshalRecord(&next))
		ev := p.revisedEvent(pl.id, &next, withdrawn, j)
		events, newClusters = append(events, ev), append(newClusters, ev.Cluster)
	}
	if len(rseqs) == 0 {
		return nil
	}
	revised, err := p.reviseVerdicts(ctx, "record-revisions", rv, rseqs, old, recs)
	if err != nil {
		return err
	}
	n := 0
	for i, ok := range revised {
		if !ok || i >= len(events) {
			continue // revised meanwhile: that verdict stands
		}
		p.clusters.put(rseqs[i], newClusters[i])
		o.Revisions = append(o.Revisions, events[i])
		n++
	}
	p.cfg.Metrics.Revision(n)
	return nil
}

// withdraws reports whether page r's partial match id, one of j's
// candidates, is no duplicate of it verified again without r's template.
// A match that is not among j's candidates is kept: nothing is known of
// it here.
func (p *Pipeline) withdraws(j *job, r revision, id string) bool {
	for i, c := range j.cands {
		if c.ID != id || c.Seq >= r.seq || i >= len(j.candFeats) || j.candFeats[i] == nil {
			continue
		}
		v := p.verifier.VerifyDiscounted(r.f, j.candFeats[i], r.disc)
		return v.Kind != verify.Exact && v.Kind != verify.Near && v.Kind != verify.Partial
	}
	return false
}

// revisedEvent is the event of page id whose verdict is now rec, found by
// job j: rec's kind, matches and cluster, marked as a revision.
func (p *Pipeline) revisedEvent(id string, rec *verdictRecord, withdrawn []string, j *job) *Event {
	ev := p.recordedEvent(id, rec)
	ev.Revised, ev.Withdrawn, ev.RevisedBy = true, withdrawn, j.item.Doc.ID
	return ev
}
