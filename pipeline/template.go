package pipeline

import (
	"hash/fnv"
	"net/url"
	"slices"
	"strings"

	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// Site templates.
//
// A template is text that pages with different content share; a copied
// article is text that copies of one text share. How many documents hold
// a key does not tell them apart (an author box is held by a handful of
// pages of one site, a syndicated article by as many sites), but who holds
// it does: text that two different pages of one web site share is that
// site's template. Crawlers send each page's url; its host is stored with
// the page's features (sketch.Features.Host), so a document knows which
// of its candidates are pages of its own site.
//
// So, in the index stage and in input order, a document with a host
// compares itself with its earlier candidates of the same host, those
// that share the fewest of its anchors first (pages that share only the
// template with it). A candidate is the same text as the document when
// the two are near duplicates by the profile's resemblance, or one holds
// the other by its containment, on their stored shingles outside the
// template found so far: a page republished or updated on its own site. Every other page of the site is a
// different text, and the anchors the document shares with it are the
// site's template. Template passages (runs of template anchors, widened
// by a winnowing window as common passages are) are evidence against no
// candidate and are left out of resemblance and containment on both
// sides, however much of the page they cover: a page that is mostly its
// site's template is judged on the rest.
//
// Nothing here is kept between documents: the site's earlier pages are
// the index's candidates (the first page that held a template key is its
// exemplar, so it is found through that key once the key is common), and
// their hosts and anchors are their stored features. Memory, a Redis node
// and a Redis Cluster return the same candidates and features, so they
// give the same templates; a document without a url has none.

// hostOf returns the hash of the host of rawURL (lower case, without a
// port or a leading "www."), never 0; 0 when rawURL has no host.
func hostOf(rawURL string) uint64 {
	if rawURL == "" {
		return 0
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return 0
	}
	h := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	f := fnv.New64a()
	f.Write([]byte(h))
	return max(f.Sum64(), 1)
}

// siteTemplates adds to each job's discount the passages it shares with
// different pages of its own site (see "Site templates"). feats returns
// a candidate's decoded features by id (nil when gone or undecodable).
func (p *Pipeline) siteTemplates(jobs []*job, feats func(id string) *sketch.Features) {
	for _, j := range jobs {
		if j.feats == nil || j.feats.Host == 0 || len(j.seq) == 0 {
			continue
		}
		as := j.feats.Passage.Anchors[:min(j.sentenceBase, len(j.feats.Passage.Anchors))]
		if len(as) == 0 {
			continue
		}
		mine := anchorSet(as)
		var shared [][]uint32 // per same-site candidate, the anchors it shares
		var sameFeats []*sketch.Features
		for _, c := range j.cands[:min(j.earlier, len(j.cands))] {
			f := feats(c.ID)
			if f == nil || f.Host != j.feats.Host {
				continue
			}
			shared = append(shared, intersect(mine, anchorSet(f.Passage.Anchors)))
			sameFeats = append(sameFeats, f)
		}
		if len(shared) == 0 {
			continue
		}
		// The pages that share the least with the document come first:
		// pages that share only the template with it. What they share is
		// template whatever a later page is; on the rest, a page of the
		// same text (a republished or updated page) is a near duplicate.
		order := make([]int, len(shared))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return len(shared[a]) - len(shared[b]) })
		var template []uint32
		for _, i := range order {
			if !p.sameText(j, as, sameFeats[i], template) {
				template = union(template, shared[i])
			}
		}
		if len(template) == 0 {
			continue
		}
		p.addTemplate(j, as, template)
	}
}

