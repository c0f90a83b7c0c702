package sketch

import (
	"slices"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Normalization selects the optional steps of text normalization. Case
// folding, whitespace collapse and word segmentation always happen; the zero
// value folds nothing else. [DefaultNormalization] is what neardup uses.
type Normalization struct {
	// FoldQuotes maps curly and other typographic quotes to ASCII ' and ",
	// and dashes to '-', before segmentation. An apostrophe between two
	// word characters joins them ("don’t" → "dont"), so editions that differ
	// only in quote style tokenize alike.
	FoldQuotes bool
	// StripAccents removes combining marks after compatibility
	// decomposition ("café" → "cafe").
	StripAccents bool
	// DropDigits treats digits as separators (DUPNIQ removes them: page
	// numbers and OCR'd footnote marks are noise for books).
	DropDigits bool
	// KeepPunct emits each punctuation or symbol character as a token of its
	// own instead of treating it as a separator.
	KeepPunct bool
	// JoinHyphens joins a word hyphenated at a line end with U+2010 HYPHEN
	// or U+00AD SOFT HYPHEN ("dat‐" + line break + "aplex" → "dataplex";
	// see [hyphenBreak]) and drops soft hyphens inside a word, so that
	// renderings of one text at different widths, or with and without
	// hyphenation, tokenize alike. '-' stays a separator.
	JoinHyphens bool
}

// DefaultNormalization() returns the normalization neardup uses unless
// configured otherwise: quotes folded, words hyphenated at a line end
// joined, accents, digits and punctuation kept as the segmentation leaves
// them (punctuation separates words).
func DefaultNormalization() Normalization {
	return Normalization{FoldQuotes: true, JoinHyphens: true}
}

// Tokens is a tokenized document. Token i has hash Hash[i], normalized text
// Text[End[i-1]:End[i]] (End[-1] = 0), spans bytes [Off[i], SrcEnd[i]) of
// the text the tokenizer read (the input, or its decoding or normalization:
// see [Normalizer.CodePoints] for offsets in the input itself), and
// HasDigit[i] reports whether it contains a digit. The slices are reused by
// [Normalizer.Tokenize]; copy what must outlive the next call.
type Tokens struct {
	Hash     []uint64
	Off      []uint32
	SrcEnd   []uint32
	End      []uint32
	HasDigit []bool
	Text     []byte
	// decoded and normalized say what Off and SrcEnd refer to: the input
	// decoded as Windows-1252, then normalized (NFKC or accent stripping).
	decoded, normalized bool
	// runeOff and runeEnd are Off and SrcEnd in code points of the text
	// read, when runes is set (the Unicode path counts them as it goes:
	// [Normalizer.CodePoints] then need not count them again).
	runeOff, runeEnd []uint32
	runes            bool
}

// Len returns the number of tokens.
func (t *Tokens) Len() int { return len(t.Hash) }

// Word returns the normalized text of token i.
func (t *Tokens) Word(i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = t.End[i-1]
	}
	return t.Text[start:t.End[i]]
}

func (t *Tokens) reset() {
	t.decoded, t.normalized, t.runes = false, false, false
	t.runeOff, t.runeEnd = t.runeOff[:0], t.runeEnd[:0]
	t.Hash = t.Hash[:0]
	t.Off = t.Off[:0]
	t.SrcEnd = t.SrcEnd[:0]
	t.End = t.End[:0]
	t.HasDigit = t.HasDigit[:0]
	t.Text = t.Text[:0]
}

