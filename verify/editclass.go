package verify

import (
	"bytes"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// EditClass names the kind of edit between two near-duplicate sentences,
// the edit field of a sentence event. The classes follow the similar
// sentence types of the Wikipedia study (Ayhan, Bradley, Weissman):
// identical sentences, direct copying with copy editing, and direct
// copying with factual drift, where a number or a date changed.
type EditClass string

const (
	// EditIdentical: the two texts are the same bytes.
	EditIdentical EditClass = "identical"
	// EditCopy: the texts differ only in case, punctuation, white space,
	// accents, or spelling-level edits inside words ("colour"/"color",
	// "recieve"/"receive", "any one"/"anyone").
	EditCopy EditClass = "copy_edit"
	// EditNumberOrDate: beyond copy edits, the only differences are
	// numbers, dates (month and weekday names, years, days, ordinals) or
	// units and quantities: the study's factual drift.
	EditNumberOrDate EditClass = "number_or_date_changed"
	// EditReworded: anything else; words were added, removed, reordered
	// or replaced.
	EditReworded EditClass = "reworded"
)

// ClassifyEdit returns the kind of edit that turns a into b; see
// [EditClassifier.Classify]. It allocates its buffers on every call; use
// an [EditClassifier] in loops.
func ClassifyEdit(a, b []byte) EditClass {
	var c EditClassifier
	return c.Classify(a, b)
}

// EditClassifier classifies the edit between two sentences with reusable
// buffers: after warm-up it allocates nothing. The zero value is ready to
// use. An EditClassifier is not safe for concurrent use.
type EditClassifier struct {
	wa, wb []word
	keys   []byte // folded keys of wa and wb
	lcs    []int32
	ra, rb []rune
	rest   [2][]byte
	osa    [3][]int32
}

// maxAlignCells bounds the word-alignment table: texts whose differing
// middles (after their common first and last words) exceed 2^20 word
// pairs, about 1,000 words each, are not sentences and are reworded.
const maxAlignCells = 1 << 20

// maxSpelling is the longest run of differing text, in code points, that
// can still be a spelling-level edit.
const maxSpelling = 64

// Classify returns the kind of edit that turns a into b. It is symmetric,
// Classify(a, b) == Classify(b, a), and works on words, not characters:
//
//  1. Equal bytes are [EditIdentical].
//  2. Both texts are cut into words: runs of letters (joined across an
//     apostrophe: "don't"), numbers (digits with inner . , : /, an
//     optional sign: "-3.5", "1,000"), single CJK characters, and single
//     unit symbols (currency, %, ‰, °). Other punctuation and white space
//     only separate words. A word is compared by its folded key: lower
//     case, without accents or apostrophes, thousands separators dropped,
//     month abbreviations spelled out ("Jan" → "january").
//  3. The two word sequences are aligned by a longest common subsequence.
//     Each run of unaligned words between aligned ones (a hunk) is then
//     - a copy edit if it holds no number and its words, concatenated,
//     are within spelling distance (below);
//     - a number or date change if, once its factual words are set aside,
//     nothing is left on either side or what is left is within spelling
//     distance. Factual words are numbers, unit symbols, English month
//     and weekday names (capitalized), number words and ordinals
//     ("twenty", "first"), eras (AD, BC), units and time spans ("km",
//     "miles", "percent", "years"), and letters stuck to a number or a
//     unit symbol ("21st", "1880s", "5km", "°C");
//     - reworded otherwise.
//  4. The class is that of the worst hunk, in the order copy edit <
//     number or date < reworded; with no hunk (all differences are in
//     case, punctuation, white space or accents) it is a copy edit.
//
// Precedence: a number or date change alongside copy edits (elsewhere in
// the sentence, or in the same hunk: "colour in 1879" / "color in 1880")
// is [EditNumberOrDate], because factual drift matters more than style,
// the reason the study keeps the two apart; any reworded hunk makes the
// whole [EditReworded], since then numbers are not the only change.
//
// Spelling distance: the optimal string alignment distance (Levenshtein
// plus adjacent transpositions, so "recieve" is one edit from "receive")
// between the folded texts is at most ⌊L/4⌋ for the longer length L in
// code points, and for L < 6 the lengths must be equal: "grey"/"gray" is
// a copy edit, "cat"/"bat", "one"/"none" and "dog"/"dogs" are reworded.
// Runs over 64 code points are never spelling edits.
//
// The lists of factual words are English; numbers and unit symbols are
// recognized in every script.
func (c *EditClassifier) Classify(a, b []byte) EditClass {
	if bytes.Equal(a, b) {
		return EditIdentical
	}
	if bytes.Compare(a, b) > 0 {
		// One order for both calls: the alignment, and so the hunks, can
		// depend on which text comes first.
		a, b = b, a
	}
	c.keys = c.keys[:0]
	c.wa = c.words(c.wa[:0], a)
	c.wb = c.words(c.wb[:0], b)
	wa, wb := c.wa, c.wb
	for len(wa) > 0 && len(wb) > 0 && c.same(wa[0], wb[0]) {
		wa, wb = wa[1:], wb[1:]
	}
	for len(wa) > 0 && len(wb) > 0 && c.same(wa[len(wa)-1], wb[len(wb)-1]) {
		wa, wb = wa[:len(wa)-1], wb[:len(wb)-1]
	}
	if len(wa) == 0 && len(wb) == 0 {
		return EditCopy
	}
	n, m := len(wa), len(wb)
	if int64(n+1)*int64(m+1) > maxAlignCells {
		return EditReworded
	}
	// lcs[i*(m+1)+j] is the LCS length of wa[i:] and wb[j:].
	w := m + 1
	c.lcs = growInt32(c.lcs, (n+1)*w)
	l := c.lcs
	for j := 0; j <= m; j++ {
		l[n*w+j] = 0
	}
	for i := n - 1; i >= 0; i-- {
		l[i*w+m] = 0
		for j := m - 1; j >= 0; j-- {
			switch {
			case c.same(wa[i], wb[j]):
				l[i*w+j] = l[(i+1)*w+j+1] + 1
			case l[(i+1)*w+j] >= l[i*w+j+1]:
				l[i*w+j] = l[(i+1)*w+j]
			default:
				l[i*w+j] = l[i*w+j+1]
			}
		}
	}
	worst := EditCopy
	i, j, i0, j0 := 0, 0, 0, 0
	for i < n || j < m {
		if i < n && j < m && c.same(wa[i], wb[j]) {
			if i > i0 || j > j0 {
				worst = worse(worst, c.hunk(wa[i0:i], wb[j0:j]))
			}
			i, j = i+1, j+1
			i0, j0 = i, j
			continue
		}
		if j == m || (i < n && l[(i+1)*w+j] >= l[i*w+j+1]) {
			i++
		} else {
			j++
		}
		if worst == EditReworded {
			return worst
		}
	}
	if i > i0 || j > j0 {
		worst = worse(worst, c.hunk(wa[i0:], wb[j0:]))
	}
	return worst
}

// worse returns the more severe of two classes.
func worse(x, y EditClass) EditClass {
	rank := func(e EditClass) int {
		switch e {
		case EditCopy:
			return 1
		case EditNumberOrDate:
			return 2
		case EditReworded:
			return 3
		}
		return 0
	}
	if rank(y) > rank(x) {
		return y
	}
	return x
}

// hunk classifies a run of unaligned words: da from the first text, db
// from the second.
func (c *EditClassifier) hunk(da, db []word) EditClass {
	digits := false
	for _, w := range da {
		digits = digits || w.kind == kindNumber
	}
	for _, w := range db {
		digits = digits || w.kind == kindNumber
	}
	if !digits && c.spelling(c.concat(0, da, false), c.concat(1, db, false)) {
		return EditCopy
	}
	factual := false
	for _, w := range da {
		factual = factual || w.kind != kindWord
	}
	for _, w := range db {
		factual = factual || w.kind != kindWord
	}
	if !factual {
		return EditReworded
	}
	ra, rb := c.concat(0, da, true), c.concat(1, db, true)
	if (len(ra) == 0 && len(rb) == 0) || c.spelling(ra, rb) {
		return EditNumberOrDate
	}
	return EditReworded
}

// concat joins the keys of ws into c.rest[side], without factual words
// when plain is set.
func (c *EditClassifier) concat(side int, ws []word, plain bool) []byte {
	out := c.rest[side][:0]
	for _, w := range ws {
		if !plain || w.kind == kindWord {
			out = append(out, c.key(w)...)
		}
	}
	c.rest[side] = out
	return out
}

// spelling reports whether x and y are within spelling distance (see
// Classify).
func (c *EditClassifier) spelling(x, y []byte) bool {
	c.ra = decodeRunes(c.ra[:0], x)
	c.rb = decodeRunes(c.rb[:0], y)
	l := max(len(c.ra), len(c.rb))
	if l > maxSpelling {
		return false
	}
	k := l / 4
	if l < 6 && len(c.ra) != len(c.rb) {
		k = 0
	}
	return c.osaAtMost(c.ra, c.rb, k) <= k
}

// osaAtMost returns the optimal string alignment distance between a and
// b (Levenshtein distance with transpositions of adjacent symbols) if it
// is at most k, or k+1.
func (c *EditClassifier) osaAtMost(a, b []rune, k int) int {
	if abs(len(a)-len(b)) > k {
		return k + 1
	}
	n := len(b) + 1
	for i := range c.osa {
		c.osa[i] = growInt32(c.osa[i], n)
	}
	pp, p, cur := c.osa[0], c.osa[1], c.osa[2] // rows i−2, i−1, i
	for j := range p {
		p[j] = int32(j)
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = int32(i)
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := int32(1)
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(p[j]+1, cur[j-1]+1, p[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, pp[j-2]+1)
			}
			cur[j] = d
			rowMin = min(rowMin, d)
		}
		// A transposition reaches back two rows, so stop only when both
		// rows are past k.
		if rowMin > int32(k) && i > 1 && minInt32(p) > int32(k) {
			return k + 1
		}
		pp, p, cur = p, cur, pp
	}
	return min(int(p[len(b)]), k+1)
}

