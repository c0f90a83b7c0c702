package eval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/neardup/neardup/pipeline"
)

// Generated reports whether the named set is generated (the site sets,
// from the gutenberg-editions folder) rather than read from a folder of
// its name.
func Generated(name string) bool {
	_, ok := sitesVariant(name)
	return ok || name == setChrome || name == setChromeHTML || name == setArticles || name == SetRefDocs || name == SetManPages
}

// sitesVariant returns the rendering a set name stands for.
func sitesVariant(name string) (SitesVariant, bool) {
	for _, v := range sitesVariants {
		if v.Name() == name {
			return v, true
		}
	}
	return 0, false
}

func buildSites(g *Sites, v SitesVariant) *Set {
	render := map[SitesVariant]string{
		SitesText:       "as text (the template's visible text around the article)",
		SitesHTML:       "as HTML (input field html; the pipeline extracts the main text)",
		SitesHTMLBoiler: "as HTML with the site's boilerplate paragraph (about 80 words) inside every article",
	}[v]
	return sitesSet(g, v, v.Name(), render)
}

// buildChrome is the chrome corpus as the named set.
func buildChrome(g *Sites, name string) *Set {
	v, render := SitesText, "as text (the visible text of the whole page)"
	if name == setChromeHTML {
		v, render = SitesHTML, "as HTML (input field html; the pipeline extracts the main text)"
	}
	s := sitesSet(g, v, name, render)
	var syn, quotes, updates int
	for _, p := range g.Pages {
		switch p.Copy {
		case "syndicated":
			syn++
		case "quote":
			quotes++
		case "update":
			updates++
		}
	}
	s.Order = fmt.Sprintf("%d pages of %d small sites (5–15 pages each) generated from the Gutenberg e-texts (seed %d), %s, every page with its url, in crawl order: sites interleaved, every source before its copies; short articles (most of 110–260 words) in chrome that varies with the page (breadcrumbs with the title, date and comment count, an author box for each of a site's 2–6 authors, promotions, a comment policy, related and most-read titles of the site, shared consent notices; half the sites semantic HTML, half opaque class names); %d syndicated copies (an article whole on 3–6 other sites, each in its own template, light edits or none), %d quotes (a paragraph of another site's article with an attribution), %d updates (a page's article again on its own site, lightly edited), %d unique pages",
		len(g.Pages), len(g.Sites), g.Config.Seed, render, syn, quotes, updates, len(g.Pages)-syn-quotes-updates)
	return s
}

func sitesSet(g *Sites, v SitesVariant, name, render string) *Set {
	var near, partial int
	for _, p := range g.Pages {
		switch p.Role {
		case RoleNear:
			near++
		case RolePartial:
			partial++
		}
	}
	s := &Set{Name: name, sites: g, Docs: g.Docs(v), Label: g.Label, Expected: g.Expected(),
		Order: fmt.Sprintf("%d pages of %d sites generated from the Gutenberg e-texts (seed %d), %s, in crawl order: sites interleaved, every source before its copies; %d near copies (light edits, on the same or another site), %d partial copies (one or two passages of 60–300 words copied from earlier pages, or an excerpt: the first paragraphs, 35–75%%, of a page of another site), %d unique pages",
			len(g.Pages), len(g.Sites), g.Config.Seed, render, near, partial, len(g.Pages)-near-partial),
		PairsDoc: "every pair of pages of one site (they share the template) and every (copy, earlier page) pair: a copy and a page holding what it copied are positive, pages whose articles share no word negative",
	}
	s.Pairs = func(yield func(string, string) bool) {
		for i, p := range g.Pages {
			for _, q := range g.Pages[:i] {
				if q.Site != p.Site && p.Unique() {
					continue
				}
				if l := g.Label(p.ID, q.ID); l != Unlabelled && (q.Site == p.Site || l == Positive) {
					if !yield(p.ID, q.ID) {
						return
					}
				}
			}
		}
	}
	return s
}

// SitesResult is what the stream reported on a site set beyond its
// links: the unique pages it flagged, by their rank on their site, and
// the copies it found, by kind of copy.
type SitesResult struct {
	// Unique counts the pages planted as copies of nothing; Flagged those
	// of them the stream gave a duplicate verdict (any kind but unique),
	// FlaggedSameSite those of them linked to a page of their own site
	// (the template, not the article, made them alike).
	Unique, Flagged, FlaggedSameSite int
	// Revised counts the events a revision replaced (pipeline/revise.go);
	// FirstFlagged the unique pages whose first event was a duplicate
	// verdict (Flagged as a consumer reading only first events counts).
	Revised, FirstFlagged int
	// ByRank splits the unique pages by their rank among their site's
	// pages in crawl order: a stream cannot know a template is common
	// before it has seen a few pages of the site.
	ByRank []RankBin
	// Warm is how many pages of a site the stream must have seen before
	// its template is common (index.common_docs); Warmed counts the
	// links of pages ranked after them on their site, and the unique
	// pages among them and those flagged: the figures once the stream
	// knows the template.
	Warm   int
	Warmed WarmedCounts
	// Third counts the same from a site's 3rd page on: the stream has
	// seen two pages of the site.
	Third WarmedCounts
	// BySite splits the unique pages by site.
	BySite []SiteRow
	// ByCopy counts the expected links by kind of copy.
	ByCopy []CopyRow
}

