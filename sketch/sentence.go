package sketch

import (
	"unicode"
	"unicode/utf8"

	"github.com/clipperhouse/uax29/v2/sentences"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/transform"
)

// Sentence is one sentence of a document, trimmed of surrounding
// whitespace. Start and End are byte offsets in the text given to
// [SentenceSplitter.Split] (text[Start:End] is the sentence); Offset and
// Length are the same span in Unicode code points of the text as received,
// the unit of offsets in events. Invalid UTF-8 counts one code point per
// byte, as [Normalizer.CodePoints] does: the text is then read as
// Windows-1252.
type Sentence struct {
	Start, End     int
	Offset, Length int
}

// LineBreaks says whether a single line break ends a sentence. A blank line
// (two line breaks with only spaces or tabs between them) and U+2029
// PARAGRAPH SEPARATOR always do. Line breaks are LF, CR, CR LF, U+0085 and
// U+2028.
type LineBreaks uint8

const (
	// LinesAuto (the default) ends a sentence at a line break unless the
	// next line starts with a lower-case letter, which marks a hard-wrapped
	// line running on. Headings and list items, which start upper-case or
	// with a digit or a bullet, stay sentences of their own.
	LinesAuto LineBreaks = iota
	// LinesEnd ends a sentence at every line break, as UAX #29 does: one
	// paragraph or heading per line (Wikipedia plain text, extracted web
	// pages).
	LinesEnd
	// LinesJoin reads a single line break as a space: hard-wrapped text
	// (Project Gutenberg, e-mail), where a new line starting with a name is
	// still the same sentence.
	LinesJoin
)

// SentenceSplitter splits documents into sentences: Unicode sentence
// boundaries (UAX #29, by github.com/clipperhouse/uax29), minus the breaks
// UAX #29 makes after abbreviations and initials, after ? or ! before a
// lower-case word, and at line breaks that [LineBreaks] joins (see
// [SentenceSplitter.Split]).
//
// The zero value is ready to use with [LinesAuto]. A SentenceSplitter
// keeps reusable buffers, so after warm-up Split allocates nothing; it is
// not safe for concurrent use.
type SentenceSplitter struct {
	// Lines says whether a single line break ends a sentence.
	Lines LineBreaks

	it  *sentences.Iterator[[]byte]
	buf []byte // the text as segmented, when it differs from the input
	dec transform.Transformer
}

// Split appends the sentences of text to dst and returns it. Sentences are
// in text order, non-empty, non-overlapping and trimmed of whitespace;
// text that is only whitespace has none.
//
// UAX #29 breaks after a full stop followed by a space and anything but a
// lower-case word, and never inside a number ("3.14", "1.5 million"), so
// decimals and lower-case continuations ("e.g. hammers", "\"Stop.\" he
// said") are already kept together, and a closing quote or bracket stays
// with its sentence ("He said \"Stop.\"" | "Then he left."). It does
// break after a question or exclamation mark before a lower-case word;
// Split removes that break ("“Why?” she asked."), and removes a break after
// a full stop when the word before the stop, with the next sentence on the
// same line, is:
//
//   - a title or Latin abbreviation (Dr., Mr., Prof., St., e.g., i.e.,
//     cf., vs., et al.): always;
//   - an abbreviation used before numbers (No., p., pp., vol., fig., ch.,
//     sec., c., ca., approx., month abbreviations such as Jan.) when the
//     next sentence starts with a digit;
//   - one or more initials (J., J.R.R.) when the next sentence starts with
//     an upper-case letter, except the initialisms that usually end a
//     sentence (U.S., U.K., U.N., E.U., U.S.A., U.S.S.R., D.C.).
//
// Ellipses follow UAX #29: "..." before an upper-case word ends a
// sentence, before a lower-case one does not.
func (s *SentenceSplitter) Split(text []byte, dst []Sentence) []Sentence {
	if s.it == nil {
		s.it = sentences.FromBytes(nil)
	}
	// seg is what the segmenter reads: text itself, or its Windows-1252
	// decoding when it is not valid UTF-8 (then code point i of seg is
	// byte i of text), with the joined line breaks blanked in a copy.
	seg := text
	ascii := isASCII(text)
	decoded := false
	if !ascii && !utf8.Valid(text) {
		seg = s.decode1252(text)
		decoded = true
	}
	if s.Lines != LinesEnd {
		seg = s.joinLines(seg, decoded)
	}
	s.it.SetText(seg)
	// Code points before byte pos of seg, advanced monotonically.
	pos, runes := 0, 0
	cp := func(b int) int {
		if ascii {
			return b
		}
		runes += utf8.RuneCount(seg[pos:b])
		pos = b
		return runes
	}
	start := -1
	for s.it.Next() {
		if start < 0 {
			start = s.it.Start()
		}
		end := s.it.End()
		if end < len(seg) && continues(seg[start:end], seg[end:]) {
			continue
		}
		lo, hi := trimSpace(seg, start, end)
		start = -1
		if lo == hi {
			continue
		}
		off := cp(lo)
		n := cp(hi) - off
		st := Sentence{Start: lo, End: hi, Offset: off, Length: n}
		if decoded {
			// Each input byte is one code point of the decoding.
			st.Start, st.End = off, off+n
		}
		dst = append(dst, st)
	}
	s.it.SetText(nil) // do not keep the caller's text alive
	return dst
}

