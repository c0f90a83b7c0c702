package pipeline

import (
	"hash/fnv"
	"net/url"
	"slices"
	"strings"

	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// Site templates.
//
// A template is text that pages with different content share; a copied
// article is text that copies of one text share. How many documents hold
// a key does not tell them apart (an author box is held by a handful of
// pages of one site, a syndicated article by as many sites), and neither
// does "two different pages of one site share it": on a large site (an
// encyclopedia, a library, a crawl of one host) pages copy passages from
// each other. What tells them apart is where the text sits and what share
// of the site holds it. A site's template is its frame: text most of its
// pages hold (navigation, footer, a notice inside every article), and
// what sits with the frame outside the pages' own text (an author box
// between the share line and the comment policy, a section's banner under
// the navigation). A passage a page copies sits in its own text, held by
// the few pages that copied it however big the site.
//
// Crawlers send each page's url (or key it by its url: an id that is an
// absolute http or https URL stands for a missing url); its host is stored with the page's
// features (sketch.Features.Host), and every page holds its host's key in
// the index's passage table, whose count is the number of the site's
// pages. So, in the index stage and in input order, a document with a host
// compares itself with its earlier candidates of the same host, those that
// share the fewest of its anchors first (pages that share only the
// template with it):
//
//   - A candidate is the same text as the document when the two are near
//     duplicates by the profile's resemblance, or one holds the other by
//     its containment, on their stored shingles outside the template found
//     so far: a page republished or updated on its own site. It teaches
//     nothing about the template.
//   - With every other page of its site, a shared anchor is template when
//     it is wide (held by at least half the site's pages and by more than
//     two documents: the site's template wherever it sits), or when on both
//     pages it lies in a run of shared text that is mostly frame material
//     (anchors held by at least a quarter of the site's pages) and, on one
//     of them, reaches the page's start or end (runs: the shared anchors'
//     positions widened by a winnowing window less one, bridging own text
//     shorter than a window, as far as the page's edge).
//   - An anchor another page's template record marks as template (any site:
//     templaterec.go) is template.
//
// Template passages (runs of template anchors, widened by a winnowing
// window as common passages are) are evidence against no candidate and are
// left out of resemblance and containment on both sides, however much of
// the page they cover: a page that is mostly its site's template is judged
// on the rest.
//
// Nothing here is kept between documents: the site's earlier pages are the
// index's candidates, their hosts, anchors and template records are stored
// with them, and the counts are the index's. Memory, a Redis node and a
// Redis Cluster return the same candidates, counts and records, so they
// give the same templates. A document that names no site (no url,
// address or name) is placed by its edges (edgeHost): its site's rules
// apply once three distinct texts share them.

// pageHost returns the hash of the host of doc's url, or, without one, of
// its id when the id is an absolute http or https URL (a crawler that keys
// its pages by their address), or of the address an HTML page gives
// itself (its canonical link or og:url), else of the site name it gives
// (og:site_name, or its title's end: extract.PageSite); 0 when none
// names a host.
func pageHost(doc Document) uint64 {
	if doc.URL != "" {
		return hostOf(doc.URL)
	}
	if u, err := url.Parse(doc.ID); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		return hostOf(doc.ID)
	}
	if doc.IsHTML {
		site := extract.PageSite(doc.Text)
		if h := hostOf(site.URL); h != 0 {
			return h
		}
		return nameHost(site.Name)
	}
	return 0
}

// siteNameSalt separates a host named by its site's name from the host
// names of urls.
const siteNameSalt = "site name\x00"

// nameHost returns the hash standing for the host of a site known by its
// name only (extract.Site.Name), never 0; 0 for no name.
func nameHost(name string) uint64 {
	if name == "" {
		return 0
	}
	f := fnv.New64a()
	f.Write([]byte(siteNameSalt + name))
	return max(f.Sum64(), 1)
}

// edgeSalt separates a host named by a page's edges from other hosts.
const edgeSalt = 0x65646765686f7374 // "edgehost"

// edgeHost returns the hash standing for the host of a page that names
// none (no url, no address, no site name): its first and its last w
// tokens (w the shingle width), where a site's pages hold its name and
// navigation above their own text and its footer below. Pages of one
// site share both; copies of a text on other sites, cuts of it and texts
// mixed from several do not. 0 when the page is shorter than two
// shingles.
func edgeHost(tokens []uint64, w int) uint64 {
	if w < 1 || len(tokens) < 2*w {
		return 0
	}
	h := uint64(edgeSalt)
	for _, t := range tokens[:w] {
		h = sketch.Mix64(h ^ t)
	}
	for _, t := range tokens[len(tokens)-w:] {
		h = sketch.Mix64(h ^ t)
	}
	return max(h, 1)
}

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

