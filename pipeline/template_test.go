package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/synth"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

func TestHostOf(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://www.Example.org/a", "http://example.org:8080/b?x=1", true},
		{"https://example.org/a", "https://news.example.org/a", false},
		{"https://example.org/a", "https://example.com/a", false},
	} {
		if got := hostOf(tc.a) == hostOf(tc.b); got != tc.same || hostOf(tc.a) == 0 {
			t.Errorf("hostOf(%q) == hostOf(%q): %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
	for _, u := range []string{"", "not a url", "/relative/path", "mailto:"} {
		if h := hostOf(u); h != 0 {
			t.Errorf("hostOf(%q) = %#x, want 0", u, h)
		}
	}
}

func TestPageHost(t *testing.T) {
	for _, tc := range []struct {
		doc  Document
		host string // "" : none
	}{
		{Document{ID: "a", URL: "https://www.example.org/1"}, "https://example.org/"},
		{Document{ID: "https://example.org/2"}, "https://example.org/"},
		{Document{ID: "http://news.example.org/x?y=1"}, "https://news.example.org/"},
		{Document{ID: "https://example.com/1", URL: "https://example.org/1"}, "https://example.org/"},
		{Document{ID: "example.org/2"}, ""},
		{Document{ID: "ftp://example.org/2"}, ""},
		{Document{ID: "source-document01238.txt"}, ""},
		// An HTML page without a url: the address it gives itself.
		{Document{ID: "p1", IsHTML: true, Text: []byte(`<head><link rel="canonical" href="https://www.news.example/a/1"></head><body><p>x</p></body>`)}, "https://news.example/"},
		{Document{ID: "p2", IsHTML: true, Text: []byte(`<head><meta property="og:url" content="https://news.example/a/2"></head>`)}, "https://news.example/"},
		{Document{ID: "p3", URL: "https://other.example/3", IsHTML: true, Text: []byte(`<head><link rel="canonical" href="https://news.example/a/3"></head>`)}, "https://other.example/"},
		{Document{ID: "p4", IsHTML: true, Text: []byte(`<head><link rel="canonical" href="/a/4"></head>`)}, ""},
		// Text is not markup: a canonical link in it names nothing.
		{Document{ID: "p5", Text: []byte(`<head><link rel="canonical" href="https://news.example/a/5"></head>`)}, ""},
		// Without an address, the site's name: its og:site_name, else
		// its title's end.
		{Document{ID: "p6", IsHTML: true, Text: []byte(`<head><title>A story | The Ledger</title></head>`)}, "name:the ledger"},
		{Document{ID: "p7", IsHTML: true, Text: []byte(`<head><meta property="og:site_name" content="The Ledger"><title>Another</title></head>`)}, "name:the ledger"},
		{Document{ID: "p8", IsHTML: true, Text: []byte(`<head><link rel="canonical" href="https://news.example/a/8"><title>A story | The Ledger</title></head>`)}, "https://news.example/"},
		{Document{ID: "p9", Text: []byte(`<head><title>A story | The Ledger</title></head>`)}, ""},
	} {
		want := hostOf(tc.host)
		if name, ok := strings.CutPrefix(tc.host, "name:"); ok {
			want = nameHost(name)
		}
		if got := pageHost(tc.doc); got != want {
			t.Errorf("pageHost(%+v) = %#x, want the host of %q (%#x)", tc.doc, got, tc.host, want)
		}
	}
}

// sitePage is a page of a template test: its id, url ("": none) and text.
type sitePage struct {
	id, url string
	text    []byte
}

// wordSource returns a source of random words and a joiner of word lists
// into a page's text.
func wordSource(seed uint64) (words func(n int) []string, join func(parts ...[]string) []byte) {
	join = func(parts ...[]string) []byte { return []byte(strings.Join(slices.Concat(parts...), " ")) }
	return synth.Words(seed), join
}

// checkKinds streams pages (without their urls unless urls) through ix
// and checks the verdicts want names: kind, and duplicate_of after a
// space.
func checkKinds(t *testing.T, pages []sitePage, urls bool, ix func(*Pipeline) index.Store, want map[string]string) {
	t.Helper()
	checkKindsWith(t, testConfig(t, "web"), pages, urls, ix, want)
}

// checkKindsWith is checkKinds with the pipeline configured by cfg.
func checkKindsWith(t *testing.T, cfg Config, pages []sitePage, urls bool, ix func(*Pipeline) index.Store, want map[string]string) {
	t.Helper()
	var items []Item
	for _, p := range pages {
		d := Document{ID: p.id, Text: p.text}
		if urls {
			d.URL = p.url
		}
		items = append(items, Item{Doc: d})
	}
	for _, o := range run(t, cfg, ix, items) {
		if o.Event == nil {
			t.Fatalf("no event: %+v", o.Dead)
		}
		w, ok := want[o.Event.ID]
		if !ok {
			continue
		}
		got := o.Event.Kind
		if o.Event.DuplicateOf != "" {
			got += " " + o.Event.DuplicateOf
		}
		if got != w {
			t.Errorf("%s: %s, want %s", o.Event.ID, got, w)
		}
	}
}

// Pages of one site share its template (here 120 words, with a page's
// 150-word article): a site's second page is not a copy of its first,
// though a page republished on the site, an article syndicated to another
// site (near to the original: the original's template, known once its
// site has shown a second page, is left out of the resemblance) and a
// paragraph quoted by a page of a third site are found. Without urls the
// template of the first two pages is a shared passage.
func TestSiteTemplates(t *testing.T) {
	words, join := wordSource(36)
	header, footer := words(60), words(60)
	other := words(120)
	a1, a2, b := words(150), words(150), words(150)
	republished := append([]string{}, a1...)
	republished[40], republished[90] = "edited", "again"
	pages := []sitePage{
		{"a1", "https://a.example/1", join(header, a1, footer)},
		{"a2", "https://a.example/2", join(header, a2, footer)},
		{"a3", "https://a.example/3", join(header, republished, footer)},
		{"g1", "https://g.example/1", join(other[:60], a1, other[60:])},
		{"q1", "https://q.example/1", join(b[:70], a2[30:90], b[70:])},
	}
	mem := func(pl *Pipeline) index.Store { return memoryIndex(t, pl) }
	t.Run("urls", func(t *testing.T) {
		checkKinds(t, pages, true, mem, map[string]string{"a1": "unique", "a2": "unique", "a3": "near a1", "g1": "near a1", "q1": "partial a2"})
	})
	t.Run("no urls", func(t *testing.T) {
		checkKinds(t, pages, false, mem, map[string]string{"a2": "partial a1"})
	})
}

// A block three different texts of a framed site hold is the site's
// template wherever it sits (manyTexts): a promo inside the article of
// three of a site's sixteen pages (too few for the site's frame) does not
// link its third holder. A block two texts hold is what a quote is (its
// second holder is linked to the first), and so is a paragraph one page
// quotes from another. On a host whose documents share no frame (a
// collection of texts), the block three documents hold is a passage
// copied from the first, and stays evidence.
func TestManyTexts(t *testing.T) {
	words, join := wordSource(40)
	header, footer, promo := words(60), words(60), words(80)
	bodies := make([][]string, 17)
	for i := 1; i < len(bodies); i++ {
		bodies[i] = words(150)
	}
	quote := bodies[3][40:120]
	for i, block := range map[int][]string{10: promo, 12: promo, 14: promo, 16: quote} {
		bodies[i] = slices.Concat(bodies[i][:75], block, bodies[i][75:])
	}
	pages := make([]sitePage, 0, len(bodies)-1)
	for i := 1; i < len(bodies); i++ {
		pages = append(pages, sitePage{fmt.Sprintf("p%d", i), fmt.Sprintf("https://a.example/%d", i), join(header, bodies[i], footer)})
	}
	mem := func(pl *Pipeline) index.Store { return memoryIndex(t, pl) }
	t.Run("framed", func(t *testing.T) {
		checkKinds(t, pages, true, mem, map[string]string{"p10": "unique", "p12": "partial p10", "p14": "unique", "p16": "partial p3"})
	})
	t.Run("no frame", func(t *testing.T) {
		for i := range pages {
			pages[i].text = join(bodies[i+1])
		}
		checkKinds(t, pages, true, mem, map[string]string{"p12": "partial p10", "p14": "partial p10", "p16": "partial p3"})
	})
	t.Run("html", func(t *testing.T) {
		// The same texts as HTML pages: a page its site generated,
		// whatever its extraction leaves of the frame.
		var items []Item
		for i, p := range pages {
			html := fmt.Sprintf("<html><head><title>p%d</title></head><body><article><p>%s</p></article></body></html>", i+1, join(bodies[i+1]))
			items = append(items, Item{Doc: Document{ID: p.id, URL: p.url, Text: []byte(html), IsHTML: true}})
		}
		want := map[string]string{"p12": "partial p10", "p14": "unique", "p16": "partial p3"}
		for _, o := range run(t, testConfig(t, "web"), mem, items) {
			if w, ok := want[o.Event.ID]; ok {
				got := o.Event.Kind
				if o.Event.DuplicateOf != "" {
					got += " " + o.Event.DuplicateOf
				}
				if got != w {
					t.Errorf("%s: %s, want %s", o.Event.ID, got, w)
				}
			}
		}
	})
}

// On one large site (an encyclopedia, a library) pages copy passages from
// each other inside their own text; the site has no template, and what
// two of its pages share is a copy however many pages the site has: a
// passage in the middle of a page, at its start, or shared by two pages
// of a site's first few.
func TestSiteTemplatesLargeHost(t *testing.T) {
	words, join := wordSource(37)
	var pages []sitePage
	texts := make([][]string, 12)
	for i := range texts {
		texts[i] = words(300)
	}
	copyOf := func(dst, src []string, at, from, n int) []string {
		return slices.Concat(dst[:at], src[from:from+n], dst[at:])
	}
	texts[1] = copyOf(texts[1], texts[0], 150, 100, 70) // the host's second page
	texts[7] = copyOf(texts[7], texts[3], 140, 120, 80) // in the middle of both
	texts[9] = copyOf(texts[9], texts[2], 0, 110, 80)   // at the copy's start
	for i, tx := range texts {
		pages = append(pages, sitePage{fmt.Sprint("p", i), fmt.Sprintf("https://encyclopedia.example/wiki/%d", i), join(tx)})
	}
	want := map[string]string{"p1": "partial p0", "p7": "partial p3", "p9": "partial p2"}
	for i := range texts {
		if _, ok := want[fmt.Sprint("p", i)]; !ok {
			want[fmt.Sprint("p", i)] = "unique"
		}
	}
	checkKinds(t, pages, true, func(pl *Pipeline) index.Store { return memoryIndex(t, pl) }, want)
}

// A consent notice that several sites show is template wherever it
// appears once one of them has shown it on two pages: the first page of
// another site is not linked through it. The template records make it
// so; a store that keeps none links the page to the notice's first holder
// (one document per batch: a batch's own records are used within it).
// The notice sits above each site's footer: on b1 it does not reach the
// page's edge, so only the records tell (TestAcrossSites).
func TestTemplateRecords(t *testing.T) {
	words, join := wordSource(38)
	notice := words(60)
	headA, footA, headB, footB := words(40), words(40), words(40), words(40)
	pages := []sitePage{
		{"a1", "https://a.example/1", join(headA, words(150), notice, footA)},
		{"a2", "https://a.example/2", join(headA, words(150), notice, footA)},
		{"b1", "https://b.example/1", join(headB, words(150), notice, footB)},
	}
	t.Run("records", func(t *testing.T) {
		checkKinds(t, pages, true, func(pl *Pipeline) index.Store { return memoryIndex(t, pl) }, map[string]string{"a2": "unique", "b1": "unique"})
	})
	t.Run("no urls", func(t *testing.T) {
		checkKinds(t, pages, false, func(pl *Pipeline) index.Store { return memoryIndex(t, pl) }, map[string]string{"a2": "partial a1", "b1": "partial a1"})
	})
	t.Run("no records", func(t *testing.T) {
		cfg := testConfig(t, "web")
		cfg.Batch = 1
		checkKindsWith(t, cfg, pages, true, func(pl *Pipeline) index.Store { return noTemplates{memoryIndex(t, pl)} }, map[string]string{"a2": "unique", "b1": "partial a1"})
	})
}

// noTemplates is a store that keeps no template records: it records none
// and reads none.
type noTemplates struct{ index.Store }

func (noTemplates) Templates(_ context.Context, seqs []uint64) ([][]byte, error) {
	out := make([][]byte, len(seqs))
	for i := range out {
		out[i] = []byte{}
	}
	return out, nil
}

func (noTemplates) RecordTemplates(_ context.Context, seqs []uint64, _ [][]byte) ([]bool, error) {
	stored := make([]bool, len(seqs))
	for i := range stored {
		stored[i] = true
	}
	return stored, nil
}

// A match's share and match_share are shares of the main text: the site
// templates of both sides count on neither side. An article syndicated to
// another site, each page in 120 words of its site's template around 150
// of the article, is almost all of both pages' main text; a quoted
// paragraph is a small share of the quoting page's.
func TestMainTextShares(t *testing.T) {
	words, join := wordSource(39)
	headA, footA, headB, footB := words(60), words(60), words(60), words(60)
	a1, a2, b1, b3 := words(150), words(150), words(150), words(150)
	pages := []sitePage{
		{"a1", "https://a.example/1", join(headA, a1, footA)},
		{"a2", "https://a.example/2", join(headA, a2, footA)},
		{"b1", "https://b.example/1", join(headB, b1, footB)},
		{"b2", "https://b.example/2", join(headB, a1, footB)},
		{"b3", "https://b.example/3", join(headB, b3[:75], a2[40:100], b3[75:], footB)},
	}
	var items []Item
	for _, p := range pages {
		items = append(items, Item{Doc: Document{ID: p.id, URL: p.url, Text: p.text}})
	}
	got := map[string]Match{}
	for _, o := range run(t, testConfig(t, "web"), func(pl *Pipeline) index.Store { return memoryIndex(t, pl) }, items) {
		if o.Event != nil && len(o.Event.Matches) > 0 {
			got[o.Event.ID] = o.Event.Matches[0]
		}
	}
	if m := got["b2"]; m.ID != "a1" || m.Kind != "near" || m.Share < 0.9 || m.MatchShare < 0.9 {
		t.Errorf("b2: %+v, want near a1 with share and match_share ≥ 0.9", m)
	}
	if m := got["b3"]; m.ID != "a2" || m.Kind != "partial" || m.Share > 0.4 || m.Share < 0.2 {
		t.Errorf("b3: %+v, want partial a2 with a share of 0.2–0.4 (60 of 210 words)", m)
	}
}

// A consent notice at the top or the bottom of the first pages of
// several sites, before any site has shown a second page: the second
// page holding it is linked to the first (two pages sharing a block is
// what a copy is), the third is not (three different texts frame their
// own text with it), while an article syndicated whole to three sites,
// inside each site's name and navigation, is found on every copy, and the
// opening of an article copied at the very start of pages of two other
// sites is a copy still (the article's page holds it inside its text).
// Without urls the counts decide.
func TestAcrossSites(t *testing.T) {
	words, join := wordSource(40)
	notice, art, quoted := words(70), words(150), words(150)
	head := func() []string { return words(30) }
	pages := []sitePage{
		{"a1", "https://a.example/1", join(notice, head(), words(150), words(40))},
		{"b1", "https://b.example/1", join(head(), words(150), words(40), notice)},
		{"c1", "https://c.example/1", join(notice, head(), words(150), words(40))},
		{"d1", "https://d.example/1", join(head(), art, words(40))},
		{"e1", "https://e.example/1", join(head(), art, words(40))},
		{"f1", "https://f.example/1", join(head(), art, words(40))},
		{"g1", "https://g.example/1", join(words(50), quoted, words(150))},
		{"h1", "https://h.example/1", join(quoted[:80], words(200))},
		{"i1", "https://i.example/1", join(quoted[:80], words(200))},
	}
	mem := func(pl *Pipeline) index.Store { return memoryIndex(t, pl) }
	t.Run("urls", func(t *testing.T) {
		checkKinds(t, pages, true, mem, map[string]string{"b1": "partial a1", "c1": "unique", "e1": "near d1", "f1": "near d1", "h1": "partial g1", "i1": "partial g1"})
	})
	t.Run("no urls", func(t *testing.T) {
		checkKinds(t, pages, false, mem, map[string]string{"b1": "partial a1", "c1": "partial a1"})
	})
}

// A partial match by passages between two pages with a url is near when
// the words its passages cover, over the union of the two main texts,
// reach the profile's resemblance: a short article copied whole, the rest
// of each main text less than the article, is near; a quoted paragraph, or
// a page without a url, is not.
func TestMainNear(t *testing.T) {
	p := &Pipeline{cfg: Config{Verify: verify.WebProfile()}}
	site, other, none := &sketch.Features{Host: 1}, &sketch.Features{Host: 2}, &sketch.Features{}
	for _, tt := range []struct {
		name      string
		doc, cand *sketch.Features
		a, b      mainWords
		want      bool
	}{
		{"whole copy, the rest of the copy's main text a fifth", site, other, mainWords{covered: 150, total: 190}, mainWords{covered: 150, total: 150}, true},
		{"whole copy, both pages' other text as long as the article", site, other, mainWords{covered: 150, total: 300}, mainWords{covered: 150, total: 300}, false},
		{"at the resemblance: 150 of 300 words", site, other, mainWords{covered: 150, total: 300}, mainWords{covered: 150, total: 150}, true},
		{"a quoted paragraph", site, other, mainWords{covered: 60, total: 210}, mainWords{covered: 60, total: 150}, false},
		{"the document without a url", none, other, mainWords{covered: 150, total: 150}, mainWords{covered: 150, total: 150}, false},
		{"the candidate without a url", site, none, mainWords{covered: 150, total: 150}, mainWords{covered: 150, total: 150}, false},
		{"no main text", site, other, mainWords{}, mainWords{}, false},
	} {
		if got := p.mainNear(tt.doc, tt.cand, tt.a, tt.b); got != tt.want {
			t.Errorf("%s: mainNear %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A page that names no site is placed by its edges: pages whose first and
// last w tokens agree share a host; a page too short for two shingles has
// none.
func TestEdgeHost(t *testing.T) {
	toks := func(s string) []uint64 {
		var out []uint64
		for _, w := range strings.Fields(s) {
			out = append(out, sketch.Mix64(uint64(len(w))<<32|uint64(w[0])<<8|uint64(w[len(w)-1])))
		}
		return out
	}
	const w = 3
	site := "the granite chronicle news about town"
	foot := "contact us privacy terms"
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{site + " one article here " + foot, site + " another quite different story " + foot, true},
		{site + " one article here " + foot, "breaking chronicle news one article here " + foot, false},
		{site + " one article here " + foot, site + " one article here and more", false},
	} {
		ha, hb := edgeHost(toks(tc.a), w), edgeHost(toks(tc.b), w)
		if ha == 0 || hb == 0 || (ha == hb) != tc.same {
			t.Errorf("edgeHost(%q) = %#x, edgeHost(%q) = %#x: same %v, want %v", tc.a, ha, tc.b, hb, ha == hb, tc.same)
		}
	}
	for _, s := range []string{"", "five words are too few", "a b c d e"} {
		if h := edgeHost(toks(s), w); h != 0 {
			t.Errorf("edgeHost(%q) = %#x, want 0: shorter than two shingles", s, h)
		}
	}
}

// Plain text without a url, address or name is placed by its edges
// (edgeHost). Pages of one site share their site's name above their
// article and its footer below, and an author box and a promo beside
// it: once three distinct texts share the edges, that text is the site's
// template, and unrelated pages are not linked by it. A page republished
// on the site stays near its original, a copy of an article on another
// site (its own frame around it) is near the article, and a paragraph a
// page of a third site quotes stays a partial link. Two variants of one
// text that share their edges (a licence and an edited copy of it) are
// not a site: what they share stays evidence.
func TestEdgeSites(t *testing.T) {
	words, join := wordSource(77)
	header, footer, box, promo := words(40), words(40), words(50), words(40)
	bodies := make([][]string, 7)
	for i := 1; i < len(bodies); i++ {
		bodies[i] = words(150)
	}
	republished := slices.Clone(bodies[2])
	republished[30], republished[100] = "edited", "again"
	var pages []sitePage
	for i := 1; i < len(bodies); i++ {
		pages = append(pages, sitePage{fmt.Sprintf("p%d", i), "", join(header, bodies[i], box, promo, footer)})
	}
	other := words(200)
	pages = append(pages,
		sitePage{"r2", "", join(header, republished, box, promo, footer)},
		sitePage{"s5", "", join(other[:30], bodies[5], other[30:60])},
		sitePage{"q4", "", join(other[60:140], bodies[4][20:100], other[140:])},
	)
	mem := func(pl *Pipeline) index.Store { return memoryIndex(t, pl) }
	checkKinds(t, pages, false, mem, map[string]string{
		"p3": "unique", "p4": "unique", "p5": "unique", "p6": "unique",
		"r2": "near p2", "s5": "near p5", "q4": "partial p4",
	})

	t.Run("variants", func(t *testing.T) {
		head, tail, text := words(15), words(40), words(160)
		edited := slices.Concat(text[:70], words(80), text[150:])
		checkKinds(t, []sitePage{
			{"v1", "", join(head, text, tail)},
			{"v2", "", join(head, edited, tail)},
		}, false, mem, map[string]string{"v2": "partial v1"})
	})
}
