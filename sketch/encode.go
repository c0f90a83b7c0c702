package sketch

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrCorrupt marks bytes that are not a valid features encoding.
var ErrCorrupt = errors.New("sketch: corrupt features encoding")

// Limits bounds what [Features.AppendBinary] stores for one document.
type Limits struct {
	// MaxShingles caps the stored shingle set (default 4096). Larger sets
	// are sampled consistently: a shingle is kept when bits 32 … 32+s−1 of
	// its hash are zero, with the smallest s that fits the cap, so two
	// documents sampled at rates 2^-s and 2^-t still compare exactly on the
	// shingles both would keep at the coarser rate (see [AlignSamples]).
	MaxShingles int
	// MaxUnique caps the stored unique-word sequence (default 8192), with
	// the same sampling rule; order is preserved.
	MaxUnique int
}

// DefaultLimits returns the storage caps used unless configured otherwise.
func DefaultLimits() Limits { return Limits{MaxShingles: 4096, MaxUnique: 8192} }

// The storage encoding, version 1, all integers unsigned varints unless said:
//
//	byte    version (1)
//	byte    flags: 1 = has I-Match digest, 2 = has text
//	varint  token count
//	8 bytes SimHash, little-endian
//	20 bytes I-Match digest (flag 1)
//	byte    shingle sample shift s; varint count; count deltas of the sorted
//	        top 32 bits of the kept shingle hashes (first delta from 0)
//	byte    unique sample shift; varint count; per word: 4 bytes top 32 bits
//	        of the hash (little-endian) and varint position delta
//	varint  text length and the text (flag 2)
//
// Stored hashes keep their top 32 bits: two distinct shingles of documents
// with n shingles collide with probability about n²/2^33 per pair of
// documents (0.0001 at n = 1000), far below verification thresholds. A
// decoded Features holds those 32-bit values in its uint64 slices, so
// decoded features compare only with decoded features: encode the incoming
// document too before verifying it against stored ones.
const encodingVersion = 1

// Bytes per stored item: a shingle costs its delta varint, about 3–4 bytes
// (32-bit values, gaps ≈ 2^32/n); a unique word 4 bytes plus a 1–2 byte
// position delta; fixed overhead is about 32 bytes.

// AppendBinary appends the storage encoding of f to dst.
func (f *Features) AppendBinary(dst []byte, lim Limits) []byte {
	if lim.MaxShingles <= 0 {
		lim.MaxShingles = DefaultLimits().MaxShingles
	}
	if lim.MaxUnique <= 0 {
		lim.MaxUnique = DefaultLimits().MaxUnique
	}
	var flags byte
	if f.HasIMatch {
		flags |= 1
	}
	if len(f.Text) > 0 {
		flags |= 2
	}
	dst = append(dst, encodingVersion, flags)
	dst = binary.AppendUvarint(dst, uint64(f.Tokens))
	dst = binary.LittleEndian.AppendUint64(dst, f.SimHash)
	if f.HasIMatch {
		dst = append(dst, f.IMatch[:]...)
	}

	shift := sampleShift(len(f.Shingles), lim.MaxShingles)
	dst = append(dst, byte(shift))
	n := 0
	for _, h := range f.Shingles {
		if keep(h, shift) {
			n++
		}
	}
	dst = binary.AppendUvarint(dst, uint64(n))
	// Sorting by the full hash also sorts the top 32 bits; equal tops
	// (a 32-bit collision) encode as a zero delta and decode as duplicates,
	// which the decoder drops.
	var prev uint64
	for _, h := range f.Shingles {
		if !keep(h, shift) {
			continue
		}
		top := h >> 32
		dst = binary.AppendUvarint(dst, top-prev)
		prev = top
	}

	shift = sampleShift(len(f.Unique), lim.MaxUnique)
	dst = append(dst, byte(shift))
	n = 0
	for _, u := range f.Unique {
		if keep(u.Hash, shift) {
			n++
		}
	}
	dst = binary.AppendUvarint(dst, uint64(n))
	var prevPos uint32
	for _, u := range f.Unique {
		if !keep(u.Hash, shift) {
			continue
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(u.Hash>>32))
		dst = binary.AppendUvarint(dst, uint64(u.Pos-prevPos))
		prevPos = u.Pos
	}
	if len(f.Text) > 0 {
		dst = binary.AppendUvarint(dst, uint64(len(f.Text)))
		dst = append(dst, f.Text...)
	}
	return dst
}

// sampleShift returns the smallest s such that about n/2^s ≤ limit.
func sampleShift(n, limit int) int {
	s := 0
	for n>>s > limit && s < 32 {
		s++
	}
	return s
}

// keep reports whether a full 64-bit hash survives sampling at shift: the
// test reads bits 32.., which storage keeps, so stored values can be
// resampled to a coarser rate consistently (see [AlignSamples]).
func keep(h uint64, shift int) bool { return keepTop(h>>32, shift) }

// keepTop is keep for a stored (top 32 bits) value.
func keepTop(v uint64, shift int) bool { return v&(1<<shift-1) == 0 }

