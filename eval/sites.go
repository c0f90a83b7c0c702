package eval

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
)

// The site set: a crawl of pages on several web sites, generated
// deterministically from the Gutenberg texts. Each page is a site's
// template (consent notice, header and menu, share buttons, related
// reading, footer) around an article cut from one of the books; some
// articles are near copies of an earlier page's (on the same site or
// syndicated on another) and some embed passages copied from earlier
// pages. Template text is shared by every page of a site, and consent
// notices by several sites: that sharing is not a link.

// Names of the site sets: one corpus in three renderings.
const (
	// setSites renders each page as plain text: template and article
	// concatenated, as a crawler that keeps all visible text sends it.
	setSites = "sites"
	// setSitesHTML renders each page as HTML (input field html), so that
	// extraction can drop the chrome.
	setSitesHTML = "sites-html"
	// setSitesBoiler is setSitesHTML with a paragraph of the site's own
	// boilerplate (a subscription pitch, a disclaimer) inside every
	// article, where extraction keeps it.
	setSitesBoiler = "sites-html-boiler"
)

// SitesVariant is one rendering of the site corpus.
type SitesVariant int

const (
	SitesText SitesVariant = iota
	SitesHTML
	SitesHTMLBoiler
)

// sitesVariants lists the renderings in report order.
var sitesVariants = []SitesVariant{SitesText, SitesHTML, SitesHTMLBoiler}

// Name is the set name of the rendering.
func (v SitesVariant) Name() string {
	return [...]string{setSites, setSitesHTML, setSitesBoiler}[v]
}

// gutenbergSiteTexts are the e-texts the articles are cut from: one
// edition of each work, so that no two articles are editions of one text.
var gutenbergSiteTexts = []string{"pg1342.txt", "pg2701.txt", "pg84.txt", "pg1661.txt", "pg11.txt"}

// Role says how a page's article was made.
type Role string

const (
	// RoleOriginal: an article cut from a book, found nowhere earlier.
	RoleOriginal Role = "original"
	// RoleNear: an earlier page's article with light edits (2–5% of the
	// words substituted, deleted or inserted, paragraphs reflowed,
	// sometimes the last paragraph dropped).
	RoleNear Role = "near"
	// RolePartial: an original article with one or two passages of 60 to
	// 300 words copied from earlier pages' articles, or an excerpt of an
	// earlier page of another site (its first paragraphs).
	RolePartial Role = "partial"
)

// SitesConfig shapes the site corpus. The zero value gives the corpus
// the evaluation uses.
type SitesConfig struct {
	// Seed seeds every choice; default 22.
	Seed uint64
	// Pages is the number of pages; default 420.
	Pages int
	// Near and Partial are the shares of pages planted as near and as
	// partial copies; default 0.2 each.
	Near, Partial float64
}

func (c SitesConfig) withDefaults() SitesConfig {
	if c.Seed == 0 {
		c.Seed = 22
	}
	if c.Pages == 0 {
		c.Pages = 420
	}
	if c.Near == 0 {
		c.Near = 0.2
	}
	if c.Partial == 0 {
		c.Partial = 0.2
	}
	return c
}

// Sites is a generated crawl.
type Sites struct {
	Config SitesConfig
	Sites  []*Site
	// Pages in crawl order: sites interleaved, every source before its
	// copies.
	Pages []*Page
	byID  map[string]*Page
	// segWords holds the words of each segment of the books, the unit
	// the articles' provenance refers to.
	segWords [][]string
}

// Site is one web site and its template.
type Site struct {
	Name, Domain, Tagline string
	Menu                  []string
	// Consent is the consent-platform notice (shared with other sites),
	// empty for none; ConsentTop puts it above the header.
	Consent    string
	ConsentTop bool
	Share      string
	// Related is how many related-reading links a page lists (0: none).
	Related       int
	RelatedHeader string
	// Extras are blocks of a long template (most read, newsletter, about
	// us), after the related links.
	Extras []string
	Footer string
	// Boiler is the paragraph the boiler rendering puts inside each
	// article.
	Boiler  string
	Authors []string
	// Layout picks the HTML structure: semantic (header, nav, main,
	// article, aside, footer), divs (class names only), or sidebar
	// first.
	Layout int
	weight float64
	// chrome is the template of a chrome-set site (generateChrome).
	chrome *chromeSite
}

