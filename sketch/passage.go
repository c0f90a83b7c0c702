package sketch

import (
	"encoding/binary"
	"slices"
)

// Passage is what passage alignment reads of a document (word shingles
// with [Config.PassageWords] > 0): a 4-bit fingerprint of every shingle
// position, the winnowing anchors, and where each token lies in the text
// as received, so that aligned shingle ranges become character ranges.
//
// It covers the first [MaxPassageTokens] tokens of a document.
type Passage struct {
	// Fp holds, per shingle position in document order, the top
	// [PassageFpBits] bits of the shingle hash (in the low bits of the
	// byte): the top three of the four bits versions 2 to 4 of the
	// storage encoding stored, so that their records decode to the same
	// values.
	Fp []byte
	// Anchors are the positions robust winnowing selects ([Winnow]), with
	// their shingle hash: all 64 bits in fresh features, the top 32 bits
	// (in the low half) in decoded ones, as for Shingles.
	Anchors []Anchor
	// Starts and Ends are each token's range [Starts[i], Ends[i]) in
	// Unicode code points of the text as received ([Normalizer.CodePoints]).
	Starts, Ends []uint32
}

// PassageFpBits is the width of the per-position fingerprints (the
// aligner, verify.FpBits, compares as many). Three bits, with the aligner
// asking one more matching position to resume a run after a gap, align
// PAN 2013 as four did with one position less (neardup eval: plagdet
// 0.923 against 0.924) for 3/4 of the section's bytes.
const PassageFpBits = 3

// MaxPassageTokens bounds the tokens a passage section covers: fingerprints,
// anchors and offsets of a longer document stop there (about 1.1 bytes per
// token are stored).
const MaxPassageTokens = 1 << 17

// MaxAnchors bounds the anchors of one document. At the default window a
// document of about 19,000 words has this many; a longer one is winnowed
// with a wider window (see [PassageWindow]), which keeps the guarantee for
// passages of proportionally more words.
const MaxAnchors = 1024

// PassageWindow returns the winnowing window for n shingle positions so
// that the expected anchor count 2n/(w+1) stays within [MaxAnchors]: the
// window [WinnowWindow](t, k) for passages of t words, widened for long
// documents. Any two documents share an anchor in every common run of at
// least the larger of their two windows (the minimum of the run is
// selected by both).
func PassageWindow(n, t, k int) int {
	w := WinnowWindow(t, k)
	if need := (2*n + MaxAnchors - 1) / MaxAnchors; need-1 > w {
		w = need - 1
	}
	return w
}

// fingerprint is the per-position fingerprint of a shingle hash: its top
// PassageFpBits bits.
func fingerprint(h uint64) byte { return byte(h >> (64 - PassageFpBits)) }

// fpMask keeps the bits of a fingerprint.
const fpMask = 1<<PassageFpBits - 1

// passage fills f.Passage for the last tokenized text (word shingles).
func (s *Sketcher) passage(text []byte, f *Features) {
	p := &f.Passage
	p.Fp, p.Anchors = p.Fp[:0], p.Anchors[:0]
	p.Starts, p.Ends = p.Starts[:0], p.Ends[:0]
	toks := s.tok.Hash
	if len(toks) > MaxPassageTokens {
		toks = toks[:MaxPassageTokens]
	}
	s.seq = wordShingles(s.seq[:0], toks, s.cfg.Shingle, s.powW)
	for _, h := range s.seq {
		p.Fp = append(p.Fp, fingerprint(h))
	}
	w := PassageWindow(len(s.seq), s.cfg.PassageWords, s.cfg.Shingle)
	for {
		p.Anchors = Winnow(p.Anchors[:0], s.seq, w)
		if len(p.Anchors) <= MaxAnchors {
			break
		}
		w = w*len(p.Anchors)/MaxAnchors + 1
	}
	p.Starts, p.Ends = s.norm.codePoints(text, &s.tok, len(toks), p.Starts, p.Ends)
}

// decodeFp reads what appendFp writes and returns the positions, each
// cut to the bits version 5 keeps.
func (p *Passage) decodeFp(d *decoder) int {
	n := int(d.uvarint(uint64(2 * d.remaining())))
	packed := d.bytes((n + 1) / 2)
	d.section(&d.sizes.Fingerprints)
	// Counts are bounded by the bytes left, so growing once is safe.
	p.Fp = slices.Grow(p.Fp[:0], n)
	if packed != nil {
		// Versions 2 to 4 stored four bits; the top three are what
		// version 5 keeps (fingerprint).
		for i := range n {
			p.Fp = append(p.Fp, packed[i/2]>>(4*(i%2))&0xF>>(4-PassageFpBits))
		}
	}
	return n
}

// appendFp3 appends the fingerprints of version 5: varint n positions,
// then ⌈3n/8⌉ bytes: each group of eight positions is three bytes, a
// 24-bit little-endian word holding position i's fingerprint in bits
// 3i … 3i+2; the last group's missing positions are zero bits, and only
// its whole bytes are written.
func (p *Passage) appendFp3(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(p.Fp)))
	fp := p.Fp
	for len(fp) > 0 {
		var w uint32
		n := min(len(fp), 8)
		for i, c := range fp[:n] {
			w |= uint32(c&fpMask) << (3 * i)
		}
		b := [3]byte{byte(w), byte(w >> 8), byte(w >> 16)}
		dst = append(dst, b[:(3*n+7)/8]...)
		fp = fp[n:]
	}
	return dst
}

