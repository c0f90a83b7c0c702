package sketch

import (
	"slices"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// CodePoints returns the offsets of every token of tok in text, the input
// of the Tokenize call that produced tok, counted in Unicode code points of
// the text as received: starts[i] is where token i begins and ends[i]
// where it ends (exclusive). Invalid UTF-8 counts one code point per byte,
// as it was decoded (Windows-1252). When normalization changed the text,
// a token maps to the normalization segments of the input it came from.
// starts and ends are reused.
func (n *Normalizer) CodePoints(text []byte, tok *Tokens, starts, ends []uint32) ([]uint32, []uint32) {
	return n.codePoints(text, tok, tok.Len(), starts, ends)
}

// codePoints is [Normalizer.CodePoints] for the first limit tokens only:
// its work and memory grow with the text those tokens span, not with the
// whole text (the passage lane of a long document maps only its first
// [MaxPassageTokens]).
func (n *Normalizer) codePoints(text []byte, tok *Tokens, limit int, starts, ends []uint32) ([]uint32, []uint32) {
	limit = min(limit, tok.Len())
	if tok.runes && !tok.normalized && len(tok.runeOff) == tok.Len() {
		// Counted by the tokenizer in the text it read, which is the
		// text as received (or its Windows-1252 decoding).
		return append(starts[:0], tok.runeOff[:limit]...), append(ends[:0], tok.runeEnd[:limit]...)
	}
	starts = append(starts[:0], tok.Off[:limit]...)
	ends = append(ends[:0], tok.SrcEnd[:limit]...)
	pre := text // what normalization read
	if tok.decoded {
		pre = n.decoded
	}
	if tok.normalized {
		n.unnormalize(pre, starts, ends, limit < tok.Len())
	}
	if tok.decoded || !isASCII(pre) {
		if !runeOffsetsPairs(pre, starts, ends) {
			runeOffsets(pre, starts)
			runeOffsets(pre, ends)
		}
	}
	return starts, ends
}

// runeOffsetsPairs is runeOffsets of starts and of ends in one pass over
// b, for the usual case: b is valid UTF-8 (the text normalization read),
// every offset is at a code point's first byte (or the end of b), and
// starts[0] ≤ ends[0] ≤ starts[1] ≤ ends[1] ≤ …, so that code points are
// counted once, as the bytes that do not continue one. It changes nothing
// and returns false when the offsets are not so.
func runeOffsetsPairs(b []byte, starts, ends []uint32) bool {
	if len(starts) != len(ends) {
		return false
	}
	prev := uint32(0)
	for i, s := range starts {
		e := ends[i]
		if s < prev || e < s || int(e) > len(b) || !runeStartAt(b, s) || !runeStartAt(b, e) {
			return false
		}
		prev = e
	}
	pos, runes := 0, 0
	for i, s := range starts {
		runes += countRunes(b[pos:s])
		starts[i] = uint32(runes)
		e := ends[i]
		runes += countRunes(b[s:e])
		ends[i] = uint32(runes)
		pos = int(e)
	}
	return true
}

// runeStartAt reports whether offset o of b is at a code point's first
// byte or at the end of b.
func runeStartAt(b []byte, o uint32) bool {
	return int(o) == len(b) || b[o]&0xC0 != 0x80
}

// countRunes counts the code points of valid UTF-8: the bytes that do not
// continue a sequence.
func countRunes(b []byte) int {
	n := len(b)
	for _, c := range b {
		if c&0xC0 == 0x80 {
			n--
		}
	}
	return n
}

// runeOffsets turns byte offsets of b, non-decreasing, into code point
// offsets in place.
func runeOffsets(b []byte, offs []uint32) {
	pos, runes := 0, 0
	for i, o := range offs {
		o := min(int(o), len(b))
		if o < pos { // not monotone: count again from the start
			pos, runes = 0, 0
		}
		runes += utf8.RuneCount(b[pos:o])
		pos = o
		offs[i] = uint32(runes)
	}
}

// normSegment maps a piece of normalized text to the input bytes it came
// from: normalized bytes [norm, nextNorm) come from input [lo, hi).
// Offsets are uint32, as in [Tokens]: 12 bytes a segment.
type normSegment struct{ norm, lo, hi uint32 }

// unnormalize maps offsets in the normalized text back to byte offsets of
// pre, the text before normalization, by normalizing pre one segment at a
// time: a start maps to its segment's first input byte, an end to its
// segment's last. When the segments do not rebuild the normalized text
// exactly (a composition across a segment boundary), it falls back to
// scaling the offsets by the lengths.
//
// With prefix, the offsets cover only the start of the text: pre is
// normalized only as far as the largest offset, so that memory (one
// segment per code point or so) stays bounded for a long document, and
// the segments must rebuild that part of the normalized text byte for
// byte.
func (n *Normalizer) unnormalize(pre []byte, starts, ends []uint32, prefix bool) {
	stop := len(n.normed) + 1 // normalized bytes to cover
	if prefix {
		stop = 0
		for _, o := range ends {
			stop = max(stop, int(o))
		}
		for _, o := range starts {
			stop = max(stop, int(o)+1)
		}
	}
	var segs []normSegment
	total := 0
	var it norm.Iter
	form := norm.NFKC
	if n.strip != nil {
		form = norm.NFKD
	}
	it.Init(form, pre)
	var buf []byte
	for !it.Done() {
		lo := it.Pos()
		seg := it.Next()
		if n.strip != nil {
			buf = buf[:0]
			for _, r := range string(seg) {
				if !unicode.Is(unicode.Mn, r) {
					buf = utf8.AppendRune(buf, r)
				}
			}
			seg = norm.NFC.Bytes(buf)
		}
		segs = append(segs, normSegment{norm: uint32(total), lo: uint32(lo), hi: uint32(it.Pos())})
		if prefix && (total+len(seg) > len(n.normed) || string(seg) != string(n.normed[total:total+len(seg)])) {
			total = -1 // not the normalized text: scale
			break
		}
		total += len(seg)
		if total >= stop {
			break
		}
	}
	if (!prefix && total != len(n.normed)) || total < 0 || len(segs) == 0 {
		scale := func(offs []uint32) {
			for i, o := range offs {
				offs[i] = uint32(int64(o) * int64(len(pre)) / int64(max(len(n.normed), 1)))
			}
		}
		scale(starts)
		scale(ends)
		return
	}
	find := func(o int) int { // the segment holding normalized byte o
		i, found := slices.BinarySearchFunc(segs, o, func(s normSegment, o int) int { return int(s.norm) - o })
		if !found {
			i--
		}
		return max(i, 0)
	}
	for i, o := range starts {
		starts[i] = segs[find(int(o))].lo
	}
	for i, o := range ends {
		if o == 0 {
			continue
		}
		ends[i] = segs[find(int(o)-1)].hi
	}
}