// decode1252 decodes invalid UTF-8 as Windows-1252 into s.buf: one code
// point per input byte, as the tokenizer reads it.
func (s *SentenceSplitter) decode1252(text []byte) []byte {
	if s.dec == nil {
		s.dec = charmap.Windows1252.NewDecoder()
	}
	out, err := appendTransform(s.dec, s.buf[:0], text)
	if err != nil {
		// The decoder accepts every byte; an error would be a bug in
		// x/text. Replace invalid bytes instead, still one rune per byte.
		out = out[:0]
		for _, c := range text {
			r := rune(c)
			if c >= utf8.RuneSelf {
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		}
	}
	s.buf = out
	return out
}

// joinLines returns seg with every single line break that does not end a
// sentence (see [LineBreaks]) replaced by white space of the same length. It copies seg into s.buf first unless inBuf
// says it is there already, and only when something is replaced.
func (s *SentenceSplitter) joinLines(seg []byte, inBuf bool) []byte {
	out := seg
	for i := 0; i < len(seg); {
		n := lineBreakLen(seg[i:])
		if n == 0 {
			i++
			continue
		}
		// A run of line breaks and horizontal spaces between them.
		first, firstLen, breaks := i, n, 0
		j := i
		for j < len(seg) {
			if n := lineBreakLen(seg[j:]); n > 0 {
				breaks++
				j += n
				continue
			}
			if seg[j] == ' ' || seg[j] == '\t' {
				j++
				continue
			}
			break
		}
		i = j
		if breaks != 1 {
			continue
		}
		if s.Lines == LinesAuto {
			r, _ := utf8.DecodeRune(seg[j:])
			if !unicode.IsLower(r) {
				continue
			}
		}
		if !inBuf {
			s.buf = append(s.buf[:0], seg...)
			out, inBuf = s.buf, true
		}
		// A space of the same bytes and code points, so that offsets in
		// both units are unchanged: CR LF → two spaces, U+0085 → U+00A0,
		// U+2028 → U+2002 EN SPACE.
		switch firstLen {
		case 1:
			out[first] = ' '
		case 2:
			if out[first] == '\r' {
				out[first], out[first+1] = ' ', ' '
			} else {
				out[first], out[first+1] = 0xc2, 0xa0
			}
		case 3:
			out[first], out[first+1], out[first+2] = 0xe2, 0x80, 0x82
		}
	}
	return out
}

// lineBreakLen returns the byte length of the line break at the start of b
// (CR LF is one), or 0.
func lineBreakLen(b []byte) int {
	switch {
	case len(b) == 0:
		return 0
	case b[0] == '\n':
		return 1
	case b[0] == '\r':
		if len(b) > 1 && b[1] == '\n' {
			return 2
		}
		return 1
	case b[0] == 0xc2 && len(b) > 1 && b[1] == 0x85: // U+0085 NEL
		return 2
	case b[0] == 0xe2 && len(b) > 2 && b[1] == 0x80 && b[2] == 0xa8: // U+2028
		return 3
	}
	return 0
}

// trimSpace returns [lo, hi) within [start, end) without leading and
// trailing white space.
func trimSpace(b []byte, start, end int) (lo, hi int) {
	lo, hi = start, end
	for lo < hi {
		r, n := utf8.DecodeRune(b[lo:hi])
		if !unicode.IsSpace(r) {
			break
		}
		lo += n
	}
	for hi > lo {
		r, n := utf8.DecodeLastRune(b[lo:hi])
		if !unicode.IsSpace(r) {
			break
		}
		hi -= n
	}
	return lo, hi
}

// continues reports whether the UAX #29 break between sent and rest is
// one to remove: sent ends with a full stop after an abbreviation or
// initials, and rest continues on the same line (see Split).
func continues(sent, rest []byte) bool {
	// Trailing horizontal space only: a break at a line or paragraph end
	// stands.
	i := len(sent)
	for i > 0 {
		r, n := utf8.DecodeLastRune(sent[:i])
		if lineBreakLen(sent[i-n:]) > 0 || r == '\u2029' {
			return false
		}
		if !unicode.IsSpace(r) {
			break
		}
		i -= n
	}
	if i == 0 {
		return false
	}
	next, _ := utf8.DecodeRune(rest)
	if sent[i-1] != '.' {
		return afterQuestion(sent[:i]) && unicode.IsLower(next)
	}
	// The word before the stop: letters and inner dots ("e.g", "J.R.R").
	j := i - 1
	for j > 0 {
		r, n := utf8.DecodeLastRune(sent[:j])
		if r != '.' && !unicode.IsLetter(r) {
			break
		}
		j -= n
	}
	word := sent[j : i-1]
	if len(word) == 0 || word[0] == '.' {
		return false // "..." or ". ." is not an abbreviation
	}
	if isInitials(word) {
		return unicode.IsUpper(next) && !sentenceFinalInitialism(word)
	}
	var key [8]byte
	k, ok := asciiLowerKey(key[:0], word)
	if !ok {
		return false
	}
	switch abbreviation(string(k)) {
	case abbrAlways:
		return true
	case abbrBeforeNumber:
		return unicode.IsDigit(next)
	}
	return false
}

// afterQuestion reports whether sent ends with a question or exclamation
// mark, possibly inside closing quotes or brackets: "“Why?”".
func afterQuestion(sent []byte) bool {
	for len(sent) > 0 {
		r, n := utf8.DecodeLastRune(sent)
		switch {
		case r == '?' || r == '!' || r == '‽':
			return true
		case r == '"' || r == '\'' || unicode.In(r, unicode.Pe, unicode.Pf, unicode.Pi):
			sent = sent[:len(sent)-n]
		default:
			return false
		}
	}
	return false
}

// isInitials reports whether w is one or more single upper-case letters
// separated by full stops: "J", "J.R.R", "É".
func isInitials(w []byte) bool {
	letter := false
	for _, r := range string(w) {
		switch {
		case r == '.':
			if !letter {
				return false
			}
			letter = false
		case unicode.IsUpper(r) && !letter:
			letter = true
		default:
			return false
		}
	}
	return letter
}

// sentenceFinalInitialism reports whether the initials w (with inner dots)
// are an initialism that often ends a sentence ("in the U.S.").
func sentenceFinalInitialism(w []byte) bool {
	switch string(w) {
	case "U.S", "U.K", "U.N", "E.U", "U.S.A", "U.S.S.R", "D.C":
		return true
	}
	return false
}

// asciiLowerKey appends w lower-cased to dst if w is ASCII and short
// enough to be an abbreviation.
func asciiLowerKey(dst, w []byte) ([]byte, bool) {
	if len(w) > cap(dst) {
		return nil, false
	}
	for _, c := range w {
		if c >= utf8.RuneSelf {
			return nil, false
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst, true
}

type abbrKind uint8

const (
	abbrNone abbrKind = iota
	// abbrAlways: titles and Latin abbreviations, followed by a name or
	// any word.
	abbrAlways
	// abbrBeforeNumber: abbreviations that precede a number; before a
	// word they are more often the end of a sentence ("He said no.").
	abbrBeforeNumber
)

// abbreviation returns the kind of the English abbreviation w, given in
// lower case without its final stop. Words that often end a sentence
// (etc., Inc., Jr., Co.) are left out: a missed merge costs a sentence cut
// in two, a wrong one joins two sentences.
func abbreviation(w string) abbrKind {
	switch w {
	case "mr", "mrs", "ms", "messrs", "mme", "mlle", "dr", "prof", "rev",
		"hon", "st", "mt", "fr", "gen", "col", "capt", "lt", "sgt", "maj",
		"adm", "gov", "sen", "rep", "pres",
		"e.g", "i.e", "cf", "viz", "vs", "al":
		return abbrAlways
	case "no", "nos", "p", "pp", "vol", "vols", "fig", "figs", "eq", "ch",
		"chap", "sec", "art", "op", "c", "ca", "approx",
		"jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept",
		"oct", "nov", "dec":
		return abbrBeforeNumber
	}
	return abbrNone
}
