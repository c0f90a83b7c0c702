package eval

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// The chrome sets: small web sites whose chrome varies from page to page,
// generated deterministically from the Gutenberg texts, as a second,
// harder crawl than the site set. Forty sites of 5 to 15 pages each; a
// page is a short article (most of 110–260 words) inside several hundred
// words of chrome that changes with the page: breadcrumbs with the page's
// title, its date and comment count, an author box with the bio of one of
// the site's 2 to 6 authors, one or two of the site's promotions, a
// comment policy, lists of related and most-read titles drawn from the
// site's own pages, a consent notice that several sites share. Half the
// sites use semantic HTML, half opaque class names, and the author box,
// promotions and comment policy sit inside the article's container, where
// extraction keeps them. Copies: an article syndicated whole to 3 to 6
// other sites, each in its own template (light edits or none, a retitle
// now and then); a page quoting one paragraph of another site's article
// with an attribution; a page updated on its own site. All chrome text is
// made here from phrase pools, so that no site's chrome is another's.

// Names of the chrome sets: one corpus in two renderings.
const (
	// setChrome renders each page as its visible text.
	setChrome = "chrome"
	// setChromeHTML renders each page as HTML.
	setChromeHTML = "chrome-html"
)

// chromeConfig shapes the chrome corpus. The zero value gives the corpus
// the evaluation uses.
type chromeConfig struct {
	// Seed seeds every choice; default 36.
	Seed uint64
	// Sites is the number of sites; default 40. Each has 5 to 15 pages.
	Sites int
	// Syndicated is the share of original articles syndicated to 3–6
	// other sites; default 0.12. Quotes and Updates are the shares of
	// pages that quote another site's paragraph or update a page of their
	// own site; default 0.1 and 0.03.
	Syndicated, Quotes, Updates float64
}

func (c chromeConfig) withDefaults() chromeConfig {
	if c.Seed == 0 {
		c.Seed = 36
	}
	if c.Sites == 0 {
		c.Sites = 40
	}
	if c.Syndicated == 0 {
		c.Syndicated = 0.12
	}
	if c.Quotes == 0 {
		c.Quotes = 0.1
	}
	if c.Updates == 0 {
		c.Updates = 0.03
	}
	return c
}

// chromeSite is the part of a chrome site's template that changes with
// the page, beside the Site fields the renderings share.
type chromeSite struct {
	Sections      []string
	Bios          map[string]string
	Promos        []string
	CommentPolicy string
	MostReadTitle string
	// Class names of the opaque layout, by role.
	class map[string]string
}

// chromePage is what varies on a chrome page.
type chromePage struct {
	Section  string
	Comments int
	Promos   []int
	MostRead []string
	// Attribution introduces a quoted paragraph (Quote is its index).
	Attribution string
	Quote       int
}

