package extract

import (
	"bytes"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxHeadBytes bounds how much of a page PageURL reads for its address:
// a page's head comes first and is a few kilobytes (scripts and styles
// inline run to tens); a page whose head runs past it names no address.
const maxHeadBytes = 256 << 10

// PageURL returns the address a page gives itself: the href of its
// <link rel="canonical">, else the content of its <meta
// property="og:url">, when it is an absolute http or https URL; "" when
// the page names none before its <body> (or its first maxHeadBytes).
// Content-management systems write both; a crawler that sends a page
// without its url still sends them, and they name the page's site. A
// syndicated copy often names its original's address as canonical: it
// is then taken as a page of the original's site, which it is a copy of.
func PageURL(page []byte) string {
	z := html.NewTokenizer(bytes.NewReader(page[:min(len(page), maxHeadBytes)]))
	var og string
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return og
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			switch atom.Lookup(name) {
			case atom.Body:
				return og
			case atom.Link:
				if !hasAttr {
					continue
				}
				if rel, href := attrPair(z, "rel", "href"); hasToken(rel, "canonical") {
					if u := absolute(href); u != "" {
						return u
					}
				}
			case atom.Meta:
				if !hasAttr || og != "" {
					continue
				}
				if prop, content := attrPair(z, "property", "content"); strings.EqualFold(strings.TrimSpace(prop), "og:url") {
					og = absolute(content)
				}
			}
		}
	}
}

// attrPair returns the values of the current tag's attributes named a
// and b ("" when absent), reading all its attributes.
func attrPair(z *html.Tokenizer, a, b string) (va, vb string) {
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		switch string(k) {
		case a:
			va = string(v)
		case b:
			vb = string(v)
		}
	}
	return va, vb
}

// hasToken reports whether the space-separated list rel holds tok, in
// any case (rel="Canonical", rel="alternate canonical").
func hasToken(rel, tok string) bool {
	for _, f := range strings.Fields(rel) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}

// absolute returns s when it is an absolute http or https URL with a
// host, else "".
func absolute(s string) string {
	s = strings.TrimSpace(s)
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return ""
	}
	return s
}