func minInt32(s []int32) int32 {
	m := s[0]
	for _, v := range s[1:] {
		m = min(m, v)
	}
	return m
}

func growInt32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

// word is one word of a text: its folded key is keys[lo:hi].
type word struct {
	lo, hi int32
	kind   wordKind
}

type wordKind uint8

const (
	kindWord    wordKind = iota
	kindNumber           // contains a digit
	kindFactual          // a date, number or unit word, or a unit symbol
)

func (c *EditClassifier) key(w word) []byte { return c.keys[w.lo:w.hi] }

func (c *EditClassifier) same(x, y word) bool {
	return bytes.Equal(c.key(x), c.key(y))
}

// words appends the words of s to dst, their keys to c.keys.
func (c *EditClassifier) words(dst []word, s []byte) []word {
	prevEnd := -1     // byte after the last number or unit symbol
	prevWord := false // the rune before i is a letter or digit
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRune(s[i:])
		invalid := r == utf8.RuneError && size == 1
		switch {
		case isApostrophe(r): // outside a word: a quote (U+02BC is a letter)
			i += size
			prevWord = false
		case invalid || isLetter(r):
			if !invalid && isSolo(r) {
				lo := len(c.keys)
				c.keys = utf8.AppendRune(c.keys, r)
				dst = append(dst, word{lo: int32(lo), hi: int32(len(c.keys)), kind: kindWord})
				i += size
				prevWord = true
				continue
			}
			start, lo := i, len(c.keys)
			var upper bool
			i, upper = c.letters(s, i)
			kind, canon := factualWord(c.keys[lo:], upper)
			if canon != "" {
				c.keys = append(c.keys[:lo], canon...)
			}
			w := word{lo: int32(lo), hi: int32(len(c.keys))}
			if start == prevEnd && utf8.RuneCount(s[start:i]) <= 3 {
				kind = kindFactual // "21st", "1880s", "5km", "°C"
			}
			w.kind = kind
			dst = append(dst, w)
			prevWord = true
		case isDigit(r) || (isSign(r) && !prevWord && i+size < len(s) && startsDigit(s[i+size:])):
			lo := len(c.keys)
			i = c.number(s, i)
			dst = append(dst, word{lo: int32(lo), hi: int32(len(c.keys)), kind: kindNumber})
			prevEnd, prevWord = i, true
		case isUnitSymbol(r):
			lo := len(c.keys)
			c.keys = utf8.AppendRune(c.keys, r)
			dst = append(dst, word{lo: int32(lo), hi: int32(len(c.keys)), kind: kindFactual})
			i += size
			prevEnd, prevWord = i, false
		default:
			i += size
			prevWord = false
		}
	}
	return dst
}