// Normalizer segments text into normalized, hashed tokens. It keeps scratch
// buffers, so it is not safe for concurrent use.
type Normalizer struct {
	opt   Normalization
	class [256]uint8 // ASCII byte classes for the fast path
	// low maps an ASCII byte to its lower-cased value when it is part of a
	// word, to lowApos for an apostrophe, lowPunct for punctuation kept as
	// a token, and 0 for a separator: one load and one compare per byte.
	low     [256]uint8
	decoded []byte
	normed  []byte
	strip   transform.Transformer
	// known and inert cache, per code point of the BMP, whether it was
	// classified and whether it is NFKC-inert (see inertRune).
	known, inert *[1 << 16 / 64]uint64
	// quotedFast: the options under which tokenizeQuoted tokenizes as
	// tokenizeUnicode does (quotes folded, no punctuation tokens, no
	// accent stripping).
	quotedFast bool
}

// Special values of Normalizer.low (word bytes are ≥ '0').
const (
	lowApos  = 1
	lowPunct = 2
)

const (
	clSep uint8 = iota
	clLetter
	clDigit
	clApos
	clPunct
)

// NewNormalizer returns a Normalizer for the given options.
func NewNormalizer(opt Normalization) *Normalizer {
	n := &Normalizer{opt: opt}
	for c := 0; c < 128; c++ {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			n.class[c] = clLetter
		case c >= '0' && c <= '9':
			if !opt.DropDigits {
				n.class[c] = clDigit
			}
		case c == '\'':
			n.class[c] = clApos
		case c > ' ' && c < 127:
			if opt.KeepPunct {
				n.class[c] = clPunct
			}
		}
	}
	for c := range 256 {
		switch n.class[c] {
		case clLetter:
			n.low[c] = byte(c) | 0x20
		case clDigit:
			n.low[c] = byte(c)
		case clApos:
			n.low[c] = lowApos
		case clPunct:
			n.low[c] = lowPunct
		}
	}
	if opt.StripAccents {
		n.strip = transform.Chain(norm.NFKD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	}
	n.quotedFast = opt.FoldQuotes && !opt.KeepPunct && !opt.StripAccents
	return n
}

// Options returns the normalization options n was built with.
func (n *Normalizer) Options() Normalization { return n.opt }

// Tokenize segments text into tok, replacing its contents. Invalid UTF-8 is
// decoded as Windows-1252 (the common legacy encoding of English text; every
// byte maps to a character), so no input makes it fail or panic. Offsets in
// tok refer to the decoded text when decoding happened.
func (n *Normalizer) Tokenize(text []byte, tok *Tokens) {
	tok.reset()
	if isASCII(text) {
		n.tokenizeASCII(text, tok)
		return
	}
	if n.quotedFast && quotedASCII(text) {
		n.tokenizeQuoted(text, tok)
		return
	}
	if !utf8.Valid(text) {
		text = n.decode1252(text)
		tok.decoded = true
	}
	n.tokenizeUnicode(text, tok)
}

func isASCII(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		v := uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
			uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56
		if v&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= 0x80 {
			return false
		}
	}
	return true
}

func (n *Normalizer) decode1252(text []byte) []byte {
	dec := charmap.Windows1252.NewDecoder()
	n.decoded = n.decoded[:0]
	var err error
	n.decoded, err = appendTransform(dec, n.decoded, text)
	if err != nil {
		// The Windows-1252 decoder accepts every byte; an error here would be
		// a bug in x/text. Fall back to replacing invalid sequences.
		n.decoded = []byte(string([]rune(string(text))))
	}
	return n.decoded
}

// appendTransform runs t over all of src, appending to dst.
func appendTransform(t transform.Transformer, dst, src []byte) ([]byte, error) {
	t.Reset()
	if cap(dst)-len(dst) < len(src)+16 {
		grown := make([]byte, len(dst), len(dst)+len(src)+len(src)/2+16)
		copy(grown, dst)
		dst = grown
	}
	for {
		nDst, nSrc, err := t.Transform(dst[len(dst):cap(dst)], src, true)
		dst = dst[:len(dst)+nDst]
		src = src[nSrc:]
		switch err {
		case nil:
			return dst, nil
		case transform.ErrShortDst:
			grown := make([]byte, len(dst), 2*cap(dst)+16)
			copy(grown, dst)
			dst = grown
		default:
			return dst, err
		}
	}
}