// UnmarshalBinary decodes a storage encoding into f, reusing f's slices.
// Signature is not stored and comes back empty. Malformed input gives an
// error wrapping [ErrCorrupt], never a panic; counts are checked against
// the remaining bytes before anything is allocated.
func (f *Features) UnmarshalBinary(data []byte) error {
	d := decoder{b: data}
	if v := d.byte(); v != encodingVersion {
		return fmt.Errorf("%w: version %d", ErrCorrupt, v)
	}
	flags := d.byte()
	f.Tokens = int(d.uvarint(1 << 31))
	f.SimHash = d.uint64()
	f.HasIMatch = flags&1 != 0
	f.IMatch = Digest{}
	if f.HasIMatch {
		copy(f.IMatch[:], d.bytes(len(f.IMatch)))
	}
	f.Signature = f.Signature[:0]

	f.ShingleShift = d.byte()
	n := int(d.uvarint(uint64(d.remaining())))
	f.Shingles = f.Shingles[:0]
	var v uint64
	for range n {
		v += d.uvarint(1 << 32)
		if len(f.Shingles) == 0 || f.Shingles[len(f.Shingles)-1] != v {
			f.Shingles = append(f.Shingles, v)
		}
	}
	if v >= 1<<32 {
		d.fail("shingle value overflows 32 bits")
	}

	f.UniqueShift = d.byte()
	n = int(d.uvarint(uint64(d.remaining() / 5)))
	f.Unique = f.Unique[:0]
	var pos uint64
	for range n {
		h := uint64(d.uint32())
		pos += d.uvarint(1 << 32)
		f.Unique = append(f.Unique, UniqueWord{Hash: h, Pos: uint32(pos)})
	}
	if pos >= 1<<32 {
		d.fail("position overflows 32 bits")
	}
	f.Text = f.Text[:0]
	if flags&2 != 0 {
		f.Text = append(f.Text, d.bytes(int(d.uvarint(uint64(d.remaining()))))...)
	}
	if len(f.Text) == 0 {
		f.Text = nil
	}
	if d.err == nil && d.remaining() != 0 {
		d.fail("trailing bytes")
	}
	return d.err
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(why string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrCorrupt, why)
	}
	d.b = nil
}

func (d *decoder) remaining() int { return len(d.b) }

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail("truncated")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) bytes(n int) []byte {
	if n < 0 || len(d.b) < n {
		d.fail("truncated")
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) uint64() uint64 {
	p := d.bytes(8)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(p)
}

func (d *decoder) uint32() uint32 {
	p := d.bytes(4)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(p)
}

// uvarint reads a varint and fails if it exceeds limit.
func (d *decoder) uvarint(limit uint64) uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	if v > limit {
		d.fail(fmt.Sprintf("value %d over limit %d", v, limit))
		return 0
	}
	return v
}

// AlignSamples makes two decoded feature sets comparable when they were
// stored at different sampling rates: it returns copies of the shingle sets
// and unique-word sequences, each filtered to the coarser of the two rates.
// Sets stored at the same rate are returned as they are.
func AlignSamples(a, b *Features) (sa, sb []uint64, ua, ub []UniqueWord) {
	sa, sb = a.Shingles, b.Shingles
	if s := max(a.ShingleShift, b.ShingleShift); a.ShingleShift != b.ShingleShift {
		sa, sb = filterShingles(sa, a.ShingleShift, s), filterShingles(sb, b.ShingleShift, s)
	}
	ua, ub = a.Unique, b.Unique
	if s := max(a.UniqueShift, b.UniqueShift); a.UniqueShift != b.UniqueShift {
		ua, ub = filterUnique(ua, a.UniqueShift, s), filterUnique(ub, b.UniqueShift, s)
	}
	return sa, sb, ua, ub
}

func filterShingles(set []uint64, have, want byte) []uint64 {
	if have == want {
		return set
	}
	out := make([]uint64, 0, len(set)>>(want-have)+1)
	for _, h := range set {
		if keepTop(h, int(want)) {
			out = append(out, h)
		}
	}
	return out
}

func filterUnique(seq []UniqueWord, have, want byte) []UniqueWord {
	if have == want {
		return seq
	}
	out := make([]UniqueWord, 0, len(seq)>>(want-have)+1)
	for _, u := range seq {
		if keepTop(u.Hash, int(want)) {
			out = append(out, u)
		}
	}
	return out
}

// Stored writes into dst the features that decoding f's storage encoding
// would give (32-bit hashes, sampled to the limits, no signature), without
// encoding: what an incoming document is verified as against stored ones.
func (f *Features) Stored(dst *Features, lim Limits) {
	if lim.MaxShingles <= 0 {
		lim.MaxShingles = DefaultLimits().MaxShingles
	}
	if lim.MaxUnique <= 0 {
		lim.MaxUnique = DefaultLimits().MaxUnique
	}
	dst.Tokens, dst.SimHash, dst.IMatch, dst.HasIMatch = f.Tokens, f.SimHash, f.IMatch, f.HasIMatch
	dst.Signature = dst.Signature[:0]
	shift := sampleShift(len(f.Shingles), lim.MaxShingles)
	dst.ShingleShift = byte(shift)
	dst.Shingles = dst.Shingles[:0]
	for _, h := range f.Shingles {
		if !keep(h, shift) {
			continue
		}
		if top := h >> 32; len(dst.Shingles) == 0 || dst.Shingles[len(dst.Shingles)-1] != top {
			dst.Shingles = append(dst.Shingles, top)
		}
	}
	shift = sampleShift(len(f.Unique), lim.MaxUnique)
	dst.UniqueShift = byte(shift)
	dst.Unique = dst.Unique[:0]
	for _, u := range f.Unique {
		if keep(u.Hash, shift) {
			dst.Unique = append(dst.Unique, UniqueWord{Hash: u.Hash >> 32, Pos: u.Pos})
		}
	}
	dst.Text = append(dst.Text[:0], f.Text...)
	if len(dst.Text) == 0 {
		dst.Text = nil
	}
}