// Page is one page of the crawl.
type Page struct {
	ID, URL string
	Site    *Site
	// Rank is the page's position among its site's pages in crawl order,
	// from 1.
	Rank   int
	Title  string
	Author string
	Date   time.Time
	Role   Role
	// Copy details a copy's kind: near-same-site, near-other-site,
	// partial-1 or partial-2 (passages), excerpt; empty for an original.
	Copy string
	// Sources are the pages the copy was made from: the one page of a
	// near copy, one per passage of a partial one.
	Sources []string
	// Passages are the copied passages' lengths in words.
	Passages []int
	// Paragraphs are the article's.
	Paragraphs [][]word
	// Related are the titles listed under related reading.
	Related []string
	// BoilerAt is the paragraph index before which the boiler rendering
	// puts the site's boilerplate paragraph.
	BoilerAt int
	origin   map[int64]bool
	segs     map[int32]bool
	// accept holds, per expected link (one per source), the earlier pages
	// that hold at least 80% of what was copied.
	accept [][]string
	// chrome is what varies on a chrome-set page (generateChrome).
	chrome *chromePage
	// plain marks a page of the articles set (generateArticles).
	plain bool
}

// word is an article word and where it comes from: word pos of segment
// seg, or seg -1 for a word an edit put in.
type word struct {
	w   string
	seg int32
	pos int32
}

func originKey(seg, pos int32) int64 { return int64(seg)<<32 | int64(uint32(pos)) }

// Words returns the number of words of the article.
func (p *Page) Words() int {
	n := 0
	for _, par := range p.Paragraphs {
		n += len(par)
	}
	return n
}

// Unique reports whether the page was planted as a copy of nothing.
func (p *Page) Unique() bool { return p.Role == RoleOriginal }

// GenerateSites builds the site corpus from the Gutenberg e-texts in dir
// (the gutenberg-editions folder). The same configuration gives the same
// corpus, byte for byte.
func GenerateSites(dir string, cfg SitesConfig) (*Sites, error) {
	cfg = cfg.withDefaults()
	r := rand.New(rand.NewPCG(cfg.Seed, 0x517e5))
	books, err := loadBooks(dir)
	if err != nil {
		return nil, err
	}
	s := &Sites{Config: cfg, Sites: siteTemplates(r), byID: map[string]*Page{}}
	segs := cutSegments(books, r)
	next := 0
	take := func(min int) [][]word {
		for next < len(segs) {
			seg := segs[next]
			next++
			if seg.words >= min {
				return s.article(seg)
			}
		}
		return nil
	}
	var total float64
	for _, st := range s.Sites {
		total += st.weight
	}
	bySite := map[*Site][]*Page{}
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	for i := range cfg.Pages {
		x := r.Float64() * total
		site := s.Sites[len(s.Sites)-1]
		for _, st := range s.Sites {
			if x < st.weight {
				site = st
				break
			}
			x -= st.weight
		}
		p := &Page{Site: site, Rank: len(bySite[site]) + 1, Role: RoleOriginal, Date: start.Add(time.Duration(i) * 97 * time.Minute)}
		p.Author = site.Authors[r.IntN(len(site.Authors))]
		u := r.Float64()
		switch {
		case i >= 8 && u < cfg.Near:
			s.nearCopy(r, p, bySite)
		case i >= 8 && u < cfg.Near+cfg.Partial && r.IntN(4) == 0:
			s.excerpt(r, p)
		case i >= 8 && u < cfg.Near+cfg.Partial:
			if !s.partialCopy(r, p, take) {
				p.Paragraphs = nil
			}
		}
		if p.Paragraphs == nil {
			p.Role, p.Copy, p.Sources, p.Passages = RoleOriginal, "", nil, nil
			p.Paragraphs = take(150)
			if p.Paragraphs == nil {
				return nil, fmt.Errorf("eval: sites: the books hold too little text for %d pages", cfg.Pages)
			}
		}
		if p.Title == "" {
			p.Title = titleOf(p.Paragraphs)
		}
		s.add(p, fmt.Sprintf("%s/%s/%s-%d", site.Domain, site.Menu[r.IntN(len(site.Menu))], slug(p.Title), i+1))
		p.BoilerAt = min(1+r.IntN(3), len(p.Paragraphs))
		bySite[site] = append(bySite[site], p)
	}
	// Related reading: titles of other pages of the same site (earlier or
	// later, as a site's sidebar lists them).
	for _, p := range s.Pages {
		others := bySite[p.Site]
		if p.Site.Related == 0 || len(others) < 2 {
			continue
		}
		for _, j := range r.Perm(len(others)) {
			if o := others[j]; o != p && len(p.Related) < p.Site.Related {
				p.Related = append(p.Related, o.Title)
			}
		}
	}
	s.resolveAccept()
	return s, nil
}