// edgeSite reports whether j, whose host is named by its edges
// (edgeHost), and its earlier candidates of that host are at least
// minTexts distinct texts (one text or two: sameText on their whole
// samples), or one of those candidates has a template record (a page of
// the site found them so before). Pages that share their opening and
// their closing words are the pages of one site around their own texts,
// or versions of one text (a licence and its variants, a document and
// its copies): two texts sharing a frame is what a variant is, a third
// makes it a site's, the principle acrossSites holds other sites' frames
// to.
func (p *Pipeline) edgeSite(j *job, feats func(c *index.Candidate) *sketch.Features, recs *templateRecs) bool {
	texts := []*sketch.Features{j.feats}
	for ci := range j.cands[:min(j.earlier, len(j.cands))] {
		c := &j.cands[ci]
		f := feats(c)
		if f == nil || f.Host != j.feats.Host {
			continue
		}
		if _, ok := decodeTemplateRec(recs.of(j, c.Seq), f); ok {
			return true
		}
		if !slices.ContainsFunc(texts, func(t *sketch.Features) bool { return p.oneText(t, f, nil, nil) }) {
			if texts = append(texts, f); len(texts) == minTexts {
				return true
			}
		}
	}
	return false
}

// hostKeySalt separates a host's key from passage anchors and sentence
// keys in the index's passage table.
const hostKeySalt = 0x686f73746b6579 // "hostkey"

// hostKey is the passage-table key every page of host holds: its count in
// the index is the number of the host's pages.
func hostKey(host uint64) uint64 { return sketch.Mix64(host ^ hostKeySalt) }