// generateChrome builds the chrome corpus from the Gutenberg e-texts in
// dir (the gutenberg-editions folder). The same configuration gives the
// same corpus, byte for byte.
func generateChrome(dir string, cfg chromeConfig) (*Sites, error) {
	cfg = cfg.withDefaults()
	r := rand.New(rand.NewPCG(cfg.Seed, 0xc4a0e))
	books, err := loadBooks(dir)
	if err != nil {
		return nil, err
	}
	s := &Sites{Config: SitesConfig{Seed: cfg.Seed}, byID: map[string]*Page{}}
	names := map[string]bool{}
	left := map[*Site]int{}
	total := 0
	for i := range cfg.Sites {
		st := chromeSiteOf(r, i, names)
		s.Sites = append(s.Sites, st)
		left[st] = 5 + r.IntN(11)
		total += left[st]
	}
	segs := shortSegments(books, r)
	next := 0
	take := func() [][]word {
		if next >= len(segs) {
			return nil
		}
		next++
		return s.article(segs[next-1])
	}
	// Syndication: each planned copy waits for a page of its site.
	type planned struct {
		src   *Page
		edits bool
	}
	queue := map[*Site][]planned{}
	bySite := map[*Site][]*Page{}
	start := time.Date(2026, 5, 4, 6, 0, 0, 0, time.UTC)
	for i := range total {
		// A site with pages left, weighted by how many.
		x := r.IntN(total - i)
		var site *Site
		for _, st := range s.Sites {
			if x < left[st] {
				site = st
				break
			}
			x -= left[st]
		}
		left[site]--
		cs := site.chrome
		p := &Page{Site: site, Rank: len(bySite[site]) + 1, Role: RoleOriginal, Date: start.Add(time.Duration(i) * 53 * time.Minute)}
		p.Author = site.Authors[r.IntN(len(site.Authors))]
		cp := &chromePage{Section: cs.Sections[r.IntN(len(cs.Sections))], Comments: r.IntN(240), Quote: -1}
		p.chrome = cp
		u := r.Float64()
		switch {
		case len(queue[site]) > 0 && r.IntN(3) > 0:
			q := queue[site][0]
			queue[site] = queue[site][1:]
			syndicate(r, p, q.src, q.edits)
		case i >= 10 && u < cfg.Quotes:
			quotePage(r, p, s.Pages, take, cp)
		case i >= 10 && u < cfg.Quotes+cfg.Updates && len(bySite[site]) > 0:
			src := bySite[site][r.IntN(len(bySite[site]))]
			if src.Role == RoleOriginal {
				syndicate(r, p, src, true)
				p.Copy = "update"
				p.Author = src.Author
			}
		}
		if p.Paragraphs == nil {
			p.Role, p.Copy, p.Sources, p.Passages = RoleOriginal, "", nil, nil
			if p.Paragraphs = take(); p.Paragraphs == nil {
				return nil, fmt.Errorf("eval: chrome: the books hold too little text for %d pages", total)
			}
			if r.Float64() < cfg.Syndicated {
				// Syndicated whole to 3–6 other sites.
				n := 3 + r.IntN(4)
				for _, j := range r.Perm(len(s.Sites)) {
					if st := s.Sites[j]; st != site && left[st] > len(queue[st]) && n > 0 {
						queue[st] = append(queue[st], planned{src: p, edits: r.IntN(2) == 0})
						n--
					}
				}
			}
		}
		if p.Title == "" {
			p.Title = titleOf(p.Paragraphs)
		}
		s.add(p, fmt.Sprintf("%s/%s/%s-%d", site.Domain, cp.Section, slug(p.Title), i+1))
		p.BoilerAt = len(p.Paragraphs)
		bySite[site] = append(bySite[site], p)
	}
	// The lists a page shows are drawn from its site's titles: related
	// reading from any of them, most read from those published before it.
	for _, p := range s.Pages {
		others := bySite[p.Site]
		cp := p.chrome
		for _, j := range r.Perm(len(others)) {
			if o := others[j]; o != p && len(p.Related) < 4 {
				p.Related = append(p.Related, o.Title)
			}
		}
		for _, o := range others {
			if o.Rank < p.Rank && len(cp.MostRead) < 5 && r.IntN(3) > 0 {
				cp.MostRead = append(cp.MostRead, o.Title)
			}
		}
		cp.Promos = []int{r.IntN(len(p.Site.chrome.Promos))}
		if r.IntN(2) == 0 && len(p.Site.chrome.Promos) > 1 {
			cp.Promos = append(cp.Promos, (cp.Promos[0]+1)%len(p.Site.chrome.Promos))
		}
	}
	s.resolveAccept()
	return s, nil
}

// syndicate makes p a copy of src's article: whole, with light edits
// (1–3% of the words) when edits, sometimes retitled.
func syndicate(r *rand.Rand, p, src *Page, edits bool) {
	p.Role, p.Copy, p.Sources = RoleNear, "syndicated", []string{src.ID}
	var flat []word
	for _, par := range src.Paragraphs {
		flat = append(flat, par...)
	}
	if edits {
		rate := 0.01 + 0.02*r.Float64()
		edited := make([]word, 0, len(flat)+4)
		for _, w := range flat {
			switch {
			case r.Float64() >= rate:
				edited = append(edited, w)
			case r.IntN(2) == 0:
				edited = append(edited, word{w: editWords[r.IntN(len(editWords))], seg: -1})
			}
		}
		flat = edited
	}
	p.Paragraphs = splitLike(flat, src.Paragraphs)
	p.Title = src.Title
	if r.IntN(3) == 0 {
		p.Title = src.Title + retitles[r.IntN(len(retitles))]
	}
}

