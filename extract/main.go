package extract

import (
	"bytes"
	"net/url"

	readability "codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html"
)

// maxElems bounds the DOM size readability scores, so a pathological page
// costs bounded time and memory (about 750 bytes an element: 50,000
// <p>x</p> peaked 38 MB over a tiny page, 199,000 125 MB); larger pages
// fall back to all visible text. Web pages have a few thousand elements.
const maxElems = 50_000

// MaxArticleBytes bounds the pages whose article readability extracts:
// its DOM holds the whole page (16 MiB of text in 195,000 paragraphs
// peaked at 271 MB and took 3.3 s of CPU), so larger pages take the
// visible text, whose memory is that of the text (docs/operations.md,
// "Memory budget"). Web pages are far smaller.
const MaxArticleBytes = 4 << 20

// minArticleChars is the fewest characters readability takes for an
// article (its CharThresholds, 500 by default). Under it readability
// tries again with its filters off and ends with the whole body, so a
// short article (under about 80 words) inside a navigation bar, a cookie
// banner and a footer kept all three. At 200, pages of 60-word articles
// in such a template give the article alone, as they do at 100; every
// longer page measured gives the same text (docs/boilerplate.md,
// "Main-text extraction").
const minArticleChars = 200

// MainText returns the main text of an HTML page: the article content that
// Mozilla's Readability algorithm finds (through the maintained Go port
// codeberg.org/readeck/go-readability), without navigation, banners,
// sharing widgets and footers. Those differ between copies of the same
// article on different sites, so dropping them is what lets syndicated
// pages compare as near duplicates. When no article is found (short pages,
// link lists, parse failures) it falls back to [HTMLText], all visible
// text, as it does for pages over [MaxArticleBytes]. pageURL may be empty.
func MainText(page []byte, pageURL string) []byte {
	// Readability builds the whole DOM before its element limit applies
	// (16 MiB of <p>x</p> took 791 MB and 10 s): count the elements
	// first with the streaming tokenizer, whose memory does not grow with
	// the page, and take the visible text of larger pages.
	if len(page) > MaxArticleBytes || !fewerElements(page, maxElems) {
		return HTMLText(page)
	}
	var u *url.URL
	if pageURL != "" {
		u, _ = url.Parse(pageURL)
	}
	p := readability.NewParser()
	p.MaxElemsToParse = maxElems
	p.DisableJSONLD = true
	p.CharThresholds = minArticleChars
	art, err := p.Parse(bytes.NewReader(page), u)
	if err == nil && art.Node != nil {
		var buf bytes.Buffer
		if art.RenderText(&buf) == nil && len(bytes.TrimSpace(buf.Bytes())) > 0 {
			return buf.Bytes()
		}
	}
	return HTMLText(page)
}

// fewerElements reports whether page has at most n start tags.
func fewerElements(page []byte, n int) bool {
	z := html.NewTokenizer(bytes.NewReader(page))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return true
		case html.StartTagToken, html.SelfClosingTagToken:
			if n--; n < 0 {
				return false
			}
		}
	}
}
