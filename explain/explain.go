package explain

import (
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"html"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ErrBadPassage marks a passage outside its document's text.
var ErrBadPassage = errors.New("explain: passage out of range")

// Document is one side of the comparison.
type Document struct {
	// Name titles the column: a file name, URL or id.
	Name string
	// Text is the text the scores and offsets refer to (for HTML input,
	// the text extracted from it).
	Text string
	// Note describes it, e.g. "10,201 tokens, 9,877 shingles".
	Note string
}

// Passage is one copied range: code points [AOffset, AOffset+ALength) of
// A's text against [BOffset, BOffset+BLength) of B's.
type Passage struct {
	AOffset int `json:"a_offset"`
	ALength int `json:"a_length"`
	BOffset int `json:"b_offset"`
	BLength int `json:"b_length"`
}

// Score is one measured similarity.
type Score struct {
	Name  string
	Value string
	// Threshold is the condition under which it counts, e.g. "≥ 0.50",
	// or "" when no check of the profile reads it.
	Threshold string
	// Passes reports whether Value meets Threshold (nil: no threshold, or
	// not computed).
	Passes *bool
	Note   string
}

// Check is one step of the verification cascade as it ran on the pair.
type Check struct {
	Method    string
	Kind      string // the verdict the check gives when it fires
	Threshold string
	Value     string // the score it read; "not computed" when it did not run
	Fired     bool
	Decided   bool // the check that decided the verdict
}

// Report is everything the page shows.
type Report struct {
	Title   string
	A, B    Document
	Verdict string // exact, near, partial or distinct
	Method  string // the check that decided ("" for distinct with none)
	// Why explains the verdict in a sentence.
	Why      string
	Profile  string
	Checks   []Check
	Scores   []Score
	Passages []Passage
}

// segment is a run of text covered by the same passages.
type segment struct {
	Text     string
	Passages []int
}

// Mark is rendered for a highlighted segment.
func (s segment) Mark() bool { return len(s.Passages) > 0 }

// IDs lists the segment's passages for data-p.
func (s segment) IDs() string {
	ids := make([]string, len(s.Passages))
	for i, p := range s.Passages {
		ids[i] = strconv.Itoa(p)
	}
	return strings.Join(ids, " ")
}

// HTML is the segment's text escaped for an element's content. A carriage
// return is written as a character reference: a literal one would be
// folded into the following line feed by the HTML parser, and the column
// would no longer hold the text the offsets count in.
func (s segment) HTML() template.HTML {
	return template.HTML(strings.ReplaceAll(html.EscapeString(s.Text), "\r", "&#13;"))
}

// First is the passage whose colour the segment takes.
func (s segment) First() int { return s.Passages[0] }

type side struct {
	Key      string // "a" or "b"
	Doc      Document
	Segments []segment
	Chars    int
}

type passageRow struct {
	Passage
	Index   int
	Excerpt string
}

type page struct {
	*Report
	Sides [2]side
	Rows  []passageRow
}

//go:embed page.html.tmpl
var pageTemplate string

var tmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"hue":   hue,
	"add1":  func(i int) int { return i + 1 },
	"comma": comma,
	"upto":  func(off, n int) int { return off + n },
	"deref": func(b *bool) bool { return *b },
}).Parse(pageTemplate))

// hue spreads passage colours around the wheel by the golden angle, so
// neighbouring passages differ clearly however many there are.
func hue(i int) int { return int(float64(i)*137.508) % 360 }

func comma(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Render writes the page for r to w. It fails with [ErrBadPassage] when a
// passage lies outside its text.
func Render(w io.Writer, r *Report) error {
	a, b := []rune(r.A.Text), []rune(r.B.Text)
	ra := make([][2]int, len(r.Passages))
	rb := make([][2]int, len(r.Passages))
	rows := make([]passageRow, len(r.Passages))
	for i, p := range r.Passages {
		if p.AOffset < 0 || p.ALength < 0 || p.AOffset+p.ALength > len(a) || p.BOffset < 0 || p.BLength < 0 || p.BOffset+p.BLength > len(b) {
			return fmt.Errorf("%w: passage %d (A %d+%d of %d, B %d+%d of %d)", ErrBadPassage, i+1, p.AOffset, p.ALength, len(a), p.BOffset, p.BLength, len(b))
		}
		ra[i] = [2]int{p.AOffset, p.AOffset + p.ALength}
		rb[i] = [2]int{p.BOffset, p.BOffset + p.BLength}
		rows[i] = passageRow{Passage: p, Index: i, Excerpt: excerpt(b[p.BOffset : p.BOffset+p.BLength])}
	}
	pg := page{
		Report: r,
		Sides: [2]side{
			{Key: "a", Doc: r.A, Segments: segments(a, ra), Chars: len(a)},
			{Key: "b", Doc: r.B, Segments: segments(b, rb), Chars: len(b)},
		},
		Rows: rows,
	}
	if err := tmpl.Execute(w, pg); err != nil {
		return fmt.Errorf("explain: render: %w", err)
	}
	return nil
}

// excerpt is the start of a passage for the passage list.
func excerpt(r []rune) string {
	s := strings.Join(strings.Fields(string(r[:min(len(r), 120)])), " ")
	if len(r) > 120 {
		s += "…"
	}
	return s
}

// segments cuts text at every passage boundary; each piece lists the
// passages covering it, so overlapping passages stay visible.
func segments(text []rune, ranges [][2]int) []segment {
	cuts := []int{0, len(text)}
	for _, r := range ranges {
		cuts = append(cuts, r[0], r[1])
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	var out []segment
	for i := 0; i+1 < len(cuts); i++ {
		x, y := cuts[i], cuts[i+1]
		var ps []int
		for j, r := range ranges {
			if r[0] <= x && y <= r[1] && r[0] < r[1] {
				ps = append(ps, j)
			}
		}
		slices.SortFunc(ps, func(p, q int) int { return cmp.Compare(p, q) })
		if n := len(out); n > 0 && !out[n-1].Mark() && len(ps) == 0 {
			out[n-1].Text += string(text[x:y])
			continue
		}
		out = append(out, segment{Text: string(text[x:y]), Passages: ps})
	}
	return out
}