// quotePage makes p an original article that quotes one paragraph (or a
// run of 40–120 words) of an earlier page of another site, introduced by
// an attribution line.
func quotePage(r *rand.Rand, p *Page, pages []*Page, take func() [][]word, cp *chromePage) {
	var cands []*Page
	for _, q := range pages {
		if q.Site != p.Site && q.Words() >= 80 {
			cands = append(cands, q)
		}
	}
	if len(cands) == 0 {
		return
	}
	own := take()
	if own == nil {
		return
	}
	src := cands[r.IntN(len(cands))]
	var flat []word
	for _, par := range src.Paragraphs {
		flat = append(flat, par...)
	}
	ln := min(40+r.IntN(81), len(flat))
	at := r.IntN(len(flat) - ln + 1)
	passage := slices.Clone(flat[at : at+ln])
	pos := 1 + r.IntN(len(own))
	cp.Quote = pos
	cp.Attribution = fmt.Sprintf("As %s wrote for %s:", src.Author, src.Site.Name)
	p.Paragraphs = slices.Insert(own, pos, passage)
	p.Role, p.Copy, p.Sources, p.Passages = RolePartial, "quote", []string{src.ID}, []int{ln}
}

// shortSegments cuts the books into runs of whole paragraphs: seven in
// ten of 110–260 words (a paragraph longer than that is cut at a
// sentence), the others of 300–800, shuffled.
func shortSegments(books [][][]string, r *rand.Rand) []segment {
	target := func() int {
		if r.IntN(10) < 7 {
			return 110 + r.IntN(151)
		}
		return 300 + r.IntN(501)
	}
	var segs []segment
	for _, pars := range books {
		cur, want := segment{}, target()
		for _, par := range pars {
			for len(par) > 0 {
				room := want - cur.words
				piece := par
				if len(piece) > room+room/3 && len(piece) > 60 {
					// Cut a long paragraph after a sentence near the room left.
					cut := max(room, 30)
					for cut < len(piece)-1 && !strings.ContainsAny(piece[cut-1], ".!?") {
						cut++
					}
					piece = piece[:min(cut, len(piece))]
				}
				cur.pars = append(cur.pars, piece)
				cur.words += len(piece)
				par = par[len(piece):]
				if cur.words >= want {
					segs = append(segs, cur)
					cur, want = segment{}, target()
				}
			}
		}
	}
	r.Shuffle(len(segs), func(i, j int) { segs[i], segs[j] = segs[j], segs[i] })
	return segs
}