// loadBooks reads the e-texts the articles are cut from (the
// gutenberg-editions folder dir), as paragraphs of words.
func loadBooks(dir string) ([][][]string, error) {
	var books [][][]string
	for _, name := range gutenbergSiteTexts {
		b, err := os.ReadFile(filepath.Join(dir, "texts", name))
		if err != nil {
			return nil, fmt.Errorf("eval: sites: %w", err)
		}
		books = append(books, bookParagraphs(b))
	}
	return books, nil
}

// article makes seg the next article of the corpus: its words with their
// provenance (a new segment of s.segWords).
func (s *Sites) article(seg segment) [][]word {
	id := int32(len(s.segWords))
	var all []string
	var pars [][]word
	for _, par := range seg.pars {
		var ws []word
		for _, w := range par {
			ws = append(ws, word{w: w, seg: id, pos: int32(len(all))})
			all = append(all, w)
		}
		pars = append(pars, ws)
	}
	s.segWords = append(s.segWords, all)
	return pars
}

// slug makes a url path segment of a title.
func slug(title string) string {
	return strings.ToLower(strings.Join(strings.Fields(strings.Map(func(c rune) rune {
		if unicode.IsLetter(c) || unicode.IsDigit(c) || c == ' ' {
			return c
		}
		return -1
	}, title)), "-"))
}

// add gives p its id (and url) and the provenance of its article's words,
// and appends it to the crawl.
func (s *Sites) add(p *Page, id string) {
	p.ID = strings.ToLower(id)
	p.URL = "https://" + p.ID
	p.trace()
	s.Pages = append(s.Pages, p)
	s.byID[p.ID] = p
}

// trace records where the words of p's article come from (origin, segs).
func (p *Page) trace() {
	p.origin, p.segs = map[int64]bool{}, map[int32]bool{}
	for _, par := range p.Paragraphs {
		for _, w := range par {
			if w.seg >= 0 {
				p.origin[originKey(w.seg, w.pos)] = true
				p.segs[w.seg] = true
			}
		}
	}
}

// nearCopy makes p a near copy of an earlier page: one of its own site
// (a republished or updated page) two times in five, else one of another
// site (syndication).
func (s *Sites) nearCopy(r *rand.Rand, p *Page, bySite map[*Site][]*Page) {
	var src *Page
	same := bySite[p.Site]
	if r.IntN(5) < 2 && len(same) > 0 {
		src = same[r.IntN(len(same))]
		p.Copy = "near-same-site"
	} else {
		var others []*Page
		for _, q := range s.Pages {
			if q.Site != p.Site {
				others = append(others, q)
			}
		}
		if len(others) == 0 {
			return
		}
		src = others[r.IntN(len(others))]
		p.Copy = "near-other-site"
	}
	p.Role, p.Sources = RoleNear, []string{src.ID}
	rate := 0.02 + 0.03*r.Float64()
	var flat []word
	for _, par := range src.Paragraphs {
		flat = append(flat, par...)
	}
	// Drop the last paragraph one time in four when it is short.
	if last := src.Paragraphs[len(src.Paragraphs)-1]; len(src.Paragraphs) > 3 && r.IntN(4) == 0 && len(last) < len(flat)/12 {
		flat = flat[:len(flat)-len(last)]
	}
	edited := make([]word, 0, len(flat)+8)
	for _, w := range flat {
		if r.Float64() >= rate {
			edited = append(edited, w)
			continue
		}
		switch k := r.IntN(20); {
		case k < 10: // substitute
			edited = append(edited, word{w: editWords[r.IntN(len(editWords))], seg: -1})
		case k < 17: // delete
		default: // insert
			edited = append(edited, word{w: editWords[r.IntN(len(editWords))], seg: -1}, w)
		}
	}
	if r.IntN(2) == 0 {
		p.Paragraphs = reflow(r, edited)
	} else { // the source's paragraphs, as far as the edits left them
		p.Paragraphs = splitLike(edited, src.Paragraphs)
	}
	if p.Copy == "near-other-site" && r.IntN(2) == 0 {
		p.Title = src.Title + retitles[r.IntN(len(retitles))]
	} else {
		p.Title = src.Title
	}
}