// tokenizeASCII is the fast path: one table lookup per byte, the hash
// computed as the token is lowered. Output slices are sized up front (an
// ASCII text of n bytes has at most n/2+1 tokens and n bytes of token text)
// so the loop writes by index instead of appending.
func (n *Normalizer) tokenizeASCII(text []byte, tok *Tokens) {
	maxTok := len(text)/2 + 1
	if n.opt.KeepPunct {
		maxTok = len(text) + 1
	}
	hashes := slices.Grow(tok.Hash[:0], maxTok)[:maxTok]
	offs := slices.Grow(tok.Off[:0], maxTok)[:maxTok]
	srcEnds := slices.Grow(tok.SrcEnd[:0], maxTok)[:maxTok]
	ends := slices.Grow(tok.End[:0], maxTok)[:maxTok]
	digits := slices.Grow(tok.HasDigit[:0], maxTok)[:maxTok]
	out := slices.Grow(tok.Text[:0], len(text))[:len(text)]
	low := &n.low
	nt, no := 0, 0 // tokens and text bytes written
	// Word at a time: skip separators, then consume a word in a tight
	// inner loop that lowers, copies and hashes each byte. No closure, so
	// the counters stay in registers.
	for i := 0; i < len(text); {
		switch v := low[text[i]]; {
		case v > lowPunct:
			start, h, hasDigit := i, uint64(fnvOffset64), false
			for ; i < len(text); i++ {
				v := low[text[i]]
				if v <= lowPunct {
					// Join across an apostrophe inside a word ("don't" →
					// "dont").
					if v == lowApos && i+1 < len(text) && low[text[i+1]] > lowPunct {
						continue
					}
					break
				}
				if v <= '9' {
					hasDigit = true
				}
				h = (h ^ uint64(v)) * fnvPrime64
				out[no] = v
				no++
			}
			hashes[nt], offs[nt], srcEnds[nt], ends[nt], digits[nt] = Mix64(h), uint32(start), uint32(i), uint32(no), hasDigit
			nt++
			continue
		case v == lowPunct:
			out[no] = text[i]
			no++
			hashes[nt], offs[nt], srcEnds[nt], ends[nt], digits[nt] = TokenHash(text[i:i+1]), uint32(i), uint32(i+1), uint32(no), false
			nt++
		}
		i++
	}
	tok.Hash, tok.Off, tok.SrcEnd, tok.End, tok.HasDigit, tok.Text = hashes[:nt], offs[:nt], srcEnds[:nt], ends[:nt], digits[:nt], out[:no]
}

func isWordClass(c uint8) bool { return c == clLetter || c == clDigit }

// push appends a token; cont is the number of UTF-8 continuation bytes of
// the text before srcEnd and contOff those before off, so that the byte
// offsets less them are the token's code point offsets.
func (t *Tokens) push(h uint64, off, srcEnd, end int, digit bool, contOff, cont int) {
	t.Hash = append(t.Hash, h)
	t.Off = append(t.Off, uint32(off))
	t.SrcEnd = append(t.SrcEnd, uint32(srcEnd))
	t.End = append(t.End, uint32(end))
	t.HasDigit = append(t.HasDigit, digit)
	t.runeOff = append(t.runeOff, uint32(off-contOff))
	t.runeEnd = append(t.runeEnd, uint32(srcEnd-cont))
}

// cjk holds the scripts written without spaces between words; each of their
// characters is a token, so word shingles over them are character n-grams.
var cjk = []*unicode.RangeTable{unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar}

// foldRune maps typographic quotes and dashes to ASCII.
func foldRune(r rune) rune {
	switch r {
	case '\u2018', '\u2019', '\u201a', '\u201b', '\u2032', '\u02bc', '\uff07', '\u00b4':
		return '\''
	case '\u201c', '\u201d', '\u201e', '\u201f', '\u2033', '\u00ab', '\u00bb':
		return '"'
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212', '\ufe58', '\ufe63', '\uff0d':
		return '-'
	}
	return r
}

