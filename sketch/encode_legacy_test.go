package sketch

import "encoding/binary"

// appendPassageV3 appends the passage section of version 3: the
// fingerprints and anchors as in version 2 (Passage.appendPassage), then
// the token offsets as 4-bit codes, two per byte (the first in the low
// half), padded to a whole byte:
//
//	varint tokens; per token, its gap g from the previous token's end and
//	its length l, in code points: the code l when g = 1 and 1 ≤ l ≤ 14
//	(four tokens in five on English text), 15 then l when g = 2 and
//	1 ≤ l ≤ 15 (a word after a comma or a full stop), else 0 then g and
//	l as nibble varints (3 bits a code, the high bit set when more follow,
//	least significant first)
//
// About 5 bits per token on real text (Gutenberg: 81 % of the tokens in
// one code, 13 % in two), against 8 in version 2: a 5 KB page stores
// about 300 bytes less.
func appendPassageV3(dst []byte, p *Passage) []byte {
	return appendOffsets(p.appendFingerprints(dst), p)
}

// appendOffsets appends the token offsets of versions 3 and 4 (see
// appendPassageV3).
func appendOffsets(dst []byte, p *Passage) []byte {
	return appendNibbleOffsets(binary.AppendUvarint(dst, uint64(len(p.Starts))), p)
}

// appendPassageV4 appends the passage section of version 4: the
// fingerprints four bits a position (Passage.appendFp), then the anchors
// as a bit stream, then the token offsets (appendOffsetsV4):
//
//	varint anchors; when there are any, byte k, then per anchor
//	StoredBits bits of its hash (StoredHash) and the Rice code (k) of its
//	position's gap from the previous anchor's (the first from 0); padded
//	to a whole byte
//
// About 26 bits an anchor at the default window (gaps of ~18 positions),
// against 40 in version 3.
func appendPassageV4(dst []byte, p *Passage) []byte {
	return appendAnchorsV4(p.appendFp(dst), p)
}

// appendFingerprints appends the fingerprints and anchors of the passage
// section, the same in versions 2 and 3 (see appendPassage).
func (p *Passage) appendFingerprints(dst []byte) []byte {
	dst = p.appendFp(dst)
	dst = binary.AppendUvarint(dst, uint64(len(p.Anchors)))
	var prev uint32
	for _, a := range p.Anchors {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(a.Hash>>32))
		dst = binary.AppendUvarint(dst, uint64(a.Pos-prev))
		prev = a.Pos
	}
	return dst
}

// appendFp appends the fingerprints: varint n positions, ⌈n/2⌉ bytes of
// 4-bit fingerprints, two per byte (the even position in the low half).
func (p *Passage) appendFp(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(p.Fp)))
	for i := 0; i < len(p.Fp); i += 2 {
		b := p.Fp[i] & 0xF
		if i+1 < len(p.Fp) {
			b |= p.Fp[i+1] << 4
		}
		dst = append(dst, b)
	}
	return dst
}

// appendPassage appends the passage section:
//
//	varint n positions; ⌈n/2⌉ bytes of 4-bit fingerprints, two per byte
//	(the even position in the low half)
//	varint anchors; per anchor 4 bytes top 32 bits of the hash
//	(little-endian) and a varint position delta
//	varint tokens; per token, in code points, its gap g from the previous
//	token's end and its length l: one byte g<<4 | l when g < 8 and
//	1 ≤ l ≤ 15 (most words), else the byte 0x80 and two varints g, l
func (p *Passage) appendPassage(dst []byte) []byte {
	dst = p.appendFingerprints(dst)
	dst = binary.AppendUvarint(dst, uint64(len(p.Starts)))
	var end uint32
	for i, s := range p.Starts {
		g, l := s-end, p.Ends[i]-s
		if g < 8 && l >= 1 && l <= 15 {
			dst = append(dst, byte(g<<4|l))
		} else {
			dst = append(dst, 0x80)
			dst = binary.AppendUvarint(dst, uint64(g))
			dst = binary.AppendUvarint(dst, uint64(l))
		}
		end = p.Ends[i]
	}
	return dst
}