// siteTemplates adds to each job's discount the passages that are its
// site's template (see "Site templates"), and to its verification the
// template records of its candidates; it writes into recs the records
// the jobs found. feats returns a candidate's decoded features (nil when
// gone or undecodable).
func (p *Pipeline) siteTemplates(jobs []*job, feats func(c *index.Candidate) *sketch.Features, recs *templateRecs) {
	for _, j := range jobs {
		if j.feats == nil || j.feats.Host == 0 || len(j.seq) == 0 {
			continue
		}
		as := j.feats.Passage.Anchors[:min(j.sentenceBase, len(j.feats.Passage.Anchors))]
		if len(as) == 0 {
			continue
		}
		if j.edge {
			j.noSite = !p.edgeSite(j, feats, recs)
		}
		if j.noSite {
			// Not a site (yet): no site rule applies, and other pages'
			// templates stay out of the resemblance with them.
			for ci := range j.cands[:min(j.earlier, len(j.cands))] {
				c := &j.cands[ci]
				if b := recs.of(j, c.Seq); b != nil {
					if f := feats(c); f != nil {
						if r, ok := decodeTemplateRec(b, f); ok {
							p.candTemplate(j, c.Seq, f, r)
						}
					}
				}
			}
			continue
		}
		mine := anchorSet(as)
		var (
			template []uint32 // the document's template anchors
			adopted  []uint32 // those other pages' records mark
			sameSeqs []uint64
			sameIDs  []string
			same     []*sketch.Features // earlier candidates of its site
			shared   [][]uint32         // the anchors each of them shares
			sameTpl  [][]uint64         // their own template shingles (records)
			earlier  [][]uint32         // every earlier candidate's anchors
			others   []otherPage        // earlier candidates of other sites
			holders  = templateHolders{}
		)
		for ci := range j.cands[:min(j.earlier, len(j.cands))] {
			c := &j.cands[ci]
			f := feats(c)
			if f == nil {
				continue
			}
			ca := anchorSet(f.Passage.Anchors)
			earlier = append(earlier, ca)
			// A page whose edges name its site knows no other site:
			// a page it does not share its edges with may be its own
			// site's (one whose edges differ) or a variant of its text.
			// Their template stays out of the resemblance with them.
			foreign := j.edge && f.Host != j.feats.Host
			var tpl []uint64 // the candidate's own template shingles
			if r, ok := decodeTemplateRec(recs.of(j, c.Seq), f); ok {
				// Template on the candidate's site is template here; the
				// candidate's own template stays out of the resemblance.
				if !foreign {
					t := intersect(mine, r.templateAnchors(f))
					adopted = union(adopted, t)
					holders.add(t, f)
				}
				tpl = p.candTemplate(j, c.Seq, f, r)
			}
			if foreign {
				continue
			}
			if f.Host == j.feats.Host {
				sameSeqs, sameIDs, same = append(sameSeqs, c.Seq), append(sameIDs, c.ID), append(same, f)
				shared = append(shared, intersect(mine, ca))
				sameTpl = append(sameTpl, tpl)
			} else if f.Host != 0 {
				others = append(others, otherPage{f: f, anchors: ca, tpl: tpl})
			}
		}
		frame, most, wide := p.siteWide(j, as, same, earlier)
		across := p.acrossSites(j, mine, adopted, others, holders)
		template = union(adopted, across)
		// Versions first: a page of the document's own text as they stand
		// (a republished or updated page) is one text with it before any
		// of what they share is taken for template, as most of a
		// generated page is text its host's other pages share. On a host
		// not named as generated the two must also share a quarter of
		// their text outside the site's frame (mayBeSameText): two
		// articles in heavy chrome are not one text. A site named by its
		// pages' edges is as often the copies of one text as one site's
		// pages (they share its opening and its close), and there the
		// "frame" is the text itself: its versions are found whole, as
		// on a generated host.
		var whole []*sketch.Features // the pages of its own text
		isWhole := make([]bool, len(same))
		gen := p.generated[j.feats.Host]
		frameless := union(template, frame)
		for i := range same {
			if len(shared[i]) > 0 && (gen || j.edge || p.mayBeSameText(mine, frameless, shared[i], same[i])) && p.sameText(j, same[i], nil, nil) {
				whole, isWhole[i] = append(whole, same[i]), true
			}
		}
		var many []uint32
		if len(frame) > 0 || j.item.Doc.IsHTML {
			// On a page its site generated: an HTML page (whatever its
			// extraction left of the frame), or one whose site's pages
			// share a frame. Plain text on a host whose documents share
			// none is a collection (a digital library, an archive of
			// texts): text three documents hold is a passage two of them
			// copied from the third, and stays evidence.
			many = p.manyTexts(same, shared, isWhole)
		}
		// The pages that share the least with the document come first:
		// pages that share only the template with it. On the rest, a page
		// of the same text once the template is left out is a near
		// duplicate.
		order := make([]int, len(shared))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return len(shared[a]) - len(shared[b]) })
		taught := make([][]uint32, len(shared)) // the template each page showed
		var generated, framedOnly []uint32      // generated hosts: what was taught as such, what the site rules alone would
		drop, dropOf := p.templateDrop(j, as, template, holders), len(template)
		for _, i := range order {
			if len(shared[i]) == 0 || isWhole[i] {
				continue
			}
			if p.mayBeSameText(mine, template, shared[i], same[i]) {
				if len(template) != dropOf { // it only grows
					drop, dropOf = p.templateDrop(j, as, template, holders), len(template)
				}
				if p.sameText(j, same[i], drop, sameTpl[i]) {
					whole = append(whole, same[i])
					continue
				}
			}
			// What it frames the document with, and what it shares with
			// it that a third text of the site holds too (manyTexts).
			taught[i] = union(p.framed(j, as, same[i], shared[i], frame, wide), intersect(shared[i], many))
			if gen {
				// Generated documentation: what two of its pages with
				// different content share is what generated both. It is
				// the host's own: its records do not mark it for other
				// sites (below), where it is text quoted from the host.
				framedOnly = union(framedOnly, taught[i])
				taught[i] = shared[i]
				generated = union(generated, shared[i])
			}
			template = union(template, taught[i])
			holders.add(taught[i], same[i])
		}
		if len(whole) > 0 {
			// A page of the document's own text on its site is judged
			// whole: what the site rules take as template is text the
			// two share as one text, not a frame around different texts.
			if j.discount == nil {
				j.discount = &verify.Discount{}
			}
			j.discount.Whole = append(j.discount.Whole, whole...)
		}
		if len(template) == 0 {
			continue
		}
		own := p.addTemplate(j, as, template, holders)
		// The document's record, and one for each page of its site that
		// showed it a template and has none (a site's first page). A
		// record marks all the template's shingles (left out of the
		// resemblance with the page), but of its anchors only those at
		// least half the site's pages hold, and those other records
		// marked: what most of a site's pages show is template wherever it
		// appears, while what sits in one site's frame (an author box) may
		// be text that another site holds in its own.
		known := intersect(template, union(most, union(adopted, across)))
		if len(generated) > 0 {
			// A generated host's shared text is its own (not for other
			// sites' records), unless framing or other sites say so too.
			elsewhere := union(framedOnly, union(adopted, across))
			known = slices.DeleteFunc(known, func(h uint32) bool {
				_, gen := slices.BinarySearch(generated, h)
				_, fr := slices.BinarySearch(elsewhere, h)
				return gen && !fr
			})
		}
		if rec, ok := recordOf(j.feats, known, own, j.feats.ShingleShift); ok {
			recs.write(j, j.res.Seq, rec)
		}
		for i, t := range taught {
			if len(t) == 0 {
				continue
			}
			had := recs.of(j, sameSeqs[i])
			rec, ok := recordOf(same[i], intersect(t, known), own, j.feats.ShingleShift)
			if !ok {
				continue
			}
			wrote := had == nil && recs.write(j, sameSeqs[i], rec)
			// A site's first page is revised (revise.go) when its record
			// is written, or, when it wrote its own, by its site's second
			// page: with what the site's pages now show of its frame.
			if firstOfSite(sameSeqs, i) && (wrote || had != nil && len(same) == 1) {
				if r, ok := planTemplate(same[i], j.res.Seq, had, rec); ok { // revise.go
					p.planRevision(j, sameSeqs[i], sameIDs[i], same[i], r)
					p.planLinkRevisions(j, sameSeqs[i], sameIDs[i], same[i], r, feats)
				}
			}
		}
	}
}