// partialCopy makes p an original article with one passage (two in one
// page of three) copied from earlier pages' articles, each passage 60 to
// 300 words long and a paragraph of its own. It reports false when there is no earlier
// page to copy from.
func (s *Sites) partialCopy(r *rand.Rand, p *Page, take func(int) [][]word) bool {
	n := 1
	if r.IntN(3) == 0 {
		n = 2
	}
	var cands []*Page
	for _, q := range s.Pages {
		if q.Words() >= 120 {
			cands = append(cands, q)
		}
	}
	if len(cands) < n {
		return false
	}
	own := take(300)
	if own == nil {
		return false
	}
	p.Role, p.Copy = RolePartial, fmt.Sprintf("partial-%d", n)
	for _, j := range r.Perm(len(cands))[:n] {
		src := cands[j]
		var flat []word
		for _, par := range src.Paragraphs {
			flat = append(flat, par...)
		}
		ln := min(60+r.IntN(241), len(flat))
		at := r.IntN(len(flat) - ln + 1)
		passage := slices.Clone(flat[at : at+ln])
		pos := r.IntN(len(own) + 1)
		own = slices.Insert(own, pos, passage)
		p.Sources = append(p.Sources, src.ID)
		p.Passages = append(p.Passages, ln)
	}
	p.Paragraphs = own
	return true
}

// excerpt makes p an aggregator's excerpt of an earlier page of another
// site: its first paragraphs, 35% to 60% of its words (at least 150, at
// most 75%), and a line that points to the full article.
func (s *Sites) excerpt(r *rand.Rand, p *Page) {
	var cands []*Page
	for _, q := range s.Pages {
		if q.Site != p.Site && q.Words() >= 400 && len(q.Paragraphs) >= 3 {
			cands = append(cands, q)
		}
	}
	if len(cands) == 0 {
		return
	}
	src := cands[r.IntN(len(cands))]
	want := max(150, int(float64(src.Words())*(0.35+0.25*r.Float64())))
	n := 0
	for _, par := range src.Paragraphs {
		if n >= want || 4*(n+len(par)) > 3*src.Words() {
			break // enough, or a paragraph that would take over 75%
		}
		p.Paragraphs = append(p.Paragraphs, par)
		n += len(par)
	}
	if n < 150 {
		p.Paragraphs = nil // the source's paragraphs are too long: an original instead
		return
	}
	var more []word
	for _, w := range strings.Fields("This is an excerpt. Read the full article on " + src.Site.Name + ".") {
		more = append(more, word{w: w, seg: -1})
	}
	p.Paragraphs = append(p.Paragraphs, more)
	p.Role, p.Copy, p.Sources, p.Title = RolePartial, "excerpt", []string{src.ID}, src.Title
}