// letters reads a run of letters from s[i:] into c.keys, folded, and
// returns where it ends and whether it starts upper-case. An apostrophe
// between two letters joins them and is dropped.
func (c *EditClassifier) letters(s []byte, i int) (int, bool) {
	upper := false
	for first := true; i < len(s); first = false {
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			c.keys = append(c.keys, s[i]) // an invalid byte stands for itself
			i++
			continue
		}
		if isApostrophe(r) {
			if next, _ := utf8.DecodeRune(s[i+size:]); i+size < len(s) && isLetter(next) && !isSolo(next) {
				i += size
				continue
			}
			break
		}
		if !isLetter(r) || isSolo(r) {
			break
		}
		if first {
			upper = unicode.IsUpper(r) || unicode.IsTitle(r)
		}
		c.appendFolded(r)
		i += size
	}
	return i, upper
}

// appendFolded appends r to c.keys lower-cased and without accents: the
// compatibility decomposition of r without its combining marks, with the
// German sharp s and the final sigma folded as full case folding does.
func (c *EditClassifier) appendFolded(r rune) {
	switch {
	case r < utf8.RuneSelf:
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		c.keys = append(c.keys, byte(r))
		return
	case r == 'ß' || r == 'ẞ':
		c.keys = append(c.keys, 's', 's')
		return
	case r == 'ς':
		r = 'σ'
	}
	var enc [utf8.UTFMax]byte
	n := utf8.EncodeRune(enc[:], r)
	// Decomposition is a slice of x/text's tables, nil when r has none
	// (or decomposes algorithmically, as Hangul syllables do).
	dec := norm.NFKD.Properties(enc[:n]).Decomposition()
	if dec == nil {
		dec = enc[:n]
	}
	for _, d := range string(dec) {
		if !unicode.Is(unicode.Mn, d) {
			c.keys = utf8.AppendRune(c.keys, unicode.ToLower(d))
		}
	}
}

