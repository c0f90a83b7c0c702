package explain

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/browsertest"
)

// hostile is a pair whose texts and names try to break out of the page:
// markup, a closing script tag, entities, quotes, CRLF line ends and
// non-ASCII text, with passages over all of it (one overlapping another).
func hostile() (*Report, string, string) {
	a := "Intro line.\r\n<script>alert('a')</script> & &amp; \"quoted\" </div></mark>\r\nCafé ☕ naïve — end of A."
	b := "B starts: <img src=x onerror=alert(1)> then <script>alert('a')</script> & &amp; \"quoted\" </div></mark>\nCafé ☕ naïve."
	ra, rb := []rune(a), []rune(b)
	idx := func(r []rune, sub string) int { return len([]rune(string(r)[:strings.Index(string(r), sub)])) }
	p1 := Passage{AOffset: idx(ra, "<script>"), ALength: len([]rune("<script>alert('a')</script> & &amp; \"quoted\" </div></mark>")),
		BOffset: idx(rb, "<script>"), BLength: len([]rune("<script>alert('a')</script> & &amp; \"quoted\" </div></mark>"))}
	p2 := Passage{AOffset: idx(ra, "Café"), ALength: len([]rune("Café ☕ naïve")), BOffset: idx(rb, "Café"), BLength: len([]rune("Café ☕ naïve"))}
	p3 := Passage{AOffset: idx(ra, "&amp;"), ALength: len([]rune("&amp; \"quoted\" </div></mark>\r\nCafé")), BOffset: idx(rb, "&amp;"), BLength: len([]rune("&amp; \"quoted\" </div></mark>\nCafé"))}
	yes := true
	r := &Report{
		Title:   `<b>title</b>`,
		A:       Document{Name: `a"><script>alert(1)</script>.txt`, Text: a, Note: "<i>note</i>"},
		B:       Document{Name: "b.html", Text: b},
		Verdict: "partial", Method: "passage", Profile: "web", Why: "<u>why</u>",
		Checks:   []Check{{Method: "jaccard", Kind: "near", Threshold: "≥ 0.50", Value: "0.1", Fired: false}, {Method: "passage", Kind: "partial", Threshold: "<script>", Value: "3", Fired: true, Decided: true}},
		Scores:   []Score{{Name: "jaccard", Value: "0.1000", Threshold: "≥ 0.50", Passes: &yes, Note: `"><script>alert(2)</script>`}},
		Passages: []Passage{p1, p2, p3},
	}
	return r, a, b
}

func TestRenderEscapesAndHighlights(t *testing.T) {
	r, a, b := hostile()
	var buf bytes.Buffer
	if err := Render(&buf, r); err != nil {
		t.Fatal(err)
	}
	s, err := browsertest.ReadShown(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if s.Scripts != 2 {
		t.Errorf("%d script elements, want 2 (data and the page's own): injected markup got through", s.Scripts)
	}
	if bytes.Contains(buf.Bytes(), []byte("<img")) || bytes.Contains(buf.Bytes(), []byte("<b>title")) {
		t.Error("unescaped markup in the page")
	}
	for _, e := range s.Check(a, b, shownPassages(r.Passages)) {
		t.Error(e)
	}
	if s.Verdict != "partial" || s.Method != "passage" || len(s.Passages) != 3 || Passage(s.Passages[2]) != r.Passages[2] {
		t.Errorf("verdict %q method %q data %v", s.Verdict, s.Method, s.Passages)
	}
	if bytes.Contains(buf.Bytes(), []byte("http://")) || bytes.Contains(buf.Bytes(), []byte("https://")) {
		t.Error("the page refers to the network; it must be self-contained")
	}
}

func TestRenderRejectsBadPassages(t *testing.T) {
	for _, tt := range []struct {
		name string
		p    Passage
	}{
		{"past A", Passage{AOffset: 5, ALength: 10, BOffset: 0, BLength: 1}},
		{"past B", Passage{AOffset: 0, ALength: 1, BOffset: 3, BLength: 10}},
		{"negative", Passage{AOffset: -1, ALength: 1, BOffset: 0, BLength: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{A: Document{Text: "héllo"}, B: Document{Text: "héllo"}, Passages: []Passage{tt.p}}
			if err := Render(&bytes.Buffer{}, r); !errors.Is(err, ErrBadPassage) {
				t.Errorf("err %v, want ErrBadPassage", err)
			}
		})
	}
}

func TestSegments(t *testing.T) {
	text := []rune("0123456789")
	got := segments(text, [][2]int{{2, 6}, {4, 8}, {9, 9}})
	var desc []string
	for _, s := range got {
		desc = append(desc, s.Text+":"+s.IDs())
	}
	if want := "01: 23:0 45:0 1 67:1 89:"; strings.Join(desc, " ") != want {
		t.Errorf("segments %q, want %q", strings.Join(desc, " "), want)
	}
}

// The page in a real browser: Chromium runs its script (which selects the
// first passage and scrolls both columns to it), the DOM it dumps holds
// both texts with every passage highlighted exactly at its offsets, and
// the screenshot shows the highlight colours.
func TestPageInChromium(t *testing.T) {
	r, a, b := hostile()
	dir := t.TempDir()
	page := filepath.Join(dir, "page.html")
	var buf bytes.Buffer
	if err := Render(&buf, r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	dom := browsertest.DumpDOM(t, page)
	s, err := browsertest.ReadShown(bytes.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	if s.Ready != "3" {
		t.Errorf("data-ready %q, want 3: the page's script did not finish", s.Ready)
	}
	if s.Scripts != 2 {
		t.Errorf("%d script elements after the script ran, want 2", s.Scripts)
	}
	for _, e := range s.Check(a, b, shownPassages(r.Passages)) {
		t.Error(e)
	}
	if !bytes.Contains(dom, []byte(`class="active"`)) {
		t.Error("no passage selected after load")
	}
	img := browsertest.Screenshot(t, page, filepath.Join(dir, "page.png"), 1280, 720)
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 720 {
		t.Errorf("screenshot %v", b)
	}
	if n := browsertest.ColouredPixels(img); n < 200 {
		t.Errorf("%d highlight-coloured pixels in the screenshot, want ≥ 200", n)
	}
}

// shownPassages converts passages for [browsertest.Shown.Check].
func shownPassages(ps []Passage) []browsertest.Passage {
	out := make([]browsertest.Passage, len(ps))
	for i, p := range ps {
		out[i] = browsertest.Passage(p)
	}
	return out
}