// resolveAccept finds, for every copy and source, the earlier pages that
// hold at least 80% of what was copied from that source: any of them is
// a right link.
func (s *Sites) resolveAccept() {
	for i, p := range s.Pages {
		if p.Role == RoleOriginal {
			continue
		}
		for _, srcID := range p.Sources {
			src := s.byID[srcID]
			copied := map[int64]bool{}
			for key := range p.origin {
				if src.origin[key] {
					copied[key] = true
				}
			}
			var acc []string
			for _, q := range s.Pages[:i] {
				if !sharesSeg(p, q) {
					continue
				}
				n := 0
				for key := range copied {
					if q.origin[key] {
						n++
					}
				}
				if len(copied) > 0 && float64(n) >= 0.8*float64(len(copied)) {
					acc = append(acc, q.ID)
				}
			}
			if !slices.Contains(acc, srcID) {
				acc = append(acc, srcID)
			}
			p.accept = append(p.accept, acc)
		}
	}
}

func sharesSeg(a, b *Page) bool {
	for seg := range a.segs {
		if b.segs[seg] {
			return true
		}
	}
	return false
}

// Page returns the page of an id, or nil.
func (s *Sites) Page(id string) *Page { return s.byID[id] }

// Shared returns the number of article words two pages share by
// provenance (the same word of the same book segment).
func (s *Sites) Shared(a, b *Page) int {
	if !sharesSeg(a, b) {
		return 0
	}
	if len(b.origin) < len(a.origin) {
		a, b = b, a
	}
	n := 0
	for key := range a.origin {
		if b.origin[key] {
			n++
		}
	}
	return n
}

// Label labels the link from later to earlier: positive when later was
// planted as a copy and earlier holds at least 80% of what it copied
// from one of its sources; negative when the two articles share no
// word; unlabelled otherwise (two copies of one source, a partial copy
// and a near copy of its source: they share text without one being
// planted from the other). Template text never counts.
func (s *Sites) Label(later, earlier string) Label {
	a, b := s.byID[later], s.byID[earlier]
	if a == nil || b == nil {
		return Unlabelled
	}
	for _, acc := range a.accept {
		if slices.Contains(acc, earlier) {
			return Positive
		}
	}
	if s.Shared(a, b) == 0 {
		return Negative
	}
	return Unlabelled
}

// Expected returns the links recall is measured against: one per source
// of each copy.
func (s *Sites) Expected() []Expect {
	var out []Expect
	for _, p := range s.Pages {
		for _, acc := range p.accept {
			out = append(out, Expect{Later: p.ID, Earlier: acc})
		}
	}
	return out
}

// Docs returns the pages rendered as v, in crawl order.
func (s *Sites) Docs(v SitesVariant) []Doc {
	docs := make([]Doc, len(s.Pages))
	for i, p := range s.Pages {
		switch v {
		case SitesText:
			docs[i] = Doc{ID: p.ID, URL: p.URL, Text: p.Text()}
		default:
			docs[i] = Doc{ID: p.ID, URL: p.URL, Text: p.HTML(v == SitesHTMLBoiler), HTML: true}
		}
	}
	return docs
}

