package sketch

import (
	"bytes"
	"fmt"
	"math/rand/v2"
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
		// Words hyphenated at a line end (Normalization.JoinHyphens),
		// on every path: ASCII, quoted ASCII (U+2010 and typographic
		// quotes only), Unicode, Windows-1252.
		{"U+2010, line break and indent", def, "the dat\u2010\n       aplex service", "the|dataplex|service"},
		{"U+2010 in an option name", def, "   --fil\u2010\n       ter=EXPR", "filter|expr"},
		{"U+2010 with curly quotes", def, "\u201cdat\u2010\n  aplex\u201d", "dataplex"},
		{"ASCII hyphen at a line end stays a separator", def, "an exam-\nple of non-\n  exclusive", "an|exam|ple|of|non|exclusive"},
		{"soft hyphen at a line end", def, "hy\u00ad\n  phen", "hyphen"},
		{"soft hyphens inside a word dropped", def, "hy\u00adphen\u00adation \u00adx", "hyphenation|x"},
		{"soft hyphen in Windows-1252", def, "hy\xad\nphen caf\xe9", "hyphen|café"},
		{"CR LF", def, "exam\u2010\r\n  ple", "example"},
		{"CR", def, "exam\u2010\rple", "example"},
		{"line separator U+2028", def, "exam\u2010\u2028ple", "example"},
		{"NEL U+0085", def, "exam\u00ad\u0085ple", "example"},
		{"blanks before the break", def, "exam\u2010 \t\nple", "example"},
		{"non-ASCII lower case next", def, "na\u00ef\u2010\nve \u00e9t\u2010\n\u00e9", "naïve|été"},
		{"joined twice", def, "a\u2010\nb\u00ad\nc", "abc"},
		{"upper case next stays apart", def, "non\u2010\nEnglish XftGlyph\u2010\nFont", "non|english|xftglyph|font"},
		{"capitals", def, "--location=LOCA\u2010\n   TION \u00c9T\u00c9\u2010\n\u00c9T\u00c9", "location|location|étéété"},
		{"digit next stays apart", def, "ISO\u2010\n8859", "iso|8859"},
		{"blank line between stays apart", def, "exam\u2010\n\nple", "exam|ple"},
		{"hyphen not at a line end stays a separator", def, "well-known exam- ple a\u2010b", "well|known|exam|ple|a|b"},
		{"dash after a space stays apart", def, "word -\nand word \u2010\nand", "word|and|word|and"},
		{"double hyphen stays apart", def, "word\u2010\u2010\nand", "word|and"},
		{"other dashes stay apart", def, "a\u2013\nb c\u2014\nd", "a|b|c|d"},
		{"hyphen at the end of the text", def, "end\u2010\n", "end"},
		{"off", NewNormalizer(Normalization{FoldQuotes: true}), "dat\u2010\naplex hy\u00adphen", "dat|aplex|hy|phen"},
		{"with punctuation tokens", NewNormalizer(Normalization{KeepPunct: true, JoinHyphens: true}), "a\u2010\nb - c-\nd", "ab|-|c|-|d"},
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
	for _, s := range []string{"", "hello world", "Don\u2019t", "\xff\xfe\x00", "東京", "a'b'c'", "\u0301\u0301", "ß'ß", "Hello World's 42nd TEST, don't-stop 'quoted' x'", "A1b2 C3'd4 ''e",
		"\u201cDon\u2019t\u201d \u2014 she\u2019d\u2019ve \u2018x\u2019 1\u20132 \u00aba\u00bb b\u02bcc d\u2032 \u2212e\u2019", "\u2019\u2019a\u2019\u2019b\u2019",
		"dat\u2010\n  aplex exam-\r\nple hy\u00adphen soft\u00ad\n\tly na\u00ef-\u2028ve"} {
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
			// On quoted ASCII the Unicode path gives what the quoted
			// fast path gives.
			if n.quotedFast && quotedASCII(b) {
				var u, q Tokens
				n.tokenizeUnicode(b, &u)
				n.tokenizeQuoted(b, &q)
				if d := tokensDiff(&u, &q); d != "" {
					t.Fatalf("the quoted path differs from the Unicode one for %q: %s", b, d)
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

// tokensDiff describes the first difference between two tokenizations,
// the code points counted included ("" when they are the same).
func tokensDiff(a, b *Tokens) string {
	switch {
	case !slices.Equal(a.Hash, b.Hash):
		return fmt.Sprintf("hashes (%d and %d tokens)", a.Len(), b.Len())
	case !slices.Equal(a.Off, b.Off) || !slices.Equal(a.SrcEnd, b.SrcEnd):
		return fmt.Sprintf("byte offsets %v %v and %v %v", a.Off, a.SrcEnd, b.Off, b.SrcEnd)
	case !slices.Equal(a.End, b.End) || !bytes.Equal(a.Text, b.Text):
		return fmt.Sprintf("token text %q and %q", a.Text, b.Text)
	case !slices.Equal(a.HasDigit, b.HasDigit):
		return "digit flags"
	case a.runes != b.runes || a.decoded != b.decoded || a.normalized != b.normalized:
		return fmt.Sprintf("flags runes/decoded/normalized %v/%v/%v and %v/%v/%v", a.runes, a.decoded, a.normalized, b.runes, b.decoded, b.normalized)
	case !slices.Equal(a.runeOff, b.runeOff) || !slices.Equal(a.runeEnd, b.runeEnd):
		return fmt.Sprintf("code point offsets %v %v and %v %v", a.runeOff, a.runeEnd, b.runeOff, b.runeEnd)
	}
	return ""
}

// TestTokenizeQuoted checks the quoted-ASCII fast path against the
// Unicode path it stands in for: on texts built from the characters it
// handles (typographic quotes and dashes around words, digits and
// apostrophes), and on every paragraph of the Gutenberg editions and the
// PAN13 sources that is quoted ASCII. Texts with any other character
// outside ASCII take the Unicode path.
func TestTokenizeQuoted(t *testing.T) {
	n := NewNormalizer(DefaultNormalization())
	check := func(name string, b []byte) {
		t.Helper()
		var u, q Tokens
		n.tokenizeUnicode(b, &u)
		n.tokenizeQuoted(b, &q)
		if d := tokensDiff(&u, &q); d != "" {
			t.Errorf("%s: the quoted path differs from the Unicode one: %s\n%q", name, d, b)
		}
		var got Tokens
		n.Tokenize(b, &got)
		if d := tokensDiff(&u, &got); d != "" && !isASCII(b) {
			t.Errorf("%s: Tokenize differs from the Unicode path: %s", name, d)
		}
	}
	for _, tt := range []struct{ name, text string }{
		{"curly quotes", "\u201cDon\u2019t go,\u201d she said."},
		{"apostrophe at the ends", "\u2019tis the hunters\u2019 \u2018moon\u2019"},
		{"joined twice", "she\u2019d\u2019ve and o\u2019\u2019clock"},
		{"dashes", "one\u2014two \u2013 3\u20134 \u2212x \u2010y\u2012z\u2015"},
		{"guillemets and modifier apostrophe", "\u00abmot\u00bb l\u02bcami d\u2032x"},
		{"mixed ASCII apostrophes", "it's 'quoted' and rock\u2019n'roll"},
		{"quote last", "end\u2019"},
		{"hyphenated at a line end", "dat\u2010\n  aplex exam\u2010\r\nple non\u2010\nEnglish \u2018co\u2010\nop\u2019 NON\u2010\nSTOP non-\nstop"},
		{"only quotes", "\u201c\u201d\u2019"},
	} {
		if !quotedASCII([]byte(tt.text)) {
			t.Fatalf("%s: not quoted ASCII", tt.name)
		}
		check(tt.name, []byte(tt.text))
	}
	for _, tt := range []string{"caf\u00e9 \u2019", "\u2011", "\u2026", "\uff07", "a\u00a0b", "\xe2\x80", "\xe2\x80\x99\xff"} {
		if quotedASCII([]byte(tt)) {
			t.Errorf("%q taken for quoted ASCII", tt)
		}
	}
	r := rand.New(rand.NewPCG(5, 23))
	parts := []string{"a", "B", "zz", "7", " ", "  ", "\n", "'", ",", ".", "-", "\"", "\u2018", "\u2019", "\u201c", "\u201d", "\u2014", "\u2013", "\u2212", "\u00ab", "\u00bb", "\u02bc", "\u2032", "\u201a", "\u2010", "\r", "\t"}
	for i := range 2000 {
		var b []byte
		for range r.IntN(40) {
			b = append(b, parts[r.IntN(len(parts))]...)
		}
		check(fmt.Sprintf("random %d", i), b)
	}
	var files []string
	for _, d := range []string{dataset.Dir(t, "gutenberg-editions") + "/texts", dataset.Dir(t, "pan13-text-alignment-no-obfuscation") + "/src"} {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			files = append(files, d+"/"+e.Name())
		}
	}
	quoted := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range bytes.Split(b, []byte("\n\n")) {
			if !isASCII(p) && quotedASCII(p) {
				quoted++
				check(fmt.Sprintf("%s paragraph %d", f, i), p)
			}
		}
	}
	if quoted < 100 {
		t.Errorf("only %d quoted-ASCII paragraphs in %d files", quoted, len(files))
	}
	t.Logf("%d quoted-ASCII paragraphs in %d files", quoted, len(files))
}
