package browsertest

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/net/html"
)

// Passage is one passage's offsets as explain's page embeds them
// (explain.Passage; a struct of the same fields converts to it).
type Passage struct {
	AOffset int `json:"a_offset"`
	ALength int `json:"a_length"`
	BOffset int `json:"b_offset"`
	BLength int `json:"b_length"`
}

// Shown is what a side-by-side page of explain (neardup compare --html)
// holds, read back from its DOM (for example [DumpDOM], after the page's
// script ran): the texts of both columns and, for each passage, the
// highlighted text in each.
type Shown struct {
	Verdict, Method string
	// Texts are the full texts of columns A and B.
	Texts [2]string
	// Highlighted maps a passage index to its highlighted text in column
	// A ([0]) and B ([1]), its marks concatenated in document order.
	Highlighted [2]map[int]string
	// Passages are the offsets the page embeds (its JSON data block).
	Passages []Passage
	// Ready is the body's data-ready attribute: the passage count, set by
	// the page's script when it finished.
	Ready string
	// Scripts counts script elements (the page has exactly two).
	Scripts int
}

// ReadShown parses a rendered page.
func ReadShown(r io.Reader) (*Shown, error) {
	doc, err := html.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("browsertest: parse page: %w", err)
	}
	s := &Shown{Highlighted: [2]map[int]string{{}, {}}}
	var walk func(n *html.Node, side int, marks []int)
	walk = func(n *html.Node, side int, marks []int) {
		if n.Type == html.ElementNode {
			switch {
			case n.Data == "body":
				s.Ready = attr(n, "data-ready")
			case n.Data == "script":
				s.Scripts++
				if attr(n, "id") == "neardup-passages" && n.FirstChild != nil {
					if err := json.Unmarshal([]byte(n.FirstChild.Data), &s.Passages); err != nil {
						s.Passages = nil
					}
				}
			case attr(n, "id") == "text-a":
				side = 0
			case attr(n, "id") == "text-b":
				side = 1
			case attr(n, "id") == "verdict":
				s.Verdict = textOf(n)
			case attr(n, "id") == "method":
				s.Method = textOf(n)
			case n.Data == "mark" && side >= 0:
				marks = nil
				for _, f := range strings.Fields(attr(n, "data-p")) {
					if i, err := strconv.Atoi(f); err == nil {
						marks = append(marks, i)
					}
				}
			}
		}
		if n.Type == html.TextNode && side >= 0 {
			s.Texts[side] += n.Data
			for _, i := range marks {
				s.Highlighted[side][i] += n.Data
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, side, marks)
		}
	}
	walk(doc, -1, nil)
	return s, nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	var sb strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			sb.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.TrimSpace(sb.String())
}

// Check compares what a page shows with the texts and passages it was
// rendered from: both columns hold exactly the texts, and every passage's
// highlight in each column is exactly its text at its offsets. It returns
// one error per difference.
func (s *Shown) Check(a, b string, passages []Passage) []error {
	var errs []error
	ra, rb := []rune(a), []rune(b)
	a, b = newlines(a), newlines(b)
	if newlines(s.Texts[0]) != a {
		errs = append(errs, fmt.Errorf("column A holds %d code points, the text %d", len([]rune(s.Texts[0])), len(ra)))
	}
	if newlines(s.Texts[1]) != b {
		errs = append(errs, fmt.Errorf("column B holds %d code points, the text %d", len([]rune(s.Texts[1])), len(rb)))
	}
	for i, p := range passages {
		want := [2]string{newlines(string(ra[p.AOffset : p.AOffset+p.ALength])), newlines(string(rb[p.BOffset : p.BOffset+p.BLength]))}
		for side := range 2 {
			if got := newlines(s.Highlighted[side][i]); got != want[side] {
				errs = append(errs, fmt.Errorf("passage %d in column %c: highlighted %q, text at its offsets %q", i+1, 'A'+side, clip(got), clip(want[side])))
			}
		}
	}
	for side := range 2 {
		for i := range s.Highlighted[side] {
			if i < 0 || i >= len(passages) {
				errs = append(errs, fmt.Errorf("column %c highlights passage %d of %d", 'A'+side, i+1, len(passages)))
			}
		}
	}
	return errs
}

// newlines folds CR LF and CR into LF, as parsing a serialized DOM does
// (the page keeps carriage returns as references, a dump writes them raw).
func newlines(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

func clip(s string) string {
	r := []rune(s)
	if len(r) > 80 {
		return string(r[:40]) + "…" + string(r[len(r)-40:])
	}
	return s
}
