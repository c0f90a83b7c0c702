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
func PageURL(page []byte) string { return PageSite(page).URL }

// Site is what a page's head says of its site.
type Site struct {
	// URL is the address the page gives itself (PageURL).
	URL string
	// Name is its site's name (lower case, spaces collapsed): the
	// content of its <meta property="og:site_name">, else the last part
	// of its <title> after a separator (" | ", " – ", " — ", " - ",
	// " · "), when something comes before it and it is at most
	// maxSiteNameWords words; "" when the page names none.
	Name string
}

// maxSiteNameWords bounds a site name read from a title: "Article title |
// The Evening Ledger" names its site, "Part one - the voyage out and what
// came of it" does not.
const maxSiteNameWords = 5

// PageSite returns what page says of its site before its <body> (or its
// first maxHeadBytes): see Site.
func PageSite(page []byte) Site {
	z := html.NewTokenizer(bytes.NewReader(page[:min(len(page), maxHeadBytes)]))
	var canon, og, siteName, title string
	inTitle := false
	done := func() Site {
		s := Site{URL: canon, Name: normalName(siteName)}
		if s.URL == "" {
			s.URL = og
		}
		if s.Name == "" {
			s.Name = titleSite(title)
		}
		return s
	}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return done()
		case html.TextToken:
			if inTitle && title == "" {
				title = string(z.Text())
			}
		case html.EndTagToken:
			inTitle = false
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			inTitle = false
			switch atom.Lookup(name) {
			case atom.Body:
				return done()
			case atom.Title:
				inTitle = tt == html.StartTagToken
			case atom.Link:
				if !hasAttr {
					continue
				}
				if rel, href := attrPair(z, "rel", "href"); hasToken(rel, "canonical") && canon == "" {
					canon = absolute(href)
				}
			case atom.Meta:
				if !hasAttr {
					continue
				}
				prop, content := attrPair(z, "property", "content")
				switch {
				case strings.EqualFold(strings.TrimSpace(prop), "og:url") && og == "":
					og = absolute(content)
				case strings.EqualFold(strings.TrimSpace(prop), "og:site_name") && siteName == "":
					siteName = content
				}
			}
		}
	}
}

// titleSite returns the site name the end of a page's title gives ("")
// after its last separator, of whichever kind: what content-management
// systems put between a page's title and its site's name.
func titleSite(title string) string {
	title = strings.Join(strings.Fields(title), " ")
	at, width := -1, 0
	for _, sep := range [...]string{" | ", " – ", " — ", " · ", " - "} {
		if i := strings.LastIndex(title, sep); i > at {
			at, width = i, len(sep)
		}
	}
	if at <= 0 {
		return ""
	}
	name := normalName(title[at+width:])
	if len(strings.Fields(name)) > maxSiteNameWords {
		return ""
	}
	return name
}

// normalName is a site name in lower case with its spaces collapsed.
func normalName(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
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