// candTemplate leaves out of j's verification against its candidate seq
// (features f) the candidate's own template, which its record r marks,
// and returns that template's shingles.
func (p *Pipeline) candTemplate(j *job, seq uint64, f *sketch.Features, r templateRec) []uint64 {
	tpl := r.templateShingles(f)
	if rs := p.recordRanges(f, r); len(rs) > 0 {
		if j.candTemplates == nil {
			j.candTemplates = map[uint64][]verify.Range{}
		}
		j.candTemplates[seq] = rs
	}
	if len(tpl) > 0 {
		if j.discount == nil {
			j.discount = &verify.Discount{}
		}
		j.discount.Templates = append(j.discount.Templates, verify.Template{Content: f.Content, Tokens: f.Tokens, Shingles: tpl})
	}
	return tpl
}

// runFlags say where a run of shared text sits.
type runFlags uint8

const (
	runStart runFlags = 1 << iota // reaches the page's start
	runEnd                        // reaches the page's end
	runFrame                      // is mostly frame material
)

// hostPages returns how many pages of j's host the index holds, j
// included: the count of the host's key once it is common, else j and
// its earlier candidates of the same host (all of them, while the key's
// bucket holds them). same are those candidates' features.
func (p *Pipeline) hostPages(j *job, same []*sketch.Features) int {
	if n, ok := commonDocs(j, hostKey(j.feats.Host)); ok {
		return n + 1
	}
	return len(same) + 1
}

// commonDocs returns how many earlier documents hold index key k of j
// when k is common for j.
func commonDocs(j *job, k uint64) (int, bool) {
	i, ok := slices.BinarySearch(j.res.CommonAnchors, k)
	if !ok || i >= len(j.res.CommonAnchorDocs) {
		return 0, false
	}
	return j.res.CommonAnchorDocs[i], true
}

// minWideDocs: a text two pages share is what a copy is; a wide text is
// held by more.
const minWideDocs = 2

// frameShare: frame material is held by at least 1/frameShare of the
// site's pages (a per-author box on a site of a few authors, a section's
// banner); wide text by at least half of them.
const frameShare = 4

// siteWide returns the stored hashes (sorted) of j's anchors (as) that at
// least a quarter of the pages of j's site hold, j included (frame), of
// those the ones that at least half of them hold (most), and of those the
// ones that more than minWideDocs documents hold (wide). A common key's holders are its count, else j and
// the earlier candidates that hold it (earlier: their anchor sets). same
// are j's earlier candidates of its site.
func (p *Pipeline) siteWide(j *job, as []sketch.Anchor, same []*sketch.Features, earlier [][]uint32) (frame, most, wide []uint32) {
	pages := p.hostPages(j, same)
	keys := j.entry.Anchors[:min(len(as), len(j.entry.Anchors))]
	for i, k := range keys {
		h := uint32(as[i].Hash)
		docs, ok := commonDocs(j, k)
		if !ok {
			for _, ca := range earlier {
				if _, in := slices.BinarySearch(ca, h); in {
					docs++
				}
			}
		}
		docs++ // j
		if docs < 2 || frameShare*docs < pages {
			continue
		}
		frame = append(frame, h)
		if 2*docs >= pages {
			most = append(most, h)
			if docs > minWideDocs {
				wide = append(wide, h)
			}
		}
	}
	slices.Sort(frame)
	slices.Sort(most)
	slices.Sort(wide)
	return slices.Compact(frame), slices.Compact(most), slices.Compact(wide)
}