// decodeFp3 reads what appendFp3 writes and returns the positions.
func (p *Passage) decodeFp3(d *decoder) int {
	n := int(d.uvarint(uint64(8*d.remaining()) / 3))
	packed := d.bytes((3*n + 7) / 8)
	d.section(&d.sizes.Fingerprints)
	p.Fp = slices.Grow(p.Fp[:0], n) // n is bounded by the bytes left
	if packed == nil {
		return n
	}
	// Whole groups of eight positions (three bytes) first, unrolled.
	full := n / 8
	fp := p.Fp[:8*full]
	for i := range full {
		g := packed[3*i : 3*i+3]
		w := uint32(g[0]) | uint32(g[1])<<8 | uint32(g[2])<<16
		o := fp[8*i : 8*i+8]
		o[0], o[1], o[2], o[3] = byte(w)&fpMask, byte(w>>3)&fpMask, byte(w>>6)&fpMask, byte(w>>9)&fpMask
		o[4], o[5], o[6], o[7] = byte(w>>12)&fpMask, byte(w>>15)&fpMask, byte(w>>18)&fpMask, byte(w>>21)&fpMask
	}
	p.Fp = fp
	for i := 8 * full; i < n; i += 8 {
		g := packed[3*i/8:]
		w := uint32(g[0])
		if len(g) > 1 {
			w |= uint32(g[1]) << 8
		}
		if len(g) > 2 {
			w |= uint32(g[2]) << 16
		}
		m := min(n-i, 8)
		for j := range m {
			p.Fp = append(p.Fp, byte(w>>(3*j))&fpMask)
		}
		if m < 8 && w>>(3*m) != 0 {
			d.fail("nonzero fingerprint padding")
			return n
		}
	}
	return n
}

// decodeFingerprints reads what appendFingerprints writes; false when an
// anchor is bad (d has failed).
func (p *Passage) decodeFingerprints(d *decoder) bool {
	n := p.decodeFp(d)
	na := int(d.uvarint(uint64(d.remaining() / 5)))
	p.Anchors = slices.Grow(p.Anchors[:0], na)
	var pos uint64
	for range na {
		h := uint64(d.uint32()) & (1<<StoredBits - 1) // what version 4 keeps
		pos += d.uvarint(uint64(n))
		if pos >= uint64(max(n, 1)) {
			d.fail("anchor position past the last shingle")
			return false
		}
		p.Anchors = append(p.Anchors, Anchor{Hash: h, Pos: uint32(pos)})
	}
	d.section(&d.sizes.Anchors)
	return true
}

// decodePassage reads the section appendPassage writes.
func (p *Passage) decodePassage(d *decoder) {
	if !p.decodeFingerprints(d) {
		return
	}
	nt := int(d.uvarint(uint64(d.remaining())))
	p.Starts, p.Ends = slices.Grow(p.Starts[:0], nt), slices.Grow(p.Ends[:0], nt)
	var end uint64
	for range nt {
		var g, l uint64
		switch b := d.byte(); {
		case b < 0x80 && b&15 != 0:
			g, l = uint64(b>>4), uint64(b&15)
		case b == 0x80:
			g, l = d.uvarint(1<<32), d.uvarint(1<<32)
		default:
			d.fail("bad token offset")
			return
		}
		s := end + g
		e := s + l
		if e >= 1<<32 {
			d.fail("token offset overflows 32 bits")
			return
		}
		p.Starts, p.Ends = append(p.Starts, uint32(s)), append(p.Ends, uint32(e))
		end = e
	}
}

// stored writes into dst what decoding p's section gives.
func (p *Passage) stored(dst *Passage) {
	dst.Fp = append(dst.Fp[:0], p.Fp...)
	dst.Anchors = slices.Grow(dst.Anchors[:0], len(p.Anchors))
	for _, a := range p.Anchors {
		dst.Anchors = append(dst.Anchors, Anchor{Hash: StoredHash(a.Hash), Pos: a.Pos})
	}
	dst.Starts = append(dst.Starts[:0], p.Starts...)
	dst.Ends = append(dst.Ends[:0], p.Ends...)
}

// reset empties p, keeping its buffers.
func (p *Passage) reset() {
	p.Fp, p.Anchors, p.Starts, p.Ends = p.Fp[:0], p.Anchors[:0], p.Starts[:0], p.Ends[:0]
}

// Range returns the code-point range [off, off+length) of the shingle
// positions [p0, p1) for shingles of k tokens: from the start of token p0
// to the end of token p1+k−2 (clamped to the tokens held). ok is false
// when the positions lie outside the offsets held.
func (p *Passage) Range(p0, p1, k int) (off, length int, ok bool) {
	last := min(p1+k-2, len(p.Ends)-1)
	if p0 < 0 || p0 >= len(p.Starts) || last < p0 {
		return 0, 0, false
	}
	return int(p.Starts[p0]), int(p.Ends[last] - p.Starts[p0]), true
}