// Phrase pools the chrome is made of.
var (
	chromeFirst  = []string{"Morning", "Little", "Copper", "Northern", "Quiet", "Open", "Salt", "Iron", "Paper", "Cedar", "Lantern", "Meadow", "Signal", "Harbor", "Granite", "Willow", "Amber", "Orchard", "Pebble", "Thistle"}
	chromeLast   = []string{"Post", "Courier", "Gazette", "Notebook", "Review", "Dispatch", "Journal", "Chronicle", "Almanac", "Letters", "Record", "Digest", "Bulletin", "Observer", "Quarterly"}
	chromeTopic  = []string{"local history", "gardening", "the arts", "city politics", "food and markets", "schools", "small business", "science", "sport", "books", "travel", "music", "the environment", "housing", "health"}
	chromeSect   = []string{"News", "Features", "Opinion", "Culture", "Books", "Local", "Science", "Life", "Arts", "Ideas", "Places", "People", "Archive", "Reviews", "Essays", "Travel", "Food", "Business"}
	chromeFirstN = []string{"Alma", "Bram", "Celia", "Dario", "Edda", "Fergus", "Greta", "Hamid", "Ines", "Jasper", "Kaia", "Leon", "Mira", "Nils", "Odile", "Pavel", "Rhea", "Soren", "Talia", "Umar", "Vera", "Wendell", "Yara", "Zeno"}
	chromeLastN  = []string{"Abernethy", "Brook", "Castellano", "Dunmore", "Elstob", "Fairweather", "Gallo", "Holloway", "Ibsen", "Jarvik", "Kowalczyk", "Lindqvist", "Marchetti", "Nakamura", "Oduya", "Petrossian", "Quaile", "Rasmussen", "Sokolova", "Treadwell", "Underhill", "Valdez", "Whitlock", "Yilmaz"}
	chromeCity   = []string{"Leeds", "Porto", "Tampere", "Ghent", "Halifax", "Dunedin", "Bergen", "Lyon", "Cork", "Graz", "Utrecht", "Aarhus", "Bologna", "Quebec", "Galway", "Tartu"}
	chromeJob    = []string{"court reporter", "radio producer", "schoolteacher", "librarian", "museum guide", "sub-editor", "translator", "photographer", "research chemist", "council clerk", "bookseller", "nurse"}
	chromeBio1   = []string{"%s writes about %s and %s for %s.", "%s is %s's correspondent for %s and %s.", "%s covers %s and, when there is room, %s at %s.", "At %[4]s, %[1]s reports on %[2]s and %[3]s."}
	chromeBio2   = []string{"Before joining in %d, %s worked as a %s in %s.", "%[2]s spent the years before %[1]d as a %[3]s in %[4]s.", "Until %d %s was a %s, mostly in %s."}
	chromeBio3   = []string{"Send tips and corrections to %s at the newsroom address below.", "%s lives near the river with two cats and too many bicycles.", "%s's first book, a history of a street, came out last spring.", "%s answers reader letters on the first Monday of every month.", "Follow %s's notes from the road in the weekly newsletter."}
	chromePromo1 = []string{"Get %s in your inbox.", "Support independent writing at %s.", "Become a member of %s today.", "Never miss a story from %s.", "Join the readers who keep %s going."}
	chromePromo2 = []string{"Our %s newsletter arrives every %s with the week's best reads and a note from the editor.", "For the price of a coffee each %s, members get early access, the %s archive and an ad-free site.", "The %s briefing lands each %s morning: five stories, one long read, no noise.", "Members receive the %s print edition each %s and can bring a friend to our talks."}
	chromePromo3 = []string{"Sign up in seconds and leave whenever you like.", "It takes a minute, and it keeps our reporters on the street.", "Your address is never shared, and every issue has an unsubscribe link.", "Cancel at any time from your account page."}
	chromeDays   = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "month", "week"}
	chromePolicy = []string{
		"Comments are moderated and may take a few hours to appear. Please keep to the topic, be civil to other readers, and do not post personal details. We remove comments that are abusive, off topic or promotional, and we may close a thread once it has run its course.",
		"We welcome comments from registered readers. Posts that contain insults, spam, or links to unrelated sites are deleted without notice, and repeat offenders lose their account. The views in comments are those of their authors and not of the editors.",
		"Have your say below. Our community team reads every comment; those that break our house rules on abuse, privacy or advertising are taken down, and some threads are closed after a week. Real names are encouraged but not required.",
		"Comment policy: stay on topic, argue with ideas and not with people, and check a claim before you post it. We delete comments that harass, that advertise, or that reveal private information, and we may edit comments for length.",
	}
	chromeFooter1 = []string{"© 2026 %s. All rights reserved.", "%s is published by its staff and members. © 2026.", "Copyright 2026 %s and its contributors."}
	chromeFooter2 = []string{"About · Contact · Advertise · Privacy · Terms · Cookie settings", "Masthead · Corrections · Jobs · Privacy notice · Accessibility", "Our team · Write for us · Ethics policy · Privacy · Manage cookies · RSS", "Help · Subscriptions · Terms of use · Privacy policy · Sitemap"}
	chromeFooter3 = []string{"Registered office: %d %s Street, %s.", "Printed and published in %[3]s since %[1]d.", "An independent publication from %[3]s, founded in %[1]d.", "Made in %[3]s. Reader-funded since %[1]d."}
	chromeStreet  = []string{"Mill", "Chapel", "Harbour", "Station", "Market", "Bridge", "Castle", "Orchard"}
	chromeShare   = []string{"Share: Facebook · X · Email · Copy link", "Share this story on Bluesky, Mastodon or by email", "Send to a friend · Print · Save for later", "Share · Tweet · Email · Print"}
	chromeRelated = []string{"Related", "Read next", "More from this section", "You may also like", "Elsewhere on the site"}
	chromeMost    = []string{"Most read", "Popular now", "Trending", "Readers' picks", "Most shared this week"}
	chromeMenuX   = []string{"Home", "Subscribe", "Newsletters", "Events", "Podcasts", "Search", "Log in", "Donate"}
)