// framed returns the anchors of shared (j's anchors as that page f of its
// site holds too, sorted) that are template: the wide ones, and those
// that on both pages lie in a run of shared text that is mostly frame
// material and, on one of them, reaches the page's start or end.
func (p *Pipeline) framed(j *job, as []sketch.Anchor, f *sketch.Features, shared, frame, wide []uint32) []uint32 {
	mine := p.runFlagsOf(as, len(j.seq), shared, frame)
	theirs := p.runFlagsOf(f.Passage.Anchors, len(f.Passage.Fp), shared, frame)
	var out []uint32
	for _, h := range shared {
		_, isWide := slices.BinarySearch(wide, h)
		a, b := mine[h], theirs[h]
		if isWide || a&b&runFrame != 0 && (a|b)&(runStart|runEnd) != 0 {
			out = append(out, h)
		}
	}
	return out
}

// runFlagsOf returns, for each anchor of as (a page of n positions) whose
// stored hash is in shared, where its run of shared text sits. The runs
// are the shared anchors' positions widened by a winnowing window less
// one on both sides, merged where less than a window of other text lies
// between them, and reaching the page's start or end when less than a
// window lies between them and it; a run is frame when at least half its
// anchors are in frame. An anchor at several positions has the flags of
// each.
func (p *Pipeline) runFlagsOf(as []sketch.Anchor, n int, shared, frame []uint32) map[uint32]runFlags {
	if n <= 0 {
		return nil
	}
	w := sketch.PassageWindow(n, p.passageWords(), p.cfg.Sketch.Shingle)
	type at struct {
		pos  int
		hash uint32
	}
	var pts []at
	for _, a := range as {
		h := uint32(a.Hash)
		if _, ok := slices.BinarySearch(shared, h); ok && int(a.Pos) < n {
			pts = append(pts, at{int(a.Pos), h})
		}
	}
	slices.SortFunc(pts, func(a, b at) int { return a.pos - b.pos })
	out := make(map[uint32]runFlags, len(pts))
	for i := 0; i < len(pts); {
		var fl runFlags
		if pts[i].pos-(w-1) <= w {
			fl |= runStart
		}
		k, hi, inFrame := i, min(pts[i].pos+w, n), 0
		for ; k < len(pts) && (k == i || pts[k].pos-(w-1) <= hi+w); k++ {
			hi = max(hi, min(pts[k].pos+w, n))
			if _, ok := slices.BinarySearch(frame, pts[k].hash); ok {
				inFrame++
			}
		}
		if hi+w >= n {
			fl |= runEnd
		}
		if inFrame > 0 && 2*inFrame >= k-i {
			fl |= runFrame
		}
		for _, pt := range pts[i:k] {
			out[pt.hash] |= fl
		}
		i = k
	}
	return out
}

// sameText reports whether j and a page f of its site are one text, or
// one holds the other: near duplicates by the profile's resemblance, or
// one contained in the other at its containment threshold
// (verify.DefaultJaccard, DefaultContainment without such checks), on
// their stored shingles outside mine (j's template found so far: stored
// values of its sample at j's shingle shift, sorted; templateDrop) and
// outside theirs (f's own template, as its record says, at f's shift).
func (p *Pipeline) sameText(j *job, f *sketch.Features, mine, theirs []uint64) bool {
	return p.oneText(j.feats, f, mine, theirs)
}

// oneText is sameText of pages a and b, outside dropA (a's template, at
// a's shift) and dropB (b's, at b's).
func (p *Pipeline) oneText(a, b *sketch.Features, dropA, dropB []uint64) bool {
	sa, sb, _, _ := sketch.AlignSamples(a, b)
	narrow := min(a.ShingleShift, b.ShingleShift)
	for _, d := range []struct {
		vals  []uint64
		shift byte
	}{{dropB, b.ShingleShift}, {dropA, a.ShingleShift}} {
		if len(d.vals) == 0 {
			continue
		}
		drop := d.vals
		if d.shift != narrow {
			drop = sketch.MaskShingles(nil, drop, narrow) // the width AlignSamples cut to
		}
		sa, sb = verify.Without(nil, sa, drop), verify.Without(nil, sb, drop)
	}
	return p.oneTextOn(verify.OverlapOf(sa, sb)) // overlap.go
}

// otherPage is an earlier candidate of another site than the document's:
// its features, its anchors' stored hashes (sorted) and its own template
// shingles (its record's).
type otherPage struct {
	f       *sketch.Features
	anchors []uint32
	tpl     []uint64
}

// minTexts: a block that three different texts hold at their edge is
// template. Two pages sharing a block is what a copy or a quote is; a
// third text holding it too, when none of the three is a copy of
// another, makes it text that pages with different content share.
const minTexts = 3

