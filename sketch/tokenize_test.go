package sketch

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/neardup/neardup/internal/dataset"
)

func words(n *Normalizer, text string) []string {
	var tok Tokens
	n.Tokenize([]byte(text), &tok)
	out := make([]string, tok.Len())
	for i := range out {
		out[i] = string(tok.Word(i))
	}
	return out
}

func TestTokenize(t *testing.T) {
	def := NewNormalizer(DefaultNormalization())
	tests := []struct {
		name string
		n    *Normalizer
		in   string
		want string // tokens joined by |
	}{
		{"ascii", def, "The quick, brown fox!", "the|quick|brown|fox"},
		{"apostrophe joins", def, "Don't stop; it's 'quoted'", "dont|stop|its|quoted"},
		{"curly apostrophe folds", def, "Don\u2019t stop", "dont|stop"},
		{"curly apostrophe unfolded splits", NewNormalizer(Normalization{}), "Don\u2019t stop", "don|t|stop"},
		{"dashes separate", def, "well\u2014known 1990\u20131995", "well|known|1990|1995"},
		{"crlf", def, "line one\r\nline two\r\n", "line|one|line|two"},
		{"nfkc ligature and width", def, "\ufb01ne \uff21\uff22", "fine|ab"},
		{"latin case fold", def, "CAFÉ Straße ΣΟΦΟΣ", "café|strasse|σοφοσ"},
		{"strip accents", NewNormalizer(Normalization{FoldQuotes: true, StripAccents: true}), "Café naïve Ångström", "cafe|naive|angstrom"},
		{"drop digits", NewNormalizer(Normalization{DropDigits: true}), "page 12 of x9y", "page|of|x|y"},
		{"keep punct", NewNormalizer(Normalization{KeepPunct: true}), "a, b.", "a|,|b|."},
		{"cjk chars are tokens", def, "東京タワー is tall", "東|京|タ|ワ|ー|is|tall"},
		{"empty", def, "", ""},
		{"only punctuation", def, "... !!! ---", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(words(tt.n, tt.in), "|")
			if got != tt.want {
				t.Errorf("tokens(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// The ASCII fast path and the Unicode path must agree on ASCII text: force
// the Unicode path with a trailing non-ASCII separator.
func TestASCIIPathMatchesUnicodePath(t *testing.T) {
	n := NewNormalizer(DefaultNormalization())
	texts := []string{
		"Hello, World! It's 2024 and we're testing a-b c_d e'f 'g' h'",
		"MiXeD CaSe\twith\ttabs\nand\r\nlines 42x x42",
	}
	for _, s := range texts {
		var a, u Tokens
		n.Tokenize([]byte(s), &a)
		n.Tokenize([]byte(s+" \u00a0"), &u)
		if a.Len() != u.Len() {
			t.Fatalf("%q: ascii %d tokens, unicode %d", s, a.Len(), u.Len())
		}
		for i := range a.Hash {
			if a.Hash[i] != u.Hash[i] || string(a.Word(i)) != string(u.Word(i)) || a.Off[i] != u.Off[i] || a.HasDigit[i] != u.HasDigit[i] {
				t.Errorf("%q token %d: ascii %q/%x, unicode %q/%x", s, i, a.Word(i), a.Hash[i], u.Word(i), u.Hash[i])
			}
			if a.Hash[i] != TokenHash(a.Word(i)) {
				t.Errorf("token %q: hash %x, TokenHash %x", a.Word(i), a.Hash[i], TokenHash(a.Word(i)))
			}
		}
	}
}

// Windows-1252 bytes (as in the Clough & Stevenson corpus) are decoded, not
// dropped: 0x92 is a right single quote, 0xe9 is é.
func TestWindows1252(t *testing.T) {
	n := NewNormalizer(DefaultNormalization())
	got := strings.Join(words(n, "It\x92s a caf\xe9\r\n"), "|")
	if got != "its|a|café" {
		t.Errorf("got %q", got)
	}
}

func TestTokenizeClough(t *testing.T) {
	dir := dataset.Dir(t, "clough-plagiarised-short-answers")
	entries, err := os.ReadDir(dir + "/texts")
	if err != nil {
		t.Fatal(err)
	}
	n := NewNormalizer(DefaultNormalization())
	invalid := 0
	for _, e := range entries {
		b, err := os.ReadFile(dir + "/texts/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(b) {
			invalid++
		}
		var tok Tokens
		n.Tokenize(b, &tok)
		if tok.Len() < 20 {
			t.Errorf("%s: only %d tokens", e.Name(), tok.Len())
		}
		if !utf8.Valid(tok.Text) {
			t.Errorf("%s: normalized text is not UTF-8", e.Name())
		}
	}
	if invalid == 0 {
		t.Log("no Windows-1252 file found in the corpus")
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "hello world", "Don\u2019t", "\xff\xfe\x00", "東京", "a'b'c'", "\u0301\u0301", "ß'ß", "Hello World's 42nd TEST, don't-stop 'quoted' x'", "A1b2 C3'd4 ''e"} {
		f.Add([]byte(s))
	}
	opts := []*Normalizer{
		NewNormalizer(DefaultNormalization()),
		NewNormalizer(Normalization{StripAccents: true, DropDigits: true, KeepPunct: true}),
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, n := range opts {
			var tok Tokens
			n.Tokenize(b, &tok)
			if !utf8.Valid(tok.Text) {
				t.Fatalf("normalized text not UTF-8 for %q", b)
			}
			for i := range tok.Len() {
				w := tok.Word(i)
				if len(w) == 0 {
					t.Fatalf("empty token %d for %q", i, b)
				}
				if tok.Hash[i] != TokenHash(w) {
					t.Fatalf("hash of %q mismatches", w)
				}
			}
			// The code points the tokenizer counted are those counting
			// the text again gives.
			fs, fe := n.CodePoints(b, &tok, nil, nil)
			slow := tok
			slow.runes = false
			ss, se := n.CodePoints(b, &slow, nil, nil)
			if !slices.Equal(fs, ss) || !slices.Equal(fe, se) {
				t.Fatalf("code points counted while tokenizing %v %v, counted again %v %v, for %q", fs, fe, ss, se, b)
			}
			// On ASCII text the Unicode path gives what the ASCII
			// fast path gives.
			if isASCII(b) {
				var u Tokens
				n.tokenizeUnicode(b, &u)
				if !slices.Equal(u.Hash, tok.Hash) || !slices.Equal(u.Off, tok.Off) || !slices.Equal(u.SrcEnd, tok.SrcEnd) ||
					!slices.Equal(u.End, tok.End) || !slices.Equal(u.HasDigit, tok.HasDigit) || !bytes.Equal(u.Text, tok.Text) {
					t.Fatalf("the Unicode path differs from the ASCII one for %q", b)
				}
			}
			// Normalizing normalized text is the identity on tokens.
			var again Tokens
			n.Tokenize(joined(&tok), &again)
			if again.Len() != tok.Len() {
				t.Fatalf("re-tokenizing changed count %d → %d for %q", tok.Len(), again.Len(), b)
			}
		}
	})
}

func joined(t *Tokens) []byte {
	var b []byte
	for i := range t.Len() {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, t.Word(i)...)
	}
	return b
}
