package pipeline

import (
	"slices"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// firstHolder makes each common passage of a page with a url that its
// site rules leave (outside its site's template) evidence against its
// first holder on another site: the earliest candidate that holds a
// passage of it (minRun of its anchors), which its common keys name as
// their exemplar. On a page with a url the site rules say what is
// template (its own site's frame, other sites' records, text other sites
// frame their pages with); common text beyond them that another site
// held first is content many pages carry: a syndicated article, whose
// copies, however many, are one text, or a passage many copied. The
// count of documents holding it (templateDocs) took it for template: a
// short article syndicated whole to a hundred sites, each in its own
// template, came out unique on some copies once eight held it. What it
// leaves to the counts:
//   - text whose first holder is on the page's own site: a site's pages
//     sharing text beyond their frame are its generated sections
//     (javadoc's inherited descriptions, a command family's flags), not
//     copies of one another (docs/boilerplate.md, refdocs and manpages);
//   - every common passage of a site's first page, which cannot tell its
//     frame from its text (revise.go): a comment policy several sites
//     share is common there too.
//
// Pages on no site (none named, no edges shared with three distinct
// texts: template.go, edgeSite) have no site rules and keep the counts.
func (p *Pipeline) firstHolder(j *job, feats func(*index.Candidate) *sketch.Features) {
	if j.feats == nil || j.feats.Host == 0 || j.noSite || j.discount == nil || len(j.discount.Common) == 0 {
		return
	}
	d := j.discount
	cands := j.cands[:min(j.earlier, len(j.cands))]
	var same []*sketch.Features // its site's earlier pages among them
	for i := range cands {
		if f := feats(&cands[i]); f != nil && f.Host == j.feats.Host {
			same = append(same, f)
		}
	}
	if p.hostPages(j, same) < 2 {
		// A site's first page cannot tell its frame from its text
		// (revise.go): a block other sites frame their pages with is
		// common there too.
		return
	}
	inTemplate := func(pos int) bool {
		return slices.ContainsFunc(j.siteTemplate, func(r verify.Range) bool { return r.Lo <= pos && pos < r.Hi })
	}
	held := make([][]uint32, len(cands)) // each candidate's anchors, once
	common := d.Common
	for _, r := range common {
		var hs []uint32 // the passage's anchors outside the template
		for _, a := range j.feats.Passage.Anchors {
			if pos := int(a.Pos); r.Lo <= pos && pos < r.Hi && !inTemplate(pos) {
				hs = append(hs, uint32(a.Hash))
			}
		}
		slices.Sort(hs)
		if hs = slices.Compact(hs); len(hs) < minRun {
			continue
		}
		first := -1 // the earliest candidate holding a passage of it
		for i := range cands {
			f := feats(&cands[i])
			if f == nil || first >= 0 && cands[i].Seq > cands[first].Seq {
				continue
			}
			if held[i] == nil {
				held[i] = anchorSet(f.Passage.Anchors) // template.go
			}
			if len(intersect(hs, held[i])) >= minRun {
				first = i
			}
		}
		if first < 0 {
			continue
		}
		f := feats(&cands[first])
		if f.Host == j.feats.Host {
			continue // the site's own text: the counts decide
		}
		k := slices.IndexFunc(d.Sources, func(s verify.Source) bool { return s.Features == f })
		if k < 0 {
			d.Sources = append(d.Sources, verify.Source{Features: f, Common: common})
			k = len(d.Sources) - 1
		}
		// Against its first holder the passage is evidence but for the
		// site's template inside it.
		kept := slices.DeleteFunc(slices.Clone(d.Sources[k].Common), func(x verify.Range) bool { return x.Lo < r.Hi && r.Lo < x.Hi })
		d.Sources[k].Common = withRanges(kept, clip(j.siteTemplate, r))
	}
}

// clip returns the parts of rs inside r.
func clip(rs []verify.Range, r verify.Range) []verify.Range {
	var out []verify.Range
	for _, x := range rs {
		if lo, hi := max(x.Lo, r.Lo), min(x.Hi, r.Hi); lo < hi {
			out = append(out, verify.Range{Lo: lo, Hi: hi})
		}
	}
	return out
}