// bookParagraphs splits an e-text into paragraphs of words, dropping the
// Project Gutenberg header and footer, illustrations, and paragraphs of
// fewer than six words (headings, tables of contents).
func bookParagraphs(b []byte) [][]string {
	text := string(b)
	if i := strings.Index(text, "*** START OF"); i >= 0 {
		if j := strings.Index(text[i:], "\n"); j >= 0 {
			text = text[i+j:]
		}
	}
	if i := strings.Index(text, "*** END OF"); i >= 0 {
		text = text[:i]
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	var out [][]string
	for _, par := range strings.Split(text, "\n\n") {
		par = strings.TrimSpace(par)
		if strings.HasPrefix(par, "[Illustration") {
			continue
		}
		if ws := strings.Fields(par); len(ws) >= 6 {
			out = append(out, ws)
		}
	}
	return out
}

type segment struct {
	pars  [][]string
	words int
}

// cutSegments cuts the books into runs of whole paragraphs, three in ten
// of 150–350 words, four in ten of 350–800, three in ten of 800–1,500,
// and shuffles them so that the sites mix the books.
func cutSegments(books [][][]string, r *rand.Rand) []segment {
	target := func() int {
		switch k := r.IntN(10); {
		case k < 3:
			return 150 + r.IntN(201)
		case k < 7:
			return 350 + r.IntN(451)
		default:
			return 800 + r.IntN(701)
		}
	}
	var segs []segment
	for _, pars := range books {
		cur, want := segment{}, target()
		for _, par := range pars {
			if cur.words > 0 && cur.words+len(par) > want+want/4 {
				segs = append(segs, cur)
				cur, want = segment{}, target()
			}
			cur.pars = append(cur.pars, par)
			cur.words += len(par)
			if cur.words >= want {
				segs = append(segs, cur)
				cur, want = segment{}, target()
			}
		}
	}
	r.Shuffle(len(segs), func(i, j int) { segs[i], segs[j] = segs[j], segs[i] })
	return segs
}

// reflow breaks words into new paragraphs of 40 to 160 words.
func reflow(r *rand.Rand, ws []word) [][]word {
	var out [][]word
	for len(ws) > 0 {
		n := min(40+r.IntN(121), len(ws))
		out = append(out, ws[:n:n])
		ws = ws[n:]
	}
	return out
}

// splitLike breaks edited words where like's paragraphs ended: after the
// word whose origin ends a paragraph of like.
func splitLike(ws []word, like [][]word) [][]word {
	ends := map[int64]bool{}
	for _, par := range like {
		if last := par[len(par)-1]; last.seg >= 0 {
			ends[originKey(last.seg, last.pos)] = true
		}
	}
	var out [][]word
	start := 0
	for i, w := range ws {
		if w.seg >= 0 && ends[originKey(w.seg, w.pos)] {
			out = append(out, ws[start:i+1:i+1])
			start = i + 1
		}
	}
	if start < len(ws) {
		out = append(out, ws[start:])
	}
	return out
}

// titleOf makes a headline of the article's first words.
func titleOf(pars [][]word) string {
	var ws []string
	for _, w := range pars[0] {
		t := strings.TrimFunc(w.w, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) })
		if t == "" {
			continue
		}
		ws = append(ws, t)
		if len(ws) == 7 {
			break
		}
	}
	for i, w := range ws {
		rs := []rune(strings.ToLower(w))
		if i == 0 || len(rs) > 3 {
			rs[0] = unicode.ToUpper(rs[0])
		}
		ws[i] = string(rs)
	}
	return strings.Join(ws, " ")
}

// editWords are what a light edit substitutes or inserts.
var editWords = []string{"indeed", "quite", "very", "then", "also", "rather", "still", "perhaps", "certainly", "now",
	"the", "a", "much", "just", "so", "even", "truly", "again", "often", "almost"}

var retitles = []string{" (reprint)", " — from our archive", ": a classic reading", " | Syndicated"}

// paragraphText joins a paragraph's words.
func paragraphText(par []word) string {
	var b strings.Builder
	for i, w := range par {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.w)
	}
	return b.String()
}

// ArticleText returns the article alone: paragraphs separated by blank
// lines.
func (p *Page) ArticleText() string {
	var pars []string
	for _, par := range p.Paragraphs {
		pars = append(pars, paragraphText(par))
	}
	return strings.Join(pars, "\n\n")
}

// Text renders the page as the visible text of the whole page, template
// included.
func (p *Page) Text() []byte {
	if p.chrome != nil {
		return p.chromeText()
	}
	st := p.Site
	var b bytes.Buffer
	line := func(s string) {
		if s != "" {
			b.WriteString(s)
			b.WriteString("\n\n")
		}
	}
	if st.ConsentTop {
		line(st.Consent + " Accept all. Reject all. Manage preferences.")
	}
	line(st.Name + " — " + st.Tagline)
	line(strings.Join(st.Menu, " | "))
	line(p.Title)
	line("By " + p.Author + " · " + p.Date.Format("2 January 2006"))
	line(p.ArticleText())
	line(st.Share)
	if len(p.Related) > 0 {
		line(st.RelatedHeader + "\n" + strings.Join(p.Related, "\n"))
	}
	for _, x := range st.Extras {
		line(x)
	}
	line(st.Footer)
	if !st.ConsentTop && st.Consent != "" {
		line(st.Consent + " Accept all. Reject all. Manage preferences.")
	}
	return bytes.TrimSpace(b.Bytes())
}