// chromeSiteOf makes site number i of the chrome corpus: its name (one
// not taken), template and authors.
func chromeSiteOf(r *rand.Rand, i int, taken map[string]bool) *Site {
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	var name string
	for {
		name = "The " + pick(chromeFirst) + " " + pick(chromeLast)
		if !taken[name] {
			taken[name] = true
			break
		}
	}
	slug := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, "The "), " ", ""))
	st := &Site{Name: name, Domain: slug + ".example", Layout: i % 2}
	st.Tagline = fmt.Sprintf("%s from %s, every day", strings.ToUpper(pick(chromeTopic)[:1])+pick(chromeTopic)[1:], pick(chromeCity))
	secs := slices.Clone(chromeSect)
	r.Shuffle(len(secs), func(a, b int) { secs[a], secs[b] = secs[b], secs[a] })
	cs := &chromeSite{Sections: secs[:3+r.IntN(4)], Bios: map[string]string{}}
	st.Menu = append(slices.Clone(cs.Sections), chromeMenuX[r.IntN(3)], chromeMenuX[3+r.IntN(5)])
	if r.IntN(5) > 0 {
		st.Consent = consentNotices[r.IntN(len(consentNotices))]
		st.ConsentTop = r.IntN(2) == 0
	}
	st.Share = pick(chromeShare)
	st.RelatedHeader = pick(chromeRelated)
	cs.MostReadTitle = pick(chromeMost)
	year := 1950 + r.IntN(70)
	st.Footer = fmt.Sprintf(pick(chromeFooter1), name) + " " + pick(chromeFooter2) + " " + fmt.Sprintf(pick(chromeFooter3), 10+r.IntN(190), pick(chromeStreet), pick(chromeCity))
	_ = year
	cs.CommentPolicy = pick(chromePolicy)
	for range 2 + r.IntN(2) {
		cs.Promos = append(cs.Promos, fmt.Sprintf(pick(chromePromo1), name)+" "+fmt.Sprintf(pick(chromePromo2), pick(chromeLast), pick(chromeDays))+" "+pick(chromePromo3))
	}
	names := map[string]bool{}
	for len(st.Authors) < 2+r.IntN(5) {
		a := pick(chromeFirstN) + " " + pick(chromeLastN)
		if names[a] {
			continue
		}
		names[a] = true
		st.Authors = append(st.Authors, a)
		first := strings.Fields(a)[0]
		bio := fmt.Sprintf(pick(chromeBio1), a, pick(chromeTopic), pick(chromeTopic), name) + " " +
			fmt.Sprintf(pick(chromeBio2), 1995+r.IntN(30), first, pick(chromeJob), pick(chromeCity)) + " " +
			fmt.Sprintf(pick(chromeBio3), first)
		cs.Bios[a] = bio
	}
	cs.class = map[string]string{}
	for _, role := range []string{"top", "brand", "menu", "crumbs", "body", "title", "meta", "text", "share", "author", "promo", "policy", "side", "list", "foot", "consent"} {
		cs.class[role] = fmt.Sprintf("%c%x", 'a'+rune(r.IntN(26)), r.Uint32()&0xfffff)
	}
	st.chrome = cs
	return st
}

// articleParagraphs returns the article's paragraphs as text, with a
// quote's attribution line before the quoted paragraph.
func (p *Page) articleParagraphs() []string {
	var out []string
	for i, par := range p.Paragraphs {
		if p.chrome != nil && i == p.chrome.Quote {
			out = append(out, p.chrome.Attribution)
		}
		out = append(out, paragraphText(par))
	}
	return out
}