// WarmedCounts are the links and unique pages of the pages a stream
// meets once it has seen Warm pages of their site.
type WarmedCounts struct {
	Links           Counts
	Unique, Flagged int
}

// SiteRow counts a site's pages, its unique pages and those flagged.
// TemplateWords are the words of its template in the text rendering
// (those of its first page, without the article).
type SiteRow struct {
	Site                   string
	TemplateWords          int
	Pages, Unique, Flagged int
}

// RankBin counts the unique pages whose rank on their site is in
// [Lo, Hi], and those flagged.
type RankBin struct {
	Lo, Hi          int
	Unique, Flagged int
}

// CopyRow counts the expected links of one kind of copy and those
// found, by the kind of the finding match.
type CopyRow struct {
	Copy            string
	Expected, Found int
	ByKind          map[string]int
}

// FlaggedShare is Flagged / Unique.
func (r *SitesResult) FlaggedShare() float64 {
	if r.Unique == 0 {
		return 0
	}
	return float64(r.Flagged) / float64(r.Unique)
}

// siteRankBins are the bins' upper ends; the last is open.
var siteRankBins = []int{2, 5, 10, 20, 1 << 30}

var copyKinds = []string{"near-same-site", "near-other-site", "partial-1", "partial-2", "excerpt", "syndicated", "quote", "update"}

func sitesResult(s *Set, events []Event, links LinkStats, warm int) *SitesResult {
	g := s.sites
	res := &SitesResult{Warm: warm}
	for _, ev := range events {
		p := g.Page(ev.ID)
		if p == nil || p.Rank < 3 {
			continue
		}
		for _, m := range ev.Matches {
			for _, wc := range []*WarmedCounts{&res.Third, &res.Warmed} {
				if wc == &res.Warmed && p.Rank <= warm {
					continue
				}
				switch s.Label(ev.ID, m.ID) {
				case Positive:
					wc.Links.TP++
				case Negative:
					wc.Links.FP++
				default:
					wc.Links.Unlabelled++
				}
			}
		}
	}
	lo := 1
	for _, hi := range siteRankBins {
		res.ByRank = append(res.ByRank, RankBin{Lo: lo, Hi: hi})
		lo = hi + 1
	}
	byID := eventsByID(events)
	for _, ev := range events {
		if ev.Revised {
			res.Revised++
		}
	}
	siteRow := map[*Site]*SiteRow{}
	for _, st := range g.Sites {
		siteRow[st] = &SiteRow{Site: st.Name}
	}
	for _, p := range g.Pages {
		row := siteRow[p.Site]
		row.Pages++
		if p.Rank == 1 {
			row.TemplateWords = len(strings.Fields(string(p.Text()))) - p.Words()
		}
		if !p.Unique() {
			continue
		}
		row.Unique++
		res.Unique++
		if p.Rank > warm {
			res.Warmed.Unique++
		}
		if p.Rank >= 3 {
			res.Third.Unique++
		}
		bin := &res.ByRank[slices.IndexFunc(siteRankBins, func(hi int) bool { return p.Rank <= hi })]
		bin.Unique++
		ev := byID[p.ID]
		if ev != nil && ev.Revised && ev.Was != "" && ev.Was != pipeline.KindUnique {
			res.FirstFlagged++
		}
		if ev == nil || ev.Dead != "" || ev.Kind == pipeline.KindUnique || ev.Kind == "" {
			continue
		}
		if !ev.Revised {
			res.FirstFlagged++
		}
		res.Flagged++
		bin.Flagged++
		if p.Rank > warm {
			res.Warmed.Flagged++
		}
		if p.Rank >= 3 {
			res.Third.Flagged++
		}
		row.Flagged++
		if linkedTo(ev, func(id string) bool { q := g.Page(id); return q != nil && q.Site == p.Site }) != nil {
			res.FlaggedSameSite++
		}
	}
	for _, st := range g.Sites {
		res.BySite = append(res.BySite, *siteRow[st])
	}
	rows := map[string]*CopyRow{}
	for _, k := range copyKinds {
		rows[k] = &CopyRow{Copy: k, ByKind: map[string]int{}}
	}
	for i, x := range s.Expected {
		row := rows[g.Page(x.Later).Copy]
		row.Expected++
		if m := links.FoundBy[i]; m != nil {
			row.Found++
			row.ByKind[m.Kind]++
		}
	}
	for _, k := range copyKinds {
		if rows[k].Expected > 0 {
			res.ByCopy = append(res.ByCopy, *rows[k])
		}
	}
	return res
}

