package extract

import (
	"bytes"
	"runtime"
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