// acrossSites returns j's anchors (mine, sorted) outside known that are
// template because pages of other sites with different content frame
// their own text with it: the text around the anchor that the document
// shares with an earlier candidate of another site (others) runs to the
// start or end of both pages (sharedToEdge: a consent notice above the
// page or below its footer), and the document and the candidates it so
// shares the anchor with are at least minTexts distinct texts, two pages
// being one text when they are near duplicates by the profile's
// resemblance, or one holds the other by its containment, on their
// stored shingles outside their own templates (their records: oneText).
// Copies of one article, however many sites republished it, are one
// text, and sit inside their pages (a site's name and navigation come
// before them); a notice several sites show around their own articles is
// held by as many texts as pages. It adds the first page holding each
// such anchor to holders. A document without a host has no other sites
// and finds nothing here.
func (p *Pipeline) acrossSites(j *job, mine, known []uint32, others []otherPage, holders templateHolders) []uint32 {
	if len(others) < minTexts-1 {
		return nil
	}
	type pair struct{ a, b int } // -1 is the document
	memo := map[pair]bool{}
	edges := edgeRuns{}
	one := func(a, b int) bool {
		if a > b {
			a, b = b, a
		}
		k := pair{a, b}
		if v, ok := memo[k]; ok {
			return v
		}
		fb := others[b]
		var v bool
		if a < 0 {
			v = p.oneText(j.feats, fb.f, nil, fb.tpl)
		} else {
			fa := others[a]
			v = p.oneText(fa.f, fb.f, fa.tpl, fb.tpl)
		}
		memo[k] = v
		return v
	}
	var out []uint32
	for _, h := range mine {
		if _, in := slices.BinarySearch(known, h); in {
			continue
		}
		var hold []int // the other pages sharing it to the edge
		for i, o := range others {
			if _, in := slices.BinarySearch(o.anchors, h); in {
				hold = append(hold, i)
			}
		}
		if len(hold) < minTexts-1 {
			continue
		}
		// Copies of the document are its own text (a cluster of copies
		// shares everything); then the edges.
		hold = slices.DeleteFunc(hold, func(i int) bool { return one(-1, i) || !edges.at(j.feats, i, others[i].f, h) })
		if len(hold) < minTexts-1 {
			continue
		}
		texts := []int{-1} // one page of each distinct text
		for _, i := range hold {
			if !slices.ContainsFunc(texts, func(t int) bool { return one(t, i) }) {
				texts = append(texts, i)
			}
			if len(texts) == minTexts {
				out = append(out, h)
				holders.add([]uint32{h}, others[hold[0]].f)
				break
			}
		}
	}
	return out
}

// edgeRuns caches, for each other page (by index) and offset between
// the two pages' positions, the runs of text the document and that page
// share at that offset, and whether each reaches an edge of both.
type edgeRuns map[[2]int][]edgeRun

// edgeRun is a run of positions [lo, hi) of the document that a page
// holds at one offset, and whether it reaches an edge of both pages.
type edgeRun struct {
	lo, hi int
	edge   bool
}

// at reports whether the text that page b (other page i) shares with a
// around the anchor whose stored hash is h (their stored per-position
// fingerprints agree, from the anchor outwards) reaches the start or the
// end of each of them. Each run is scanned once.
func (e edgeRuns) at(a *sketch.Features, i int, b *sketch.Features, h uint32) bool {
	pa, ok := anchorPos(a, h)
	pb, okb := anchorPos(b, h)
	fa, fb := a.Passage.Fp, b.Passage.Fp
	if !ok || !okb || pa >= len(fa) || pb >= len(fb) {
		return false
	}
	k := [2]int{i, pb - pa}
	for _, r := range e[k] {
		if r.lo <= pa && pa < r.hi {
			return r.edge
		}
	}
	lo := 0 // how far back from the anchor they agree
	for pa-lo-1 >= 0 && pb-lo-1 >= 0 && fa[pa-lo-1] == fb[pb-lo-1] {
		lo++
	}
	hi := 1 // how far on
	for pa+hi < len(fa) && pb+hi < len(fb) && fa[pa+hi] == fb[pb+hi] {
		hi++
	}
	edgeA := pa-lo == 0 || pa+hi == len(fa)
	edgeB := pb-lo == 0 || pb+hi == len(fb)
	r := edgeRun{lo: pa - lo, hi: pa + hi, edge: edgeA && edgeB}
	e[k] = append(e[k], r)
	return r.edge
}

// mayBeSameText reports whether page f, which shares the anchors shared
// (sorted) of j's (mine), can be the same text as j outside the template
// found so far: it shares, outside the template, at least a quarter of
// the anchors of the smaller of the two (one text holding the other at
// the profile's containment shares most of the smaller one's anchors;
// a quarter leaves a wide margin for the anchors winnowing places
// differently at a text's edges). Otherwise sameText, which compares the
// stored samples, need not run.
func (p *Pipeline) mayBeSameText(mine, template, shared []uint32, f *sketch.Features) bool {
	outside := func(hs []uint32) int {
		n := 0
		for _, h := range hs {
			if _, in := slices.BinarySearch(template, h); !in {
				n++
			}
		}
		return n
	}
	s := outside(shared)
	return 4*s >= min(outside(mine), outside(anchorSet(f.Passage.Anchors)))
}