// number reads a number from s[i:] into c.keys and returns where it ends:
// an optional sign, digits, and . , : / between digits. A comma followed
// by exactly three digits is a thousands separator and is dropped.
func (c *EditClassifier) number(s []byte, i int) int {
	if r, size := utf8.DecodeRune(s[i:]); isSign(r) {
		if r == '+' {
			c.keys = append(c.keys, '+')
		} else {
			c.keys = append(c.keys, '-')
		}
		i += size
	}
	for i < len(s) {
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case isDigit(r):
			c.appendFolded(r) // fullwidth "１" is "1"
			i += size
			continue
		case (r == '.' || r == ',' || r == ':' || r == '/') && i+1 < len(s) && startsDigit(s[i+1:]):
			if r != ',' || !thousands(s[i+1:]) {
				c.keys = append(c.keys, byte(r))
			}
			i++
			continue
		}
		break
	}
	return i
}

// thousands reports whether s starts with exactly three digits.
func thousands(s []byte) bool {
	n := 0
	for _, r := range string(s) {
		if !isDigit(r) {
			break
		}
		n++
		if n > 3 {
			return false
		}
	}
	return n == 3
}

func startsDigit(s []byte) bool {
	r, _ := utf8.DecodeRune(s)
	return isDigit(r)
}

func isDigit(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9'
	}
	return unicode.IsDigit(r)
}

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r) || unicode.IsMark(r) || (unicode.IsNumber(r) && !unicode.IsDigit(r))
}

func isSign(r rune) bool { return r == '-' || r == '+' || r == '−' }

func isApostrophe(r rune) bool {
	return r == '\'' || r == '’' || r == 'ʼ' || r == '‘'
}

func isUnitSymbol(r rune) bool {
	switch r {
	case '%', '‰', '‱', '°', '℃', '℉', '′', '″':
		return true
	}
	return r >= utf8.RuneSelf && unicode.Is(unicode.Sc, r) || r == '$'
}

