package sketch

import (
	"encoding/binary"
	"slices"

	"github.com/neardup/neardup/internal/bitstream"
)

// Token offsets in version 4 of the storage encoding take a prefix code:
// a token's gap g from the previous token's end and its length l, in code
// points, are one symbol when 1 ≤ g ≤ 3 and 1 ≤ l ≤ 15 (all but about 1 %
// of the tokens of English text), else an escape symbol followed by g and
// l as nibble varints (3 bits a group, the high bit set when more follow,
// least significant first). The code is fixed, canonical, and at most 12
// bits a symbol; its lengths come from the distribution of (gap, length)
// over the real-text corpus of bench/corpus and the PAN 2013 sources,
// weighted equally and smoothed so that every symbol has a code. It costs
// about 4.0 bits a token on both (version 3's 4-bit codes: 4.8 on the
// first); a text it fits worse (other scripts, other punctuation) keeps
// version 3's codes: appendOffsetsV4 writes whichever is shorter.
const (
	offsetSymbols = 3*15 + 1 // (g, l) pairs and the escape
	offsetEscape  = offsetSymbols - 1
	offsetMaxLen  = 12
)

// offsetLens are the code lengths of the symbols (g−1)·15 + l−1, then the
// escape.
var offsetLens = [offsetSymbols]uint8{
	5, 3, 3, 3, 3, 4, 4, 4, 5, 5, 6, 7, 8, 9, 10, // g = 1, l = 1…15
	7, 5, 5, 5, 6, 7, 7, 7, 7, 8, 9, 10, 10, 12, 12, // g = 2
	9, 8, 8, 8, 9, 9, 9, 10, 10, 11, 12, 12, 11, 11, 11, // g = 3
	7, // escape
}

// offsetCode is the canonical code of offsetLens: codes by symbol, and a
// table indexed by the next offsetMaxLen bits giving the symbol's token
// length l<<6 | gap g<<4 | code length (g and l 0 for the escape).
//
// pairs is indexed the same way and holds table's entry for the first
// symbol and, in its high 16 bits, table's entry for the second when the
// index holds the second's whole code too and neither is the escape (0
// otherwise): two tokens decoded by one look-up.
type offsetCode struct {
	codes [offsetSymbols]uint16
	table [1 << offsetMaxLen]uint16
	pairs [1 << offsetMaxLen]uint32
}

// offsetCodes is built once from offsetLens and only read.
var offsetCodes = buildOffsetCode()

func buildOffsetCode() *offsetCode {
	c := &offsetCode{}
	order := make([]int, offsetSymbols)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(offsetLens[a]) - int(offsetLens[b]) })
	code, prevLen := 0, 0
	for _, sym := range order {
		l := int(offsetLens[sym])
		code <<= l - prevLen
		prevLen = l
		c.codes[sym] = uint16(code)
		// Every table index that starts with this code decodes to it.
		lo := code << (offsetMaxLen - l)
		for i := range 1 << (offsetMaxLen - l) {
			c.table[lo+i] = uint16(l)
			if sym != offsetEscape {
				c.table[lo+i] |= uint16((sym%15+1)<<6 | (sym/15+1)<<4)
			}
		}
		code++
	}
	for x := range c.pairs {
		e1 := c.table[x]
		c.pairs[x] = uint32(e1)
		l1 := int(e1 & 15)
		if e1>>4&3 == 0 { // the escape
			continue
		}
		if e2 := c.table[x<<l1&(1<<offsetMaxLen-1)]; e2>>4&3 != 0 && l1+int(e2&15) <= offsetMaxLen {
			c.pairs[x] |= uint32(e2) << 16
		}
	}
	return c
}

// offsetSymbol returns the symbol of a gap and a length, or offsetEscape.
func offsetSymbol(g, l uint32) int {
	if g >= 1 && g <= 3 && l >= 1 && l <= 15 {
		return int(g-1)*15 + int(l-1)
	}
	return offsetEscape
}

// nibbleVarintBits is the bits of v as a nibble varint.
func nibbleVarintBits(v uint32) int {
	n := 4
	for ; v >= 8; v >>= 3 {
		n += 4
	}
	return n
}

