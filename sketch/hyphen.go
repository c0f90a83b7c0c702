package sketch

import (
	"unicode"
	"unicode/utf8"
)

// Words hyphenated at a line end ([Normalization.JoinHyphens]). A renderer
// that hyphenates and says so breaks a word at a line end with a hyphen of
// its own: groff (man) writes U+2010 HYPHEN in UTF-8 output for the
// hyphens it inserts, and a hyphen of the source stays '-' (the sampled
// manual pages of neardup eval --sets manpages, rendered at 80 columns,
// end 7,747 lines in U+2010, and the 7,744 of them between two word
// characters are one word in the rendering without hyphenation; 152 end
// in '-', and the 102 of them after a word keep their hyphen there);
// U+00AD SOFT HYPHEN is by definition a hyphenation point, shown only at a
// line end (HTML's &shy;, a word processor's optional hyphen). The same
// text rendered at another width, or without hyphenation, has the word
// whole. So a word that ends in U+2010 or U+00AD, followed by a line break
// (spaces or tabs on either side of it) and a lower-case letter, or an
// upper-case letter after an upper-case one ("LOCA‐" + "TION"), continues
// on the next line: the two parts are one token, spanning the text from
// the first part's start to the second part's end. A soft hyphen inside a
// word is dropped.
//
// '-' at a line end is left a separator, as it is anywhere else: in the
// texts measured it is a compound's own hyphen ("non-" + "exclusive" in
// license texts, options in manual pages), which, read as a separator,
// tokenizes like the unbroken compound; a prototype that joined it too
// took 4 license test files from exact to near copies of their license
// text (neardup eval --sets licensecheck-testdata) and changed nothing on
// the manual pages. Renderers that hyphenate with '-' (groff's ASCII output, some
// PDF text extractors; pdftotext's default mode joins its own) are not
// joined. A capital or a digit after the line break ("non‐" + "English",
// "ISO‐" + "8859") leaves the parts apart unless the first part ends in a
// capital too: hyphenation puts a capital at the start of a second part
// only in a word of capitals or an identifier ("XftGlyph‐" + "FontSpec",
// left apart: it cannot be told from "non‐" + "English").

// hyphenBreak reports where a word hyphenated at a line end continues: b
// starts with the hyphen that ends a word (U+2010 or U+00AD), upper
// says whether the word's last character is an upper-case letter, and
// hyphenBreak returns the offset in b of the next line's first letter when
// a line break (LF, CR, CR LF, U+0085 or U+2028, with spaces or tabs
// before and after it) and a letter that continues the word follow the
// hyphen, else 0. A lower-case letter continues any word, an upper-case
// one only a word whose last character is upper-case ("LOCA‐" + "TION").
func hyphenBreak(b []byte, upper bool) int {
	i := hyphenLen(b)
	if i == 0 {
		return 0
	}
	i = skipBlanks(b, i)
	switch {
	case i >= len(b):
		return 0
	case b[i] == '\n':
		i++
	case b[i] == '\r':
		i++
		if i < len(b) && b[i] == '\n' {
			i++
		}
	case i+1 < len(b) && b[i] == 0xC2 && b[i+1] == 0x85: // U+0085
		i += 2
	case i+2 < len(b) && b[i] == 0xE2 && b[i+1] == 0x80 && b[i+2] == 0xA8: // U+2028
		i += 3
	default:
		return 0
	}
	i = skipBlanks(b, i)
	if i >= len(b) {
		return 0
	}
	if c := b[i]; c < utf8.RuneSelf {
		if c >= 'a' && c <= 'z' || upper && c >= 'A' && c <= 'Z' {
			return i
		}
		return 0
	}
	if r, _ := utf8.DecodeRune(b[i:]); unicode.IsLower(r) || upper && (unicode.IsUpper(r) || unicode.IsTitle(r)) {
		return i
	}
	return 0
}

// upperBefore reports whether the character of b that ends at end is an
// upper-case letter: the last character of a word before its hyphen.
func upperBefore(b []byte, end int) bool {
	if end == 0 {
		return false
	}
	if c := b[end-1]; c < utf8.RuneSelf {
		return c >= 'A' && c <= 'Z'
	}
	r, _ := utf8.DecodeLastRune(b[:end])
	return unicode.IsUpper(r) || unicode.IsTitle(r)
}

// hyphenLen is the length of the hyphenation mark at the start of b: 2
// for U+00AD SOFT HYPHEN, 3 for U+2010 HYPHEN, 0 for anything else.
func hyphenLen(b []byte) int {
	switch {
	case len(b) >= 2 && b[0] == 0xC2 && b[1] == 0xAD:
		return 2
	case len(b) >= 3 && b[0] == 0xE2 && b[1] == 0x80 && b[2] == 0x90:
		return 3
	}
	return 0
}

// skipBlanks returns the offset of the first byte of b from i on that is
// not a space or a tab.
func skipBlanks(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}