// sameText reports whether j and a page f of its site are one text, or
// one holds the other: near duplicates by the profile's resemblance, or
// one contained in the other at its containment threshold
// (verify.DefaultJaccard, DefaultContainment without such checks), on
// their stored shingles outside the passages around
// j's anchors (as) whose hash is in elsewhere, the template the site's
// other pages showed.
func (p *Pipeline) sameText(j *job, as []sketch.Anchor, f *sketch.Features, elsewhere []uint32) bool {
	sa, sb, _, _ := sketch.AlignSamples(j.feats, f)
	if len(elsewhere) > 0 {
		var drop []uint64
		for _, r := range p.templateRanges(j, as, elsewhere) {
			for _, h := range j.seq[r.Lo:r.Hi] {
				drop = append(drop, uint64(h))
			}
		}
		drop = sketch.MaskShingles(nil, drop, min(j.feats.ShingleShift, f.ShingleShift))
		sa, sb = verify.Without(nil, sa, drop), verify.Without(nil, sb, drop)
	}
	if len(sa) == 0 || len(sb) == 0 {
		return false
	}
	return verify.Jaccard(sa, sb) >= p.threshold(verify.MethodJaccard, verify.DefaultJaccard) ||
		max(verify.Containment(sa, sb), verify.Containment(sb, sa)) >= p.threshold(verify.MethodContainment, verify.DefaultContainment)
}

// threshold is the profile's first threshold of method m (def without
// one): the resemblance it calls near, the containment it calls partial.
func (p *Pipeline) threshold(m verify.Method, def float64) float64 {
	for _, c := range p.cfg.Verify.Checks {
		if c.Method == m && c.Threshold > 0 {
			return c.Threshold
		}
	}
	return def
}

// templateRanges returns the passages around j's anchors as whose hash is
// in template (sorted): each anchor's position widened by a winnowing
// window less one on both sides, sorted by Lo, not merged.
func (p *Pipeline) templateRanges(j *job, as []sketch.Anchor, template []uint32) []verify.Range {
	n := len(j.seq)
	w := sketch.PassageWindow(n, p.passageWords(), p.cfg.Sketch.Shingle)
	var rs []verify.Range
	for _, a := range as {
		if _, ok := slices.BinarySearch(template, uint32(a.Hash)); !ok || int(a.Pos) >= n {
			continue
		}
		pos := int(a.Pos)
		rs = append(rs, verify.Range{Lo: max(pos-(w-1), 0), Hi: min(pos+w, n)})
	}
	slices.SortFunc(rs, func(a, b verify.Range) int { return a.Lo - b.Lo })
	return rs
}

// addTemplate adds to j's discount the passages around its anchors as
// (stored hashes) whose hash is in template (sorted).
func (p *Pipeline) addTemplate(j *job, as []sketch.Anchor, template []uint32) {
	rs := p.templateRanges(j, as, template)
	w := sketch.PassageWindow(len(j.seq), p.passageWords(), p.cfg.Sketch.Shingle)
	if len(rs) == 0 {
		return
	}
	slices.SortFunc(rs, func(a, b verify.Range) int { return a.Lo - b.Lo })
	if j.discount == nil {
		j.discount = &verify.Discount{}
	}
	d := j.discount
	merged := slices.Concat(d.Common, rs)
	slices.SortFunc(merged, func(a, b verify.Range) int { return a.Lo - b.Lo })
	d.Common = d.Common[:0]
	for _, r := range merged {
		d.Common = addRange(d.Common, r)
	}
	d.MinRun = w
	// The template's shingles are left out of resemblance and
	// containment on both sides, however much of the page it is.
	d.Shingles = keptShingles(d.Shingles, j.seq, rs, j.feats.ShingleShift)
}

// anchorSet returns the distinct stored hashes of as, sorted.
func anchorSet(as []sketch.Anchor) []uint32 {
	out := make([]uint32, len(as))
	for i, a := range as {
		out[i] = uint32(a.Hash)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// intersect returns the values in both a and b (sorted, distinct).
func intersect(a, b []uint32) []uint32 {
	var out []uint32
	for i, k := 0, 0; i < len(a) && k < len(b); {
		switch {
		case a[i] < b[k]:
			i++
		case a[i] > b[k]:
			k++
		default:
			out = append(out, a[i])
			i++
			k++
		}
	}
	return out
}

// union returns the values in a or b (sorted, distinct).
func union(a, b []uint32) []uint32 {
	out := make([]uint32, 0, len(a)+len(b))
	out = append(append(out, a...), b...)
	slices.Sort(out)
	return slices.Compact(out)
}