// templateDrop returns the stored values of j's sample (sorted) in the
// passages around its anchors as whose hash is in template: what sameText
// leaves out of j.
func (p *Pipeline) templateDrop(j *job, as []sketch.Anchor, template []uint32, holders templateHolders) []uint64 {
	if len(template) == 0 {
		return nil
	}
	return keptShingles(nil, j.seq, p.templateRanges(j, as, template, holders), j.feats.ShingleShift)
}

// mainNear reports whether a partial match by passages between two pages
// with a url is a near duplicate on their main text (each page's words
// outside its template: its site's for the document, its record's for the
// candidate, as the shares are counted): the words the passages cover, over
// the union of the two main texts, reach the profile's resemblance (web:
// 0.5). The sample's resemblance counts what is left of each site's frame
// that is not template yet (a page's breadcrumbs, lists of its site's
// titles, a young site's whole frame), which outweighs a short article on
// both pages; the alignment counts the article's words, so a whole copy of
// a short article on a site of its own is near to the first, while a
// quote, one paragraph of the other's article, stays partial.
func (p *Pipeline) mainNear(doc, cand *sketch.Features, a, b mainWords) bool {
	if doc == nil || cand == nil || doc.Host == 0 || cand.Host == 0 {
		return false
	}
	inter := min(a.covered, b.covered)
	union := a.total + b.total - inter
	return union > 0 && float64(inter) >= p.threshold(verify.MethodJaccard, verify.DefaultJaccard)*float64(union)
}

// knownFrame reports whether mainNear may judge j and its candidate i on
// their main texts: always on a page whose site a url, an address or a
// name gives, where what is left of a young site's frame is still main
// text; on a page placed by its edges (j.edge), only when a template is
// known on one of the two, since without one their main texts are their
// whole texts, which the profile's resemblance has judged.
func (p *Pipeline) knownFrame(j *job, i int) bool {
	return !j.edge || len(j.siteTemplate) > 0 || len(j.candTemplates[j.cands[i].Seq]) > 0
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

// templateHolders maps the stored hash of a template anchor to a page
// that holds it: the first page that showed it as template.
type templateHolders map[uint32]*sketch.Features

// add records f as the holder of hashes that have none.
func (h templateHolders) add(hashes []uint32, f *sketch.Features) {
	for _, x := range hashes {
		if _, ok := h[x]; !ok {
			h[x] = f
		}
	}
}

// templateRanges returns the passages around j's anchors as whose hash is
// in template (sorted), sorted by Lo, not merged. A passage is the text
// around the anchor that the page holding it as template holds too: from
// the anchor's position outwards as long as the two pages' stored
// per-position fingerprints agree, at most a winnowing window less one
// either side (where winnowing may have placed no anchor). Without a
// holder it is that whole window.
func (p *Pipeline) templateRanges(j *job, as []sketch.Anchor, template []uint32, holders templateHolders) []verify.Range {
	n := len(j.seq)
	w := sketch.PassageWindow(n, p.passageWords(), p.cfg.Sketch.Shingle)
	fp := j.feats.Passage.Fp
	var rs []verify.Range
	for _, a := range as {
		h := uint32(a.Hash)
		if _, ok := slices.BinarySearch(template, h); !ok || int(a.Pos) >= n {
			continue
		}
		pos := int(a.Pos)
		r := verify.Range{Lo: max(pos-(w-1), 0), Hi: min(pos+w, n)}
		if f := holders[h]; f != nil && len(fp) == n {
			r = heldRange(fp, pos, r, f, h)
		}
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b verify.Range) int { return a.Lo - b.Lo })
	return rs
}

// heldRange narrows r, the window around position pos of a page whose
// per-position fingerprints are fp, to the text around it that holder
// holds around its anchor whose stored hash is h (their fingerprints
// agree); r as it is when holder has no such anchor.
func heldRange(fp []byte, pos int, r verify.Range, holder *sketch.Features, h uint32) verify.Range {
	q, ok := anchorPos(holder, h)
	if !ok || q >= len(holder.Passage.Fp) {
		return r
	}
	hfp := holder.Passage.Fp
	lo, hi := pos, pos+1
	for lo > r.Lo && q-(pos-lo)-1 >= 0 && fp[lo-1] == hfp[q-(pos-lo)-1] {
		lo--
	}
	for hi < r.Hi && q+(hi-pos) < len(hfp) && fp[hi] == hfp[q+(hi-pos)] {
		hi++
	}
	return verify.Range{Lo: lo, Hi: hi}
}