// chromeText renders a chrome page as its visible text.
func (p *Page) chromeText() []byte {
	st, cs, cp := p.Site, p.Site.chrome, p.chrome
	var b strings.Builder
	line := func(s string) {
		if s != "" {
			b.WriteString(s)
			b.WriteString("\n\n")
		}
	}
	if st.Consent != "" && st.ConsentTop {
		line(st.Consent + " Accept all. Reject all. Manage preferences.")
	}
	line(st.Name + " — " + st.Tagline)
	line(strings.Join(st.Menu, " | "))
	line("Home › " + cp.Section + " › " + p.Title)
	line(p.Title)
	line(fmt.Sprintf("By %s · %s · %d comments", p.Author, p.Date.Format("2 January 2006"), cp.Comments))
	for _, par := range p.articleParagraphs() {
		line(par)
	}
	line(st.Share)
	line("About the author. " + cs.Bios[p.Author])
	for _, i := range cp.Promos {
		line(cs.Promos[i])
	}
	line(cs.CommentPolicy)
	if len(p.Related) > 0 {
		line(st.RelatedHeader + "\n" + strings.Join(p.Related, "\n"))
	}
	if len(cp.MostRead) > 0 {
		line(cs.MostReadTitle + "\n" + strings.Join(cp.MostRead, "\n"))
	}
	line(st.Footer)
	if st.Consent != "" && !st.ConsentTop {
		line(st.Consent + " Accept all. Reject all. Manage preferences.")
	}
	return []byte(strings.TrimSpace(b.String()))
}

// chromeHTML renders a chrome page as HTML: semantic elements (layout 0)
// or divs with opaque class names (layout 1). The author box, the
// promotions and the comment policy sit inside the article's container.
func (p *Page) chromeHTML() []byte {
	st, cs, cp := p.Site, p.Site.chrome, p.chrome
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	esc := htmlEscape
	semantic := st.Layout == 0
	c := cs.class
	open := func(tag, role string) string {
		if semantic {
			return "<" + tag + ">"
		}
		return `<div class="` + c[role] + `">`
	}
	closeTag := func(tag string) string {
		if semantic {
			return "</" + tag + ">"
		}
		return "</div>"
	}
	link := func(text string) string {
		slug := strings.ToLower(strings.Join(strings.Fields(text), "-"))
		return fmt.Sprintf(`<a href="/%s">%s</a>`, esc(slug), esc(text))
	}
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		var li []string
		for _, t := range items {
			li = append(li, "<li>"+link(t)+"</li>")
		}
		if semantic {
			w("<section><h3>%s</h3><ul>%s</ul></section>\n", esc(title), strings.Join(li, ""))
		} else {
			w("<div class=\"%s\"><div class=\"%s\">%s</div><ul>%s</ul></div>\n", c["list"], c["title"], esc(title), strings.Join(li, ""))
		}
	}
	consent := func() {
		if st.Consent != "" {
			w("<div class=\"%s\" id=\"cookie-consent\"><p>%s</p><button>Accept all</button><button>Reject all</button><a href=\"/privacy\">Manage preferences</a></div>\n", c["consent"], esc(st.Consent))
		}
	}
	w("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s — %s</title>\n</head>\n<body>\n", esc(p.Title), esc(st.Name))
	if st.ConsentTop {
		consent()
	}
	var menu []string
	for _, m := range st.Menu {
		menu = append(menu, "<li>"+link(m)+"</li>")
	}
	w("%s<a href=\"/\">%s</a> <span>%s</span>%s\n", open("header", "top"), esc(st.Name), esc(st.Tagline), closeTag("header"))
	w("%s<ul>%s</ul>%s\n", open("nav", "menu"), strings.Join(menu, ""), closeTag("nav"))
	w("%s<a href=\"/\">Home</a> › %s › %s%s\n", open("nav", "crumbs"), link(cp.Section), esc(p.Title), closeTag("nav"))
	w("%s\n%s\n", open("main", "body"), open("article", "text"))
	w("<h1>%s</h1>\n<p class=\"%s\">By %s · <time>%s</time> · <a href=\"#comments\">%d comments</a></p>\n", esc(p.Title), c["meta"], link(p.Author), p.Date.Format("2 January 2006"), cp.Comments)
	for _, par := range p.articleParagraphs() {
		w("<p>%s</p>\n", esc(par))
	}
	w("<div class=\"%s\">%s</div>\n", c["share"], esc(st.Share))
	w("<div class=\"%s\"><h4>About the author</h4><p>%s</p></div>\n", c["author"], esc(cs.Bios[p.Author]))
	for _, i := range cp.Promos {
		w("<div class=\"%s\"><p>%s</p></div>\n", c["promo"], esc(cs.Promos[i]))
	}
	w("<div class=\"%s\" id=\"comments\"><p>%s</p></div>\n", c["policy"], esc(cs.CommentPolicy))
	w("%s\n%s\n", closeTag("article"), open("aside", "side"))
	list(st.RelatedHeader, p.Related)
	list(cs.MostReadTitle, cp.MostRead)
	w("%s\n%s\n", closeTag("aside"), closeTag("main"))
	w("%s<p>%s</p>%s\n", open("footer", "foot"), esc(st.Footer), closeTag("footer"))
	if !st.ConsentTop {
		consent()
	}
	w("</body>\n</html>\n")
	return []byte(b.String())
}

