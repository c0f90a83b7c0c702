package pipeline

import (
	"os"
	"strings"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/dataset"
)

// render sets words in lines of at most width characters, indented by
// indent spaces. With hyphenate, a word of six or more characters that
// would overflow a line is broken as groff breaks it, with U+2010 HYPHEN
// at the line end (after at least two lower-case letters, before a
// lower-case letter and at least two characters).
func render(words []string, width, indent int, hyphenate bool) string {
	var b strings.Builder
	pad := strings.Repeat(" ", indent)
	b.WriteString(pad)
	col := indent
	for _, w := range words {
		if col > indent && col+1+len(w) > width {
			room := width - col - 2 // a space and the hyphen
			if cut := min(room, len(w)-2); hyphenate && len(w) >= 6 && cut >= 2 && isLetters(w[:cut+1]) {
				b.WriteString(" " + w[:cut] + "\u2010\n" + pad)
				w = w[cut:]
			} else {
				b.WriteString("\n" + pad)
			}
			col = indent
		} else if col > indent {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += len(w)
	}
	return b.String()
}

func isLetters(w string) bool {
	for _, c := range []byte(w) {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// A text rendered at 60 columns with hyphenation (U+2010 at line ends, as
// man renders) and at 100 without: with sketch.join_hyphens (the default)
// the second is an exact copy of the first; without it, it is not. The
// option is part of the namespace's parameters, and off it leaves them as
// a release without it wrote them.
func TestJoinHyphens(t *testing.T) {
	b, err := os.ReadFile(dataset.Dir(t, "gutenberg-editions") + "/texts/pg11.txt")
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields(string(b))
	words = words[len(words)/3:][:1000]
	narrow, wide := render(words, 60, 7, true), render(words, 100, 7, false)
	if breaks := strings.Count(narrow, "\u2010\n"); breaks < 10 {
		t.Fatalf("only %d words hyphenated at line ends", breaks)
	}
	items := []Item{{Doc: Document{ID: "narrow", Text: []byte(narrow)}}, {Doc: Document{ID: "wide", Text: []byte(wide)}}}
	extra := map[string]string{}
	for _, join := range []string{"true", "false"} {
		cfg := testConfig(t, "web", "sketch.join_hyphens", join)
		outs := run(t, cfg, func(p *Pipeline) index.Store {
			extra[join] = p.IndexParams().Extra
			mem, err := index.NewMemory(index.MemoryConfig{Params: p.IndexParams()})
			if err != nil {
				t.Fatal(err)
			}
			return mem
		}, items)
		ev := outs[1].Event
		if ev == nil {
			t.Fatalf("join_hyphens %s: no event for the wide rendering: %+v", join, outs[1])
		}
		if exact := ev.Kind == KindExact && ev.DuplicateOf == "narrow"; exact != (join == "true") {
			t.Errorf("join_hyphens %s: the wide rendering is %s of %q", join, ev.Kind, ev.DuplicateOf)
		}
	}
	if on, off := extra["true"], extra["false"]; on != off+" hyphens=join" || strings.Contains(off, "hyphen") {
		t.Errorf("namespace parameters: on %q, off %q", on, off)
	}
}