// recordRanges returns the passages of page f around the anchors its
// template record r marks: each a winnowing window less one either side,
// sorted by Lo.
func (p *Pipeline) recordRanges(f *sketch.Features, r templateRec) []verify.Range {
	n := len(f.Passage.Fp)
	w := sketch.PassageWindow(n, p.passageWords(), p.cfg.Sketch.Shingle)
	var rs []verify.Range
	for i, on := range r.anchors {
		if pos := int(f.Passage.Anchors[i].Pos); on && pos < n {
			rs = append(rs, verify.Range{Lo: max(pos-(w-1), 0), Hi: min(pos+w, n)})
		}
	}
	slices.SortFunc(rs, func(a, b verify.Range) int { return a.Lo - b.Lo })
	return rs
}

// anchorPos returns the position of f's first anchor whose stored hash is
// h.
func anchorPos(f *sketch.Features, h uint32) (int, bool) {
	for _, a := range f.Passage.Anchors {
		if uint32(a.Hash) == h {
			return int(a.Pos), true
		}
	}
	return 0, false
}

// addTemplate adds to j's discount the passages around its anchors as
// (stored hashes) whose hash is in template (sorted), and returns the
// stored shingles around them that its sample keeps (sorted). As
// evidence, a template passage is what the page holding it as template
// holds too (holders): a quote next to an author box keeps its every
// word. Out of the resemblance goes the whole winnowing window around
// each template anchor, so that the template's scraps too short for an
// anchor of their own (a title in a list, a date) do not make two pages
// of different sites less alike than their articles are.
func (p *Pipeline) addTemplate(j *job, as []sketch.Anchor, template []uint32, holders templateHolders) []uint64 {
	rs := p.templateRanges(j, as, template, holders)
	around := p.templateRanges(j, as, template, nil)
	w := sketch.PassageWindow(len(j.seq), p.passageWords(), p.cfg.Sketch.Shingle)
	if len(rs) == 0 {
		return nil
	}
	slices.SortFunc(rs, func(a, b verify.Range) int { return a.Lo - b.Lo })
	if j.discount == nil {
		j.discount = &verify.Discount{}
	}
	d := j.discount
	j.siteTemplate = withRanges(nil, rs)
	merged := slices.Concat(d.Common, rs)
	slices.SortFunc(merged, func(a, b verify.Range) int { return a.Lo - b.Lo })
	d.Common = d.Common[:0]
	for _, r := range merged {
		d.Common = addRange(d.Common, r)
	}
	d.MinRun = w
	// The template's shingles are left out of resemblance and
	// containment on both sides, however much of the page it is.
	own := keptShingles(nil, j.seq, around, j.feats.ShingleShift)
	d.Shingles = union(d.Shingles, own)
	return own
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

// union returns the values in a or b (each sorted and distinct), sorted
// and distinct: a linear merge.
func union[T uint32 | uint64](a, b []T) []T {
	out := make([]T, 0, len(a)+len(b))
	for i, k := 0, 0; i < len(a) || k < len(b); {
		switch {
		case k == len(b) || i < len(a) && a[i] < b[k]:
			out = append(out, a[i])
			i++
		case i == len(a) || b[k] < a[i]:
			out = append(out, b[k])
			k++
		default:
			out = append(out, a[i])
			i++
			k++
		}
	}
	return out
}

// manyTexts returns the stored hashes (sorted) of the document's anchors
// that two earlier pages of its site hold (shared: the anchors each
// shares with it) whose texts differ from each other and from the
// document's (own marks the pages of its own text): text three different
// texts of one site hold. That is the site's template wherever it sits
// on the page (a generated section, an author box, a promo inside the
// article), where text one page of the site copies from another is held
// by two.
func (p *Pipeline) manyTexts(same []*sketch.Features, shared [][]uint32, own []bool) []uint32 {
	var out []uint32
	for i := range same {
		if own[i] || len(shared[i]) == 0 {
			continue
		}
		for k := i + 1; k < len(same); k++ {
			if own[k] || len(shared[k]) == 0 {
				continue
			}
			both := intersect(shared[i], shared[k])
			if len(both) == 0 || subset(both, out) || p.oneText(same[i], same[k], nil, nil) {
				continue
			}
			out = union(out, both)
		}
	}
	return out
}

// subset reports whether every value of a (sorted) is in b (sorted).
func subset(a, b []uint32) bool {
	for _, h := range a {
		if _, ok := slices.BinarySearch(b, h); !ok {
			return false
		}
	}
	return true
}