// setArticles is a plain crawl of one site: a navigation bar, a cookie
// banner and a footer around an <article>, each page a different article.
// No page copies another: every link is wrong, and the extracted text
// should be the article alone.
const setArticles = "articles"

// generateArticles builds the articles set: n pages (default 600) of one
// site, each an original article cut from the Gutenberg e-texts in dir.
func generateArticles(dir string, n int) (*Sites, error) {
	if n == 0 {
		n = 600
	}
	r := rand.New(rand.NewPCG(600, 0xa271c1e))
	books, err := loadBooks(dir)
	if err != nil {
		return nil, err
	}
	segs := cutSegments(books, r)
	if len(segs) < n {
		return nil, fmt.Errorf("eval: articles: the books hold %d articles, want %d", len(segs), n)
	}
	st := &Site{Name: "Fieldnotes Daily", Domain: "fieldnotes.example", Tagline: "Reports and essays",
		Menu:    []string{"Home", "World", "Science", "Culture", "Opinion", "About"},
		Consent: "We use cookies to make this site work and, with your consent, to measure how it is used and to improve it. You can accept all cookies, reject the optional ones, or choose which kinds to allow in the cookie settings. Your choice is stored for twelve months and you can change it at any time from the link in the footer.",
		Footer:  "© 2026 Fieldnotes Daily. All rights reserved. Fieldnotes Daily is an independent publication. About us · Contact · Terms of service · Privacy policy · Cookie settings · Accessibility",
		Authors: []string{"staff"}}
	s := &Sites{Config: SitesConfig{Seed: 600}, Sites: []*Site{st}, byID: map[string]*Page{}}
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		pars := s.article(segs[i])
		p := &Page{Site: st, Rank: i + 1, Role: RoleOriginal, Author: "staff", Date: start.Add(time.Duration(i) * time.Hour), Paragraphs: pars}
		p.Title = titleOf(pars)
		s.add(p, fmt.Sprintf("fieldnotes.example/%d/%s", 1000+i, slug(p.Title)))
		p.BoilerAt = len(pars)
		p.plain = true
	}
	return s, nil
}

// plainHTML renders a page of the articles set: navigation, cookie
// banner and footer around an <article>.
func (p *Page) plainHTML() []byte {
	st := p.Site
	var b strings.Builder
	esc := htmlEscape
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>%s</title></head>\n<body>\n", esc(p.Title))
	var menu []string
	for _, m := range st.Menu {
		menu = append(menu, fmt.Sprintf(`<li><a href="/%s">%s</a></li>`, strings.ToLower(m), esc(m)))
	}
	fmt.Fprintf(&b, "<nav><a href=\"/\">%s</a><ul>%s</ul></nav>\n", esc(st.Name), strings.Join(menu, ""))
	fmt.Fprintf(&b, "<div class=\"cookie-banner\"><p>%s</p><button>Accept</button><button>Reject</button></div>\n", esc(st.Consent))
	fmt.Fprintf(&b, "<article>\n<h1>%s</h1>\n", esc(p.Title))
	for _, par := range p.Paragraphs {
		fmt.Fprintf(&b, "<p>%s</p>\n", esc(paragraphText(par)))
	}
	fmt.Fprintf(&b, "</article>\n<footer><p>%s</p></footer>\n</body>\n</html>\n", esc(st.Footer))
	return []byte(b.String())
}

func buildArticles(g *Sites) *Set {
	s := sitesSet(g, SitesHTML, setArticles, "as HTML")
	s.Order = fmt.Sprintf("%d pages of one site, each a different article cut from the Gutenberg e-texts, as HTML with a navigation bar, a cookie banner and a footer around the <article>, every page with its url; no page copies another", len(g.Pages))
	return s
}
