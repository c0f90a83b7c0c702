package extract

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
)

// Issue 24, point 4: MainText parsed the whole DOM before readability's
// element limit applied, so 16 MiB of <p>x</p> allocated 791 MB. A page
// over the limit now goes straight to the streaming visible-text path:
// allocations stay within a small multiple of the page.
func TestMainTextManyElementsBounded(t *testing.T) {
	page := bytes.Repeat([]byte("<p>x</p>"), 2<<20) // 16 MiB, 2M elements
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	text := MainText(page, "")
	runtime.ReadMemStats(&after)
	if n := bytes.Count(text, []byte("x")); n != 2<<20 {
		t.Errorf("%d x's in the text, want %d", n, 2<<20)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*uint64(len(page)) {
		t.Errorf("MainText allocated %d MiB for a %d MiB page, want at most 4x the page", alloc>>20, len(page)>>20)
	}
}

// A page within the element limit still goes through readability.
func TestMainTextArticle(t *testing.T) {
	page := []byte(`<html><body><nav>Home | About | Contact</nav><article><h1>Title</h1>` +
		string(bytes.Repeat([]byte("<p>The quick brown fox jumps over the lazy dog, again and again, in a long paragraph of text. </p>"), 20)) +
		`</article><footer>Copyright footer text</footer></body></html>`)
	text := MainText(page, "")
	if !bytes.Contains(text, []byte("quick brown fox")) || bytes.Contains(text, []byte("Copyright footer")) {
		t.Errorf("main text %q: want the article without the footer", text)
	}
}

// A page within the element limit but over MaxArticleBytes (readability
// would build its whole DOM) takes the visible text, in memory within a
// small multiple of the page.
func TestMainTextLargePageBounded(t *testing.T) {
	para := "<p>" + string(bytes.Repeat([]byte("The quick brown fox jumps over the lazy dog, again and again. "), 80)) + "</p>"
	var b bytes.Buffer
	b.WriteString("<html><body><nav>Home | About</nav><article>")
	for b.Len() <= MaxArticleBytes {
		b.WriteString(para)
	}
	b.WriteString("</article><footer>Copyright footer text</footer></body></html>")
	page := b.Bytes()
	if !fewerElements(page, maxElems) {
		t.Fatal("the page is over the element limit: the test would not reach the byte limit")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	text := MainText(page, "")
	runtime.ReadMemStats(&after)
	if !bytes.Contains(text, []byte("Copyright footer")) {
		t.Error("the text of a page over MaxArticleBytes is not all its visible text")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*uint64(len(page)) {
		t.Errorf("MainText allocated %d MiB for a %d MiB page, want at most 4x the page", alloc>>20, len(page)>>20)
	}
}

// A short article (60 words) inside a navigation bar, a cookie banner and
// a footer is extracted alone: readability's default threshold (500
// characters) made it fall back to the whole body.
func TestMainTextShortArticle(t *testing.T) {
	page := []byte(`<html><body><nav><a href="/">Fieldnotes</a><ul><li><a href="/world">World</a></li><li><a href="/science">Science</a></li></ul></nav>` +
		`<div class="cookie-banner"><p>We use cookies to make this site work and, with your consent, to measure how it is used and to improve it. You can accept all cookies, reject the optional ones, or choose which kinds to allow in the cookie settings. Your choice is stored for twelve months and you can change it at any time from the link in the footer.</p><button>Accept</button><button>Reject</button></div>` +
		`<article><h1>A walk by the river</h1><p>The morning was grey and still when we set out along the towpath, past the lock keeper's cottage and the old mill.</p>` +
		`<p>By noon the fog had lifted, and the heron that had watched us from the far bank rose slowly and flew upstream towards the weir and the bridge.</p></article>` +
		`<footer><p>© 2026 Fieldnotes Daily. All rights reserved. Fieldnotes Daily is an independent publication. About us · Contact · Terms of service · Privacy policy · Cookie settings · Accessibility</p></footer></body></html>`)
	text := string(MainText(page, "https://fieldnotes.example/1"))
	for _, want := range []string{"towpath", "heron"} {
		if !strings.Contains(text, want) {
			t.Errorf("main text %q: the article's %q is missing", text, want)
		}
	}
	for _, chrome := range []string{"Science", "cookies", "All rights reserved"} {
		if strings.Contains(text, chrome) {
			t.Errorf("main text %q: keeps the chrome's %q", text, chrome)
		}
	}
}