type runeClass uint8

const (
	rSep runeClass = iota
	rWord
	rDigit
	rApos
	rPunct
	rSolo // a CJK character: a token by itself
)

func (n *Normalizer) classify(r rune) runeClass {
	switch {
	case r < 0x80:
		switch n.class[r] {
		case clLetter:
			return rWord
		case clDigit:
			return rDigit
		case clApos:
			return rApos
		case clPunct:
			return rPunct
		}
		return rSep
	case unicode.IsLetter(r):
		if unicode.In(r, cjk...) {
			return rSolo
		}
		return rWord
	case unicode.IsMark(r):
		return rWord
	case unicode.IsDigit(r):
		if n.opt.DropDigits {
			return rSep
		}
		return rDigit
	case unicode.IsNumber(r):
		return rWord
	case unicode.IsPunct(r) || unicode.IsSymbol(r):
		if n.opt.KeepPunct {
			return rPunct
		}
	}
	return rSep
}

// tokenizeUnicode handles any valid UTF-8: NFKC (or NFKD minus marks, then
// NFC, when stripping accents), quote folding, lower-casing.
func (n *Normalizer) tokenizeUnicode(text []byte, tok *Tokens) {
	var err error
	src := text
	switch {
	case n.strip != nil:
		n.normed, err = appendTransform(n.strip, n.normed[:0], text)
		src = n.normed
	case !n.normalizedNFKC(text) && norm.NFKC.QuickSpan(text) != len(text):
		n.normed = norm.NFKC.Append(n.normed[:0], text...)
		src = n.normed
	}
	if err != nil {
		src = text
	}
	if len(src) > 0 && (len(src) != len(text) || &src[0] != &text[0]) {
		tok.normalized = true
	}
	var (
		h        uint64
		in       bool
		start    int
		wordEnd  int // source byte after the word's last character
		hasDigit bool
		buf      [utf8.UTFMax * 3]byte
		// cont counts the continuation bytes read (the bytes that are
		// not a code point's first), startCont those before the word.
		cont, startCont, endCont int
	)
	// The token text is about as long as the text (case folding seldom
	// lengthens a character) and a token takes at least two bytes with
	// its separator: sized once, appending seldom grows them. The word
	// being read is emitted inline (no closure) so that its state stays
	// in registers.
	out := slices.Grow(tok.Text[:0], len(src)+len(src)/4)
	maxTok := len(src)/2 + 1
	tok.Hash, tok.Off, tok.SrcEnd = slices.Grow(tok.Hash, maxTok), slices.Grow(tok.Off, maxTok), slices.Grow(tok.SrcEnd, maxTok)
	tok.End, tok.HasDigit = slices.Grow(tok.End, maxTok), slices.Grow(tok.HasDigit, maxTok)
	tok.runeOff, tok.runeEnd, tok.runes = slices.Grow(tok.runeOff, maxTok), slices.Grow(tok.runeEnd, maxTok), true
	class, low := &n.class, &n.low
	for i := 0; i < len(src); {
		pos := i
		// ASCII bytes take the table path of tokenizeASCII.
		if c := src[i]; c < utf8.RuneSelf {
			i++
			switch class[c] {
			case clLetter, clDigit:
				if !in {
					in, start, h, hasDigit, startCont = true, pos, fnvOffset64, false, cont
				}
				// The rest of the word's ASCII bytes in a tight loop, as
				// tokenizeASCII reads them (low: the byte lowered, above
				// lowPunct for a word byte).
				for {
					v := low[c]
					if v <= '9' {
						hasDigit = true
					}
					h = (h ^ uint64(v)) * fnvPrime64
					out = append(out, v)
					if i >= len(src) {
						break
					}
					if c = src[i]; c >= utf8.RuneSelf || low[c] <= lowPunct {
						break
					}
					i++
				}
				wordEnd, endCont = i, cont
				continue
			case clApos:
				if in && n.joinsNext(src[i:]) {
					continue
				}
			case clPunct:
				if in {
					tok.push(Mix64(h), start, wordEnd, len(out), hasDigit, startCont, endCont)
					in = false
				}
				out = append(out, c)
				tok.push(TokenHash(src[pos:i]), pos, i, len(out), false, cont, cont)
				continue
			}
			if in {
				tok.push(Mix64(h), start, wordEnd, len(out), hasDigit, startCont, endCont)
				in = false
			}
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		i += size
		contPos := cont // before this character
		cont += size - 1
		if (r == '\u2010' || r == '\u00ad') && in && n.opt.JoinHyphens {
			// A word hyphenated at a line end goes on; a soft hyphen
			// inside a word is dropped.
			if j := hyphenBreak(src[pos:], upperBefore(src, pos)); j > 0 {
				i = pos + j
				cont = contPos + j - countRunes(src[pos:i])
				continue
			}
			if r == '\u00ad' && n.joinsNext(src[i:]) {
				continue
			}
		}
		if n.opt.FoldQuotes {
			r = foldRune(r)
		}
		cl := n.classify(r)
		switch cl {
		case rWord, rDigit:
			if !in {
				in, start, h, hasDigit, startCont = true, pos, fnvOffset64, false, contPos
			}
			if cl == rDigit {
				hasDigit = true
			}
			enc := appendLower(buf[:0], r)
			for _, c := range enc {
				h = (h ^ uint64(c)) * fnvPrime64
			}
			out = append(out, enc...)
			wordEnd, endCont = i, cont
			continue
		case rApos:
			if in && n.joinsNext(src[i:]) {
				continue
			}
		case rSolo, rPunct:
			if in {
				tok.push(Mix64(h), start, wordEnd, len(out), hasDigit, startCont, endCont)
				in = false
			}
			enc := appendLower(buf[:0], r)
			out = append(out, enc...)
			tok.push(TokenHash(enc), pos, i, len(out), false, contPos, cont)
			continue
		}
		if in {
			tok.push(Mix64(h), start, wordEnd, len(out), hasDigit, startCont, endCont)
			in = false
		}
	}
	if in {
		tok.push(Mix64(h), start, wordEnd, len(out), hasDigit, startCont, endCont)
	}
	tok.Text = out
}

// normalizedNFKC reports whether text, valid UTF-8, is certainly NFKC:
// every code point outside ASCII is inert (inertRune). It reads ASCII
// eight bytes at a time and decodes only the other characters, which on
// English text with typographic quotes is several times cheaper than
// norm's QuickSpan; false means only that QuickSpan must decide.
func (n *Normalizer) normalizedNFKC(text []byte) bool {
	return eachNonASCII(text, func(b []byte) int {
		r, size := utf8.DecodeRune(b)
		if !n.inertRune(r) {
			return 0
		}
		return size
	})
}

// eachNonASCII reports whether ok accepts every character of text outside
// ASCII: ok is given the text from such a character on and returns the
// character's length, or 0 to refuse it. ASCII is read eight bytes at a
// time.
func eachNonASCII(text []byte, ok func(b []byte) int) bool {
	for i := 0; i < len(text); {
		if i+8 <= len(text) {
			v := uint64(text[i]) | uint64(text[i+1])<<8 | uint64(text[i+2])<<16 | uint64(text[i+3])<<24 |
				uint64(text[i+4])<<32 | uint64(text[i+5])<<40 | uint64(text[i+6])<<48 | uint64(text[i+7])<<56
			if v&0x8080808080808080 == 0 {
				i += 8
				continue
			}
		}
		if text[i] < utf8.RuneSelf {
			i++
			continue
		}
		size := ok(text[i:])
		if size == 0 {
			return false
		}
		i += size
	}
	return true
}

// inertRune reports whether r is its own NFKC form (quick check yes), of
// combining class 0, and a boundary before which nothing composes with
// it: each inert code point is a normalization segment of its own, so a
// text of inert code points is NFKC already (what may follow one, such
// as a combining mark after é, is not inert). Answers for the BMP are
// cached; others are not inert.
func (n *Normalizer) inertRune(r rune) bool {
	if r >= 1<<16 || r == utf8.RuneError {
		return false
	}
	if n.known == nil {
		n.known, n.inert = new([1 << 16 / 64]uint64), new([1 << 16 / 64]uint64)
	}
	w, bit := r>>6, uint64(1)<<(r&63)
	if n.known[w]&bit == 0 {
		n.known[w] |= bit
		var buf [utf8.UTFMax]byte
		enc := utf8.AppendRune(buf[:0], r)
		p := norm.NFKC.Properties(enc)
		if p.CCC() == 0 && p.BoundaryBefore() && norm.NFKC.QuickSpan(enc) == len(enc) {
			n.inert[w] |= bit
		}
	}
	return n.inert[w]&bit != 0
}

// joinsNext reports whether the character at the start of rest is a word
// character, so that an apostrophe before it joins two word parts.
func (n *Normalizer) joinsNext(rest []byte) bool {
	if len(rest) == 0 {
		return false
	}
	if c := rest[0]; c < utf8.RuneSelf {
		return isWordClass(n.class[c])
	}
	next, _ := utf8.DecodeRune(rest)
	if n.opt.FoldQuotes {
		next = foldRune(next)
	}
	c := n.classify(next)
	return c == rWord || c == rDigit
}

// appendLower appends the case-folded form of r: lower case, with the final
// sigma and sharp s folded as full case folding does.
func appendLower(dst []byte, r rune) []byte {
	switch r {
	case 'ß', 'ẞ':
		return append(dst, 's', 's')
	case 'ς':
		r = 'σ'
	default:
		r = unicode.ToLower(r)
	}
	return utf8.AppendRune(dst, r)
}

// Quoted ASCII: English text whose only characters outside ASCII are
// typographic quotes and dashes (most real pages and books: the copies of
// the real-text corpus have 0.5 % of such characters, and four documents
// in five at least one). With quotes folded and punctuation not kept,
// each of those characters is an apostrophe or a separator, so the text
// tokenizes like ASCII: tokenizeQuoted reads it at the speed of
// tokenizeASCII, where tokenizeUnicode would decode every byte's class
// and grow its outputs token by token. The characters are NFKC-inert, so
// normalization leaves such a text as it is.
const (
	qNone = iota // not a quoted-ASCII character
	qApos        // folds to an apostrophe
	qSep         // folds to '"' or '-': a separator
)

// quotedRune returns the kind and the length of the UTF-8 sequence at the
// start of b (whose first byte is not ASCII): qNone unless it is one of
// the NFKC-inert typographic quotes and dashes foldRune folds.
func quotedRune(b []byte) (kind, size int) {
	if len(b) >= 2 {
		switch uint16(b[0])<<8 | uint16(b[1]) {
		case 0xC2AB, 0xC2BB: // « »
			return qSep, 2
		case 0xCABC: // ʼ
			return qApos, 2
		}
	}
	if len(b) < 3 || b[0] != 0xE2 {
		return qNone, 0
	}
	switch uint16(b[1])<<8 | uint16(b[2]) {
	case 0x8098, 0x8099, 0x809A, 0x809B, 0x80B2: // ‘ ’ ‚ ‛ ′
		return qApos, 3
	case 0x809C, 0x809D, 0x809E, 0x809F, // “ ” „ ‟
		0x8090, 0x8092, 0x8093, 0x8094, 0x8095, // ‐ ‒ – — ―
		0x8892: // −
		return qSep, 3
	}
	return qNone, 0
}

// quotedASCII reports whether every character of text outside ASCII is
// one quotedRune knows (so text is valid UTF-8). It reads ASCII eight
// bytes at a time.
func quotedASCII(text []byte) bool {
	return eachNonASCII(text, func(b []byte) int {
		_, size := quotedRune(b)
		return size
	})
}

// tokenizeQuoted tokenizes quoted ASCII (quotedASCII) exactly as
// tokenizeUnicode does, with tokenizeASCII's loop: words are ASCII, a
// quoted character ends a word unless it is an apostrophe between two
// word characters or U+2010 HYPHEN at a line end (hyphenBreak), and the
// code point offsets are the byte offsets less the continuation bytes
// before them. A text of n bytes has at most n/2+1 tokens (no punctuation
// tokens) and n bytes of token text, so the outputs are sized once and
// written by index.
func (n *Normalizer) tokenizeQuoted(text []byte, tok *Tokens) {
	maxTok := len(text)/2 + 1
	hashes := slices.Grow(tok.Hash[:0], maxTok)[:maxTok]
	offs := slices.Grow(tok.Off[:0], maxTok)[:maxTok]
	srcEnds := slices.Grow(tok.SrcEnd[:0], maxTok)[:maxTok]
	ends := slices.Grow(tok.End[:0], maxTok)[:maxTok]
	digits := slices.Grow(tok.HasDigit[:0], maxTok)[:maxTok]
	runeOffs := slices.Grow(tok.runeOff[:0], maxTok)[:maxTok]
	runeEnds := slices.Grow(tok.runeEnd[:0], maxTok)[:maxTok]
	out := slices.Grow(tok.Text[:0], len(text))[:len(text)]
	low := &n.low
	join := n.opt.JoinHyphens
	nt, no := 0, 0 // tokens and text bytes written
	cont := 0      // continuation bytes before i
	// Word at a time, as tokenizeASCII: skip separators, then consume a
	// word in a tight inner loop, across the apostrophes that join it.
	for i := 0; i < len(text); {
		c := text[i]
		if low[c] <= lowPunct {
			if c < utf8.RuneSelf {
				i++
			} else {
				_, size := quotedRune(text[i:])
				i += size
				cont += size - 1
			}
			continue
		}
		start, startCont, h, hasDigit := i, cont, uint64(fnvOffset64), false
		for i < len(text) {
			v := low[text[i]]
			if v <= lowPunct {
				// An apostrophe joins the word to a word byte after it
				// ("don't", "don’t" → "dont").
				if v == lowApos {
					if i+1 < len(text) && low[text[i+1]] > lowPunct {
						i++
						continue
					}
				} else if text[i] >= utf8.RuneSelf {
					if k, size := quotedRune(text[i:]); k == qApos && i+size < len(text) && low[text[i+size]] > lowPunct {
						i += size
						cont += size - 1
						continue
					}
				}
				// A word hyphenated at a line end (U+2010) goes on.
				if join && text[i] == 0xE2 {
					if j := hyphenBreak(text[i:], upperBefore(text, i)); j > 0 {
						cont += j - countRunes(text[i:i+j])
						i += j
						continue
					}
				}
				break
			}
			if v <= '9' {
				hasDigit = true
			}
			h = (h ^ uint64(v)) * fnvPrime64
			out[no] = v
			no++
			i++
		}
		hashes[nt], offs[nt], srcEnds[nt], ends[nt], digits[nt] = Mix64(h), uint32(start), uint32(i), uint32(no), hasDigit
		runeOffs[nt], runeEnds[nt] = uint32(start-startCont), uint32(i-cont)
		nt++
	}
	tok.Hash, tok.Off, tok.SrcEnd, tok.End, tok.HasDigit, tok.Text = hashes[:nt], offs[:nt], srcEnds[:nt], ends[:nt], digits[:nt], out[:no]
	tok.runeOff, tok.runeEnd, tok.runes = runeOffs[:nt], runeEnds[:nt], true
}