// appendOffsetsV4 appends the token offsets of version 4: varint
// tokens<<1 | mode, then with mode 1 the prefix codes as a bit stream
// padded to a whole byte, with mode 0 version 3's 4-bit codes
// (appendNibbleOffsets), whichever is shorter. It writes mode 1 while
// counting what mode 0 would take (both modes' headers are the same
// length), and rewrites the section in mode 0 only when that is shorter:
// one pass over the tokens on the text the code was made for.
func appendOffsetsV4(dst []byte, p *Passage) []byte {
	start := len(dst)
	nt := uint64(len(p.Starts))
	dst = binary.AppendUvarint(dst, nt<<1|1)
	w := bitstream.NewWriter(dst)
	w.Reserve(len(p.Starts)/2 + 8) // about 4 bits a token
	codeBits, nibbles := 0, 0
	var end uint32
	// The codes gather in acc (nacc bits, at most 31 between tokens) and
	// go to w 32 bits at a time.
	var acc uint64
	var nacc uint
	ends := p.Ends[:len(p.Starts)]
	for i, s := range p.Starts {
		g, l := s-end, ends[i]-s
		end = ends[i]
		sym := offsetSymbol(g, l)
		n := uint(offsetLens[sym])
		codeBits += int(n)
		acc = acc<<n | uint64(offsetCodes.codes[sym])
		nacc += n
		if nacc >= 32 {
			nacc -= 32
			w.Bits(acc>>nacc, 32)
		}
		switch {
		case sym == offsetEscape:
			w.Bits(acc, nacc) // what is gathered, before the varints
			acc, nacc = 0, 0
			e := nibbleVarintBits(g) + nibbleVarintBits(l)
			codeBits += e
			nibbles += 1 + e/4
			nibbleVarint(&w, g)
			nibbleVarint(&w, l)
		case g == 1 && l <= 14:
			nibbles++
		case g == 2:
			nibbles += 2
		default:
			nibbles += 1 + (nibbleVarintBits(g)+nibbleVarintBits(l))/4
		}
	}
	w.Bits(acc, nacc)
	dst = w.Flush()
	if (codeBits+7)/8 >= (nibbles+1)/2 {
		return appendNibbleOffsets(binary.AppendUvarint(dst[:start], nt<<1), p)
	}
	return dst
}

// nibbleVarint writes v in 4-bit groups as nibbleWriter.varint does.
func nibbleVarint(w *bitstream.Writer, v uint32) {
	for v >= 8 {
		w.Bits(uint64(v&7|8), 4)
		v >>= 3
	}
	w.Bits(uint64(v), 4)
}

// decodeOffsetsV4 reads what appendOffsetsV4 writes into p.
func decodeOffsetsV4(d *decoder, p *Passage) {
	// Each token takes at least half a byte in mode 0, 3 bits in mode 1.
	v := d.uvarint(uint64(6*d.remaining()) + 1)
	nt := int(v >> 1)
	if v&1 == 0 {
		decodeNibbleOffsets(d, p, nt)
		return
	}
	if nt > 8*d.remaining()/3 {
		d.fail("more token offsets than bits")
		return
	}
	starts, ends := offsetSlices(p, nt)
	ends = ends[:len(starts)]
	r := bitReader{b: d.b}
	pairs := &offsetCodes.pairs
	// The reader's window is kept in locals, written back only around
	// its calls.
	acc, n := r.acc, r.n
	var end uint64
	for i := 0; i < len(starts); i++ {
		if n < offsetMaxLen {
			r.acc, r.n = acc, n
			r.refill()
			acc, n = r.acc, r.n
		}
		pe := pairs[acc>>(64-offsetMaxLen)]
		e := uint16(pe)
		l := uint(e & 15)
		if l > n {
			d.fail("bad token offset")
			return
		}
		g, tl := uint64(e>>4&3), uint64(e>>6)
		if e2 := uint16(pe >> 16); e2 != 0 && i+1 < len(starts) && l+uint(e2&15) <= n {
			// Two tokens, both short.
			l += uint(e2 & 15)
			acc <<= l
			n -= l
			s := end + g
			m := s + tl
			s2 := m + uint64(e2>>4&3)
			e3 := s2 + uint64(e2>>6)
			if e3 >= 1<<32 {
				d.fail("token offset overflows 32 bits")
				return
			}
			starts[i], ends[i] = uint32(s), uint32(m)
			i++
			starts[i], ends[i] = uint32(s2), uint32(e3)
			end = e3
			continue
		}
		acc <<= l
		n -= l
		if g == 0 { // the escape
			r.acc, r.n = acc, n
			var ok1, ok2 bool
			g, ok1 = r.nibbleVarint()
			tl, ok2 = r.nibbleVarint()
			acc, n = r.acc, r.n
			if !ok1 || !ok2 {
				d.fail("bad token offset")
				return
			}
		}
		s := end + g
		e2 := s + tl
		if e2 >= 1<<32 {
			d.fail("token offset overflows 32 bits")
			return
		}
		starts[i], ends[i] = uint32(s), uint32(e2)
		end = e2
	}
	r.acc, r.n = acc, n
	p.Starts, p.Ends = starts, ends
	d.b = d.b[r.used():]
}

// nibbleVarint reads what nibbleVarint writes; false past the
// end or over 32 bits.
func (r *bitReader) nibbleVarint() (uint64, bool) {
	var v uint64
	for shift := 0; shift < 33; shift += 3 {
		c, ok := r.read(4)
		if !ok {
			return 0, false
		}
		v |= (c & 7) << shift
		if c&8 == 0 {
			return v, true
		}
	}
	return 0, false
}
