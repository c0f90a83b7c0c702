package sketch

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// TestNormalizedNFKC checks the shortcut that lets tokenizeUnicode skip
// norm's QuickSpan: every BMP code point it calls inert stays as it is
// under NFKC between any two inert neighbours (drawn at random from the
// inert ones, ASCII included), so a text it accepts is NFKC; and the
// typographic quotes and dashes of English text are accepted.
func TestNormalizedNFKC(t *testing.T) {
	n := NewNormalizer(DefaultNormalization())
	var inert []rune
	for r := rune(0x80); r < 1<<16; r++ {
		if utf8.ValidRune(r) && n.inertRune(r) {
			inert = append(inert, r)
		}
	}
	if len(inert) < 1000 {
		t.Fatalf("%d inert code points: the check accepts almost nothing", len(inert))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() rune {
		if rng.IntN(3) == 0 {
			return rune('a' + rng.IntN(26))
		}
		return inert[rng.IntN(len(inert))]
	}
	for _, r := range inert {
		for range 4 {
			s := string([]rune{pick(), r, pick()})
			if !n.normalizedNFKC([]byte(s)) {
				t.Fatalf("%q: not accepted though every code point is inert", s)
			}
			// QuickSpan agrees, so the tokens are exactly those of the
			// path that asks it.
			if got := norm.NFKC.QuickSpanString(s); got != len(s) {
				t.Fatalf("%q (U+%04X inert): QuickSpan %d of %d bytes", s, r, got, len(s))
			}
			if got := norm.NFKC.String(s); got != s {
				t.Fatalf("%q (U+%04X inert) changes under NFKC: %q", s, r, got)
			}
		}
	}
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"He said, \u201cdon\u2019t\u201d \u2014 twice \u2013 at the caf\u00e9.", true},
		{"plain ASCII", true},
		{"e\u0301", false},      // combining acute
		{"\ufb01nd", false},     // ligature fi
		{"a\u00a0b", false},     // no-break space: NFKC maps it to a space
		{"\u1100\u1161", false}, // Hangul L + V compose
		{"\U0001d400", false},   // outside the BMP: left to QuickSpan
		{"\uff21BC", false},     // fullwidth A
	} {
		if got := n.normalizedNFKC([]byte(tc.text)); got != tc.want {
			t.Errorf("normalizedNFKC(%q) = %v, want %v", tc.text, got, tc.want)
		}
		if tc.want && norm.NFKC.String(tc.text) != tc.text {
			t.Errorf("%q accepted but not NFKC", tc.text)
		}
	}
}