// solo holds the scripts written without spaces between words, where
// each character is a word of its own (as the tokenizer of package sketch
// treats them).
var solo = []*unicode.RangeTable{unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar}

func isSolo(r rune) bool { return r >= 0x0e00 && unicode.In(r, solo...) }

// factualWord returns the kind of the folded word w and, for a month
// abbreviation, the full name to compare it by (case-independent, so that
// only the kind depends on upper). Month and weekday names and eras are
// factual only when capitalized ("May" but not "may").
func factualWord(w []byte, upper bool) (wordKind, string) {
	switch string(w) {
	case "jan":
		return capitalized(upper), "january"
	case "feb":
		return capitalized(upper), "february"
	case "mar":
		return capitalized(upper), "march"
	case "apr":
		return capitalized(upper), "april"
	case "jun":
		return capitalized(upper), "june"
	case "jul":
		return capitalized(upper), "july"
	case "aug":
		return capitalized(upper), "august"
	case "sep", "sept":
		return capitalized(upper), "september"
	case "oct":
		return capitalized(upper), "october"
	case "nov":
		return capitalized(upper), "november"
	case "dec":
		return capitalized(upper), "december"
	case "january", "february", "march", "april", "may", "june", "july",
		"august", "september", "october", "november", "december",
		"monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
		"sunday", "ad", "bc", "bce", "ce":
		return capitalized(upper), ""
	case
		// Number words and ordinals.
		"zero", "one", "two", "three", "four", "five", "six", "seven",
		"eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen",
		"fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
		"thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
		"hundred", "hundreds", "thousand", "thousands", "million", "millions",
		"billion", "billions", "trillion", "dozen", "dozens", "half",
		"quarter", "first", "second", "third", "fourth", "fifth", "sixth",
		"seventh", "eighth", "ninth", "tenth", "eleventh", "twelfth",
		"thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
		"eighteenth", "nineteenth", "twentieth", "thirtieth", "fortieth",
		"fiftieth", "sixtieth", "seventieth", "eightieth", "ninetieth",
		"hundredth", "thousandth", "millionth", "bn",
		// Time spans.
		"seconds", "minute", "minutes", "hour", "hours", "day", "days",
		"week", "weeks", "month", "months", "year", "years", "decade",
		"decades", "century", "centuries", "millennium", "millennia",
		"sec", "min", "h", "hr", "hrs", "yr", "yrs", "pm",
		// Money and ratios.
		"percent", "per", "cent", "cents", "dollar", "dollars", "euro",
		"euros", "pound", "pounds", "yen", "yuan", "rupee", "rupees",
		"franc", "francs", "usd", "eur", "gbp",
		// Length, area, volume, mass.
		"km", "kilometre", "kilometres", "kilometer", "kilometers", "m",
		"metre", "metres", "meter", "meters", "cm", "centimetre",
		"centimetres", "centimeter", "centimeters", "mm", "millimetre",
		"millimetres", "millimeter", "millimeters", "mi", "mile", "miles",
		"ft", "foot", "feet", "inch", "inches", "yd", "yard", "yards",
		"ha", "hectare", "hectares", "acre", "acres", "sq", "l", "litre",
		"litres", "liter", "liters", "ml", "gallon", "gallons", "pint",
		"pints", "kg", "kilogram", "kilograms", "kilo", "kilos", "g", "gram",
		"grams", "mg", "lb", "lbs", "oz", "ounce", "ounces", "ton", "tons",
		"tonne", "tonnes",
		// Speed, temperature, energy, data.
		"mph", "kph", "kmh", "degree", "degrees", "celsius", "fahrenheit",
		"kelvin", "w", "kw", "mw", "gw", "watt", "watts", "kilowatt",
		"kilowatts", "megawatt", "megawatts", "v", "volt", "volts", "hz",
		"khz", "mhz", "ghz", "kb", "mb", "gb", "tb":
		return kindFactual, ""
	}
	return kindWord, ""
}

func capitalized(upper bool) wordKind {
	if upper {
		return kindFactual
	}
	return kindWord
}