func writeSites(p printf, r *SitesResult) {
	p("**Unique pages flagged:** %d of %d (%.1f%%) got a duplicate verdict; %d of them were linked to a page of their own site (template text, not the article, made them alike).\n\n",
		r.Flagged, r.Unique, 100*r.FlaggedShare(), r.FlaggedSameSite)
	if r.Revised > 0 || r.FirstFlagged != r.Flagged {
		p("**Revisions:** %d events were replaced by a revision (a later page of the site showed the text a link rested on to be template); as first emitted, %d of %d unique pages (%s) had a duplicate verdict.\n\n",
			r.Revised, r.FirstFlagged, r.Unique, pct(r.FirstFlagged, r.Unique))
	}
	w := r.Warmed
	p("**From a site's page %d on** (the stream has seen `index.common_docs` = %d pages of its template): link precision %s (%d wrong), unique pages flagged %d of %d (%s).\n\n",
		r.Warm+1, r.Warm, num(w.Links.Precision()), w.Links.FP, w.Flagged, w.Unique, pct(w.Flagged, w.Unique))
	t := r.Third
	p("**From a site's 3rd page on:** link precision %s (%d wrong), unique pages flagged %d of %d (%s).\n\n",
		num(t.Links.Precision()), t.Links.FP, t.Flagged, t.Unique, pct(t.Flagged, t.Unique))
	p("By the page's rank among its site's pages in crawl order (the stream has seen rank − 1 pages of the site's template before it):\n\n| rank on its site | unique pages | flagged | share |\n|---|--:|--:|--:|\n")
	for _, b := range r.ByRank {
		p("| %s | %d | %d | %s |\n", b.label(), b.Unique, b.Flagged, pct(b.Flagged, b.Unique))
	}
	p("\nBy site:\n\n| site | template words (text) | pages | unique pages | flagged | share |\n|---|--:|--:|--:|--:|--:|\n")
	for _, r := range r.BySite {
		p("| %s | %d | %d | %d | %d | %s |\n", r.Site, r.TemplateWords, r.Pages, r.Unique, r.Flagged, pct(r.Flagged, r.Unique))
	}
	p("\n**Copies found** (an expected link per source of a copy):\n\n| copy | expected links | found | recall | by kind |\n|---|--:|--:|--:|---|\n")
	for _, c := range r.ByCopy {
		p("| %s | %d | %d | %s | %s |\n", c.Copy, c.Expected, c.Found, pct(c.Found, c.Expected), kindCounts(c.ByKind))
	}
	p("\n")
}

func (b RankBin) label() string {
	switch {
	case b.Hi >= 1<<30:
		return fmt.Sprintf("%d and later", b.Lo)
	case b.Lo == b.Hi:
		return fmt.Sprint(b.Lo)
	}
	return fmt.Sprintf("%d–%d", b.Lo, b.Hi)
}

func pct(a, b int) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

// SitesLinksFile is the file [Sites.Write] writes the expected links to.
const SitesLinksFile = "sites-links.jsonl"

// sitesLine is a page in the input contract of neardup scan, with what
// the generator knows about it in meta.
type sitesLine struct {
	ID   string    `json:"id"`
	URL  string    `json:"url"`
	Text string    `json:"text,omitempty"`
	HTML string    `json:"html,omitempty"`
	Meta sitesMeta `json:"meta"`
}

type sitesMeta struct {
	Site    string   `json:"site"`
	Rank    int      `json:"rank"`
	Role    Role     `json:"role"`
	Copy    string   `json:"copy,omitempty"`
	Sources []string `json:"sources,omitempty"`
	Words   int      `json:"article_words"`
}

// Write writes each rendering of the corpus into dir as JSON lines that
// neardup scan reads (one file per rendering, named after its set:
// sites.jsonl with field text, sites-html.jsonl and
// sites-html-boiler.jsonl with field html; meta holds the site, the
// page's rank on it, its role and its sources), in crawl order, and the
// expected links as SitesLinksFile: {"later", "earlier": [ids any of
// which is a right link], "copy"} per line. It returns the paths
// written.
func (g *Sites) Write(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	var paths []string
	write := func(name string, each func(enc *json.Encoder) error) error {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		w := bufio.NewWriter(f)
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		err = each(enc)
		if err == nil {
			err = w.Flush()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("eval: write %s: %w", path, err)
		}
		paths = append(paths, path)
		return nil
	}
	for _, v := range sitesVariants {
		err := write(v.Name()+".jsonl", func(enc *json.Encoder) error {
			for i, d := range g.Docs(v) {
				p := g.Pages[i]
				l := sitesLine{ID: d.ID, URL: p.URL, Meta: sitesMeta{Site: p.Site.Domain, Rank: p.Rank, Role: p.Role, Copy: p.Copy, Sources: p.Sources, Words: p.Words()}}
				if d.HTML {
					l.HTML = string(d.Text)
				} else {
					l.Text = string(d.Text)
				}
				if err := enc.Encode(l); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	err := write(SitesLinksFile, func(enc *json.Encoder) error {
		for _, x := range g.Expected() {
			l := struct {
				Later   string   `json:"later"`
				Earlier []string `json:"earlier"`
				Copy    string   `json:"copy"`
			}{x.Later, x.Earlier, g.Page(x.Later).Copy}
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
		return nil
	})
	return paths, err
}
