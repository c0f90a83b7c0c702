package sketch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/neardup/neardup/internal/bitstream"
)

// ErrCorrupt marks bytes that are not a valid features encoding.
var ErrCorrupt = errors.New("sketch: corrupt features encoding")

// Limits selects and bounds what [Features.AppendBinary] stores for one
// document. A zero field stores nothing of that kind, so a profile stores
// only what its checks read (verify.Profile.Limits).
type Limits struct {
	// MaxShingles caps the stored shingle set; 0 stores none. Larger sets
	// are sampled consistently: a shingle is kept when bits 32 … 32+s−1 of
	// its hash are zero, with the smallest s that fits the cap, so two
	// documents sampled at rates 2^-s and 2^-t still compare exactly on the
	// shingles both would keep at the coarser rate (see [AlignSamples]).
	// The stored sample holds between MaxShingles/2 and MaxShingles
	// shingles of a large document (in expectation).
	MaxShingles int
	// MaxUnique caps the stored unique-word sequence, with the same
	// sampling rule; order is preserved. 0 stores none.
	MaxUnique int
	// IMatch and SimHash store the I-Match digest and the SimHash
	// fingerprint.
	IMatch, SimHash bool
	// Passages stores [Features.Passage] (when computed): about 1.05
	// bytes per token on real text (fingerprints 0.375, anchors 0.17,
	// token offsets 0.5; bench/bytesbench prints them).
	Passages bool
	// Sentences stores [Features.Sentences] (when computed): each
	// sentence's text, place and band keys.
	Sentences bool
}

// DefaultLimits returns storage limits that keep every feature, with the
// caps of the books profile.
func DefaultLimits() Limits {
	return Limits{MaxShingles: 4096, MaxUnique: 8192, IMatch: true, SimHash: true, Passages: true, Sentences: true}
}

// The storage encoding, version 5; integers are unsigned varints unless
// said otherwise:
//
//	byte     version (5; versions 2 to 4 still decode, see below)
//	byte     flags: 1 I-Match digest, 2 text, 4 SimHash, 8 shingles,
//	         16 unique words, 32 passages, 64 sentences, 128 host
//	varint   token count
//	16 bytes content digest
//	8 bytes  host, little-endian (flag 128; Features.Host)
//	8 bytes  SimHash, little-endian (flag 4)
//	20 bytes I-Match digest (flag 1)
//	shingles (flag 8):
//	  byte   sample shift s
//	  varint distinct shingles of the whole document
//	  varint n, the shingles kept
//	  byte   Rice parameter k
//	  Rice codes of the n gaps between the sorted kept values v>>s, where v
//	  is StoredShingle of a kept shingle hash, the low min(32, s+20) bits
//	  of its top half (first gap from 0): q = gap>>k in unary (q one bits,
//	  a zero bit), then the k low bits, most significant first; the bit
//	  stream is padded to a whole byte
//	unique words (flag 16):
//	  byte   sample shift; varint count; per word: 4 bytes top 32 bits of
//	  the hash (little-endian) and varint position delta
//	varint text length and the text (flag 2)
//	passage section (flag 32, see appendPassageV5)
//	sentence section (flag 64, see Sentences.appendSentences)
//
// A kept shingle keeps StoredBits (20) bits beyond its s sampling bits
// (which are zero), and an anchor 20 bits of its hash: two distinct
// shingles of documents with n stored shingles collide with probability
// about n²/2^21 per pair of documents, that is about n²/2^20 shared
// shingles counted that are not (0.06 of 256 at the web profile's cap, a
// Jaccard error under 0.0003; 16 of 4096 at the books profile's, under
// 0.002), at any size, since the sampling bits are not counted
// (TestStoredShingleWidth); two anchors collide as often, and a false seed
// is dropped when the fingerprints around it do not match. The sampling
// bits of every coarser rate are among the stored ones, so stored values
// can be resampled to a coarser rate; a set then compares on the narrower
// of the two widths ([AlignSamples]), which loses as many identity bits as
// the resampling thins the finer set, so the expected false matches stay
// n²/2^20. A kept value has its low s bits zero, so v>>s loses nothing.
// Rice coding with k ≈ log2 of the mean gap costs about k + 1.6 bits per
// shingle: 20 − log2 n + 1.6, 13 to 14 bits for 128–256 sampled shingles
// (version 3: 32 − log2 of the document's distinct shingles + 1.6, 24 to
// 26 for a 1,000-shingle page). Decoded features hold the StoredShingle
// and StoredHash values in their uint64 slices, so decoded features
// compare only with decoded features: encode the incoming document too
// ([Features.Stored]) before verifying it against stored ones.
//
// Versions 2 and 3 stored 32 bits of each shingle and anchor hash (the
// top half); they decode to the StoredShingle and StoredHash values of
// those, sorted again, so a record written by an older build compares with
// one written since.
// Version 2 stored a byte per token offset (Passage.appendPassage).
// Versions 2 to 4 stored four bits of fingerprint per shingle position
// (Passage.appendFp), version 5 three (Passage.appendFp3); the older ones
// decode to the three bits version 5 keeps.
const encodingVersion = 5

// Older versions, still decoded.
const (
	// passageV2 is the last version whose passage section stores a byte
	// per token offset (Passage.appendPassage).
	passageV2 = 2
	// passageV3 is the last version that stores 32 bits of each shingle
	// and anchor hash (decoded to StoredShingle and StoredHash values).
	passageV3 = 3
	// hashesV4 is the first version that stores StoredBits.
	hashesV4 = 4
	// fpV4 is the last version that stores four bits of fingerprint a
	// position.
	fpV4 = 4
)

const (
	flagIMatch   = 1
	flagText     = 2
	flagSimHash  = 4
	flagShingle  = 8
	flagUnique   = 16
	flagPassage  = 32
	flagSentence = 64
	flagHost     = 128
)

// AppendBinary appends the storage encoding of f to dst.
func (f *Features) AppendBinary(dst []byte, lim Limits) []byte {
	return f.appendBinary(dst, lim, nil)
}

// appendBinary is AppendBinary; kept, when not nil, is the shingle
// section's values already sampled, sorted and distinct (what Stored puts
// in a stored features' Shingles), so that they are not computed twice.
func (f *Features) appendBinary(dst []byte, lim Limits, kept *Features) []byte {
	var flags byte
	if lim.IMatch && f.HasIMatch {
		flags |= flagIMatch
	}
	if len(f.Text) > 0 {
		flags |= flagText
	}
	if lim.SimHash {
		flags |= flagSimHash
	}
	if lim.MaxShingles > 0 {
		flags |= flagShingle
	}
	if lim.MaxUnique > 0 {
		flags |= flagUnique
	}
	if lim.Passages && len(f.Passage.Fp) > 0 {
		flags |= flagPassage
	}
	if lim.Sentences && f.Sentences.Bands > 0 {
		flags |= flagSentence
	}
	if f.Host != 0 {
		flags |= flagHost
	}
	dst = append(dst, encodingVersion, flags)
	dst = binary.AppendUvarint(dst, uint64(f.Tokens))
	dst = append(dst, f.Content[:]...)
	if flags&flagHost != 0 {
		dst = binary.LittleEndian.AppendUint64(dst, f.Host)
	}
	if flags&flagSimHash != 0 {
		dst = binary.LittleEndian.AppendUint64(dst, f.SimHash)
	}
	if flags&flagIMatch != 0 {
		dst = append(dst, f.IMatch[:]...)
	}
	if flags&flagShingle != 0 {
		if kept != nil {
			dst = appendShingleSection(dst, max(f.ShingleCount, len(f.Shingles)), int(kept.ShingleShift), kept.Shingles)
		} else {
			dst = f.appendShingles(dst, lim.MaxShingles)
		}
	}
	if flags&flagUnique != 0 {
		shift := sampleShift(len(f.Unique), lim.MaxUnique)
		dst = append(dst, byte(shift))
		n := 0
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
	}
	if flags&flagText != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(f.Text)))
		dst = append(dst, f.Text...)
	}
	if flags&flagPassage != 0 {
		dst = appendPassageV5(dst, &f.Passage)
	}
	if flags&flagSentence != 0 {
		dst = f.Sentences.appendSentences(dst)
	}
	return dst
}

// StoredBits is how many bits of a hash storage keeps to tell it from
// another: of a passage anchor hash, and of a sampled shingle hash beyond
// its sampling bits (see [StoredShingle]).
const StoredBits = 20

// StoredHash is what storage keeps of a 64-bit passage anchor hash: its
// bits 32 … 32+StoredBits−1, the low ones of its top half. Decoded
// anchors hold these values.
func StoredHash(h uint64) uint64 { return h >> 32 & (1<<StoredBits - 1) }

// StoredShingle is what storage keeps of a 64-bit shingle hash sampled at
// shift (see [Limits]): the low min(32, shift+StoredBits) bits of its top
// half, so that StoredBits of them tell kept shingles apart (the low
// shift bits, the sampling bits, are zero in a kept one) and the sampling
// bits of any coarser rate are among them. Decoded shingle sets hold
// these values; [AlignSamples] brings two sets of different shifts to
// the narrower of their widths.
func StoredShingle(h uint64, shift int) uint64 { return h >> 32 & shingleMask(shift) }

// shingleMask is the bits StoredShingle keeps at shift.
func shingleMask(shift int) uint64 { return 1<<min(32, shift+StoredBits) - 1 }

// appendShingles appends the shingle section: the kept values
// (StoredShingle), distinct and sorted, Rice-coded.
func (f *Features) appendShingles(dst []byte, limit int) []byte {
	count := f.ShingleCount
	if count < len(f.Shingles) {
		count = len(f.Shingles) // features built by hand
	}
	shift := shingleShift(len(f.Shingles), limit)
	var buf [1024]uint32 // the web and books caps keep at most 2×limit
	return appendShingleSection(dst, count, shift, keptShingles(buf[:0], f.Shingles, shift))
}

// appendShingleSection appends the shingle section of count shingles
// sampled at shift, whose kept values, sorted and distinct, are vals.
func appendShingleSection[T uint32 | uint64](dst []byte, count, shift int, vals []T) []byte {
	n := len(vals)
	var span uint64
	if n > 0 {
		span = uint64(vals[n-1]) >> shift
	}
	k := bitstream.RiceParam(span, n)
	dst = append(dst, byte(shift))
	dst = binary.AppendUvarint(dst, uint64(count))
	dst = binary.AppendUvarint(dst, uint64(n))
	dst = append(dst, byte(k))
	w := bitstream.NewWriter(dst)
	w.Reserve(n*(k+2)/8 + 8)
	var last uint64
	for _, x := range vals {
		v := uint64(x) >> shift
		w.Rice(v-last, k)
		last = v
	}
	return w.Flush()
}

// shingleShift is sampleShift for a shingle set, at most 31.
func shingleShift(n, limit int) int { return min(sampleShift(n, limit), 31) }

// keptShingles appends to dst the stored values of the shingles hashes
// keeps at shift, sorted and distinct.
func keptShingles(dst []uint32, hashes []uint64, shift int) []uint32 {
	for _, h := range hashes {
		if keep(h, shift) {
			dst = append(dst, uint32(StoredShingle(h, shift)))
		}
	}
	slices.Sort(dst)
	return slices.Compact(dst)
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
// Signature is not stored and comes back empty; sections the encoding
// does not hold come back empty. Malformed input gives an error wrapping
// [ErrCorrupt], never a panic; counts are checked against the remaining
// bytes before anything is allocated.
func (f *Features) UnmarshalBinary(data []byte) error {
	return f.decode(&decoder{b: data, mark: len(data)})
}

// SectionSizes is how many bytes each section of a storage encoding
// takes; they add up to the encoding's length.
type SectionSizes struct {
	// Header is the version, flags, token count, content digest, SimHash
	// and I-Match digest.
	Header int
	// Shingles and Unique are the sampled shingle set and unique words.
	Shingles, Unique int
	// Text is the stored normalized text.
	Text int
	// Fingerprints, Anchors and Offsets are the passage section's
	// per-position fingerprints, winnowing anchors and token offsets.
	Fingerprints, Anchors, Offsets int
	// Sentences is the sentence section.
	Sentences int
}

// EncodedSections decodes a storage encoding and returns the bytes of
// each of its sections: what a stored document's features are made of.
func EncodedSections(data []byte) (SectionSizes, error) {
	var f Features
	d := decoder{b: data, mark: len(data)}
	err := f.decode(&d)
	return d.sizes, err
}

// decode is UnmarshalBinary on d.
func (f *Features) decode(d *decoder) error {
	version := d.byte()
	if version < passageV2 || version > encodingVersion {
		return fmt.Errorf("%w: version %d, want %d to %d", ErrCorrupt, version, passageV2, encodingVersion)
	}

	flags := d.byte()
	if flags&^(flagIMatch|flagText|flagSimHash|flagShingle|flagUnique|flagPassage|flagSentence|flagHost) != 0 {
		d.fail(fmt.Sprintf("unknown flags %#x", flags))
	}
	f.Tokens = int(d.uvarint(1 << 31))
	copy(f.Content[:], d.bytes(len(f.Content)))
	f.Host = 0
	if flags&flagHost != 0 {
		f.Host = d.uint64()
	}
	f.SimHash = 0
	if flags&flagSimHash != 0 {
		f.SimHash = d.uint64()
	}
	f.HasIMatch = flags&flagIMatch != 0
	f.IMatch = Digest{}
	if f.HasIMatch {
		copy(f.IMatch[:], d.bytes(len(f.IMatch)))
	}
	f.Signature = f.Signature[:0]

	d.section(&d.sizes.Header)
	f.Shingles, f.ShingleShift, f.ShingleCount = f.Shingles[:0], 0, 0
	if flags&flagShingle != 0 {
		f.decodeShingles(d, version < hashesV4)
	}
	d.section(&d.sizes.Shingles)
	f.Unique, f.UniqueShift = f.Unique[:0], 0
	if flags&flagUnique != 0 {
		f.UniqueShift = d.byte()
		n := int(d.uvarint(uint64(d.remaining() / 5)))
		f.Unique = slices.Grow(f.Unique, n)
		var pos uint64
		for range n {
			var h uint64
			if b := d.b; len(b) >= 5 && b[4] < 0x80 {
				// The common case: a one-byte position delta.
				h, pos = uint64(binary.LittleEndian.Uint32(b)), pos+uint64(b[4])
				d.b = b[5:]
			} else {
				h = uint64(d.uint32())
				pos += d.uvarint(1 << 32)
			}
			f.Unique = append(f.Unique, UniqueWord{Hash: h, Pos: uint32(pos)})
		}
		if pos >= 1<<32 {
			d.fail("position overflows 32 bits")
		}
	}
	d.section(&d.sizes.Unique)
	f.Text = f.Text[:0]
	if flags&flagText != 0 {
		f.Text = append(f.Text, d.bytes(int(d.uvarint(uint64(d.remaining()))))...)
	}
	if len(f.Text) == 0 {
		f.Text = nil
	}
	d.section(&d.sizes.Text)
	f.Passage.reset()
	if flags&flagPassage != 0 {
		switch version {
		case passageV2:
			f.Passage.decodePassage(d)
		case passageV3:
			decodePassageV3(d, &f.Passage)
		case fpV4:
			decodePassageV4(d, &f.Passage)
		default:
			decodePassageV5(d, &f.Passage)
		}
	}
	d.section(&d.sizes.Offsets)
	f.Sentences.reset()
	if flags&flagSentence != 0 {
		f.Sentences.decodeSentences(d)
	}
	d.section(&d.sizes.Sentences)
	if d.err == nil && d.remaining() != 0 {
		d.fail("trailing bytes")
	}
	return d.err
}

// decodeShingles reads the shingle section; old marks versions 2 and 3,
// whose values are 32 bits wide. They come back as StoredShingle values.
func (f *Features) decodeShingles(d *decoder, old bool) {
	width := 32 // of the values, shift bits included
	shift := d.byte()
	count := d.uvarint(1 << 40)
	n := d.uvarint(uint64(d.remaining()) * 8) // each code takes at least one bit
	k := d.byte()
	switch {
	case d.err != nil:
		return
	case shift > 31 || k > 31:
		d.fail("shingle shift or Rice parameter too large")
		return
	case n > count:
		d.fail("more shingles kept than the document has")
		return
	}
	f.ShingleShift, f.ShingleCount = shift, int(count)
	f.Shingles = slices.Grow(f.Shingles, int(n)) // n ≤ 8 × the bytes left
	r := bitReader{b: d.b}
	if !old {
		width = min(width, int(shift)+StoredBits)
	}
	limit := uint64(1) << (width - int(shift))
	var v uint64
	// The common code, whose bits are all in the reader's window, is
	// read here with the window in locals; any other goes to r.rice,
	// from the same place.
	acc, rn, kk, qmax := r.acc, r.n, uint(k), limit>>k
	for i := range int(n) {
		if rn < 32 {
			r.acc, r.n = acc, rn
			r.refill()
			acc, rn = r.acc, r.n
		}
		var gap uint64
		ok := true
		// Bits past rn are zero: a run of ones ends by rn.
		if ones := uint(bits.LeadingZeros64(^acc)); ones+1+kk <= rn && uint64(ones) < qmax {
			gap = uint64(ones)<<kk | acc<<(ones+1)>>(64-kk)
			acc <<= ones + 1 + kk
			rn -= ones + 1 + kk
		} else {
			r.acc, r.n = acc, rn
			gap, ok = r.rice(int(k), limit)
			acc, rn = r.acc, r.n
		}
		if !ok || (i > 0 && gap == 0) {
			d.fail("bad shingle code")
			return
		}
		v += gap
		if v >= limit {
			d.fail(fmt.Sprintf("shingle value overflows %d bits", width-int(shift)))
			return
		}
		f.Shingles = append(f.Shingles, v<<shift)
	}
	r.acc, r.n = acc, rn
	d.b = d.b[r.used():]
	if mask := shingleMask(int(shift)); old && mask != 1<<32-1 {
		// An older record: keep what version 4 stores.
		for i, h := range f.Shingles {
			f.Shingles[i] = h & mask
		}
		slices.Sort(f.Shingles)
		f.Shingles = slices.Compact(f.Shingles)
	}
}

// bitReader reads what a bitstream.Writer wrote, a 64-bit window at a time.
type bitReader struct {
	b   []byte
	i   int    // bytes loaded into acc
	acc uint64 // unread bits, most significant first
	n   uint   // number of unread bits in acc
}

func (r *bitReader) refill() {
	if r.n <= 56 && r.i+8 <= len(r.b) {
		// A whole word at once: the bytes that fit (56 to 63 bits
		// held after), the bits past them cleared.
		k := (63 - r.n) / 8
		r.n += 8 * k
		r.acc |= binary.BigEndian.Uint64(r.b[r.i:]) >> (r.n - 8*k) &^ (1<<(64-r.n) - 1)
		r.i += int(k)
		return
	}
	for r.n <= 56 && r.i < len(r.b) {
		r.acc |= uint64(r.b[r.i]) << (56 - r.n)
		r.i++
		r.n += 8
	}
}

// rice reads one Rice code with parameter k; values of limit or more are
// rejected without reading on.
func (r *bitReader) rice(k int, limit uint64) (uint64, bool) {
	var q uint64
	for {
		if r.n < 32 {
			r.refill()
		}
		if r.n == 0 {
			return 0, false
		}
		// Bits past n are zero, so a run of ones ends by n at the latest.
		ones := uint(bits.LeadingZeros64(^r.acc))
		if ones >= r.n { // every unread bit is a one: the run goes on
			q += uint64(r.n)
			r.acc, r.n = 0, 0
			if q >= limit>>k {
				return 0, false
			}
			continue
		}
		q += uint64(ones)
		r.acc <<= ones + 1
		r.n -= ones + 1
		break
	}
	if q >= limit>>k {
		return 0, false
	}
	v := q << k
	if k > 0 {
		if r.n < uint(k) {
			r.refill()
			if r.n < uint(k) {
				return 0, false
			}
		}
		v |= r.acc >> (64 - uint(k))
		r.acc <<= uint(k)
		r.n -= uint(k)
	}
	return v, true
}

// read reads n ≤ 32 bits.
func (r *bitReader) read(n uint) (uint64, bool) {
	if r.n < n {
		r.refill()
		if r.n < n {
			return 0, false
		}
	}
	v := r.acc >> (64 - n)
	r.acc <<= n
	r.n -= n
	return v, true
}

// used returns the bytes consumed, the last one padded.
func (r *bitReader) used() int { return r.i - int(r.n/8) }

type decoder struct {
	b   []byte
	err error
	// sizes counts the bytes of each section read so far (section);
	// mark is len(b) at the end of the last section.
	sizes SectionSizes
	mark  int
}

// section adds the bytes read since the last section to *n, a field of
// d.sizes.
func (d *decoder) section(n *int) {
	*n += d.mark - len(d.b)
	d.mark = len(d.b)
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
// and unique-word sequences, each filtered to the coarser of the two rates,
// the shingles cut to the narrower of the two sets' widths (MaskShingles
// at the finer rate). Sets stored at the same rate are returned as they
// are.
func AlignSamples(a, b *Features) (sa, sb []uint64, ua, ub []UniqueWord) {
	sa, sb = a.Shingles, b.Shingles
	if s := max(a.ShingleShift, b.ShingleShift); a.ShingleShift != b.ShingleShift {
		fine := min(a.ShingleShift, b.ShingleShift)
		sa = MaskShingles(nil, filterShingles(sa, a.ShingleShift, s), fine)
		sb = MaskShingles(nil, filterShingles(sb, b.ShingleShift, s), fine)
	}
	ua, ub = a.Unique, b.Unique
	if s := max(a.UniqueShift, b.UniqueShift); a.UniqueShift != b.UniqueShift {
		ua, ub = filterUnique(ua, a.UniqueShift, s), filterUnique(ub, b.UniqueShift, s)
	}
	return sa, sb, ua, ub
}

// MaskShingles appends to dst the shingle values of set (StoredShingle
// values at shift or a coarser one) as StoredShingle keeps them at shift,
// sorted and distinct: what a set of another width compares on. A
// discount's shingles (verify.Discount), held at the incoming document's
// width, are cut so when the candidate's is narrower.
func MaskShingles(dst, set []uint64, shift byte) []uint64 {
	mask := shingleMask(int(shift))
	for _, h := range set {
		dst = append(dst, h&mask)
	}
	slices.Sort(dst)
	return slices.Compact(dst)
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
// would give (32-bit hashes, sampled to the limits, only the sections lim
// selects, no signature), without encoding: what an incoming document is
// verified as against stored ones.
func (f *Features) Stored(dst *Features, lim Limits) { f.stored(dst, lim, nil, nil) }

// stored is Stored; with a sorter, the kept shingle values are sorted by
// it (a radix pass, in its scratch) instead of by a comparison sort.
//
// seq, when not nil, holds f's shingles in document order, repeats
// included, in place of f.Shingles (Config.SkipShingleSet): f.ShingleCount
// is the number of distinct ones.
func (f *Features) stored(dst *Features, lim Limits, sorter *hashSorter, seq []uint64) {
	dst.Tokens, dst.Content, dst.Host = f.Tokens, f.Content, f.Host
	dst.SimHash, dst.IMatch, dst.HasIMatch = 0, Digest{}, false
	if lim.SimHash {
		dst.SimHash = f.SimHash
	}
	if lim.IMatch && f.HasIMatch {
		dst.IMatch, dst.HasIMatch = f.IMatch, true
	}
	dst.Signature = dst.Signature[:0]
	dst.Shingles, dst.ShingleShift, dst.ShingleCount = dst.Shingles[:0], 0, 0
	if lim.MaxShingles > 0 {
		set, n := f.Shingles, len(f.Shingles)
		if seq != nil {
			// The same kept values, repeats included until Compact.
			set, n = seq, f.ShingleCount
		}
		shift := shingleShift(n, lim.MaxShingles)
		dst.ShingleShift = byte(shift)
		dst.ShingleCount = max(f.ShingleCount, len(f.Shingles))
		dst.Shingles = slices.Grow(dst.Shingles, min(len(set), 2*lim.MaxShingles))
		for _, h := range set {
			if keep(h, shift) {
				dst.Shingles = append(dst.Shingles, StoredShingle(h, shift))
			}
		}
		sortStored(dst.Shingles, shingleMask(shift), sorter)
		dst.Shingles = slices.Compact(dst.Shingles)
	}
	dst.Unique, dst.UniqueShift = dst.Unique[:0], 0
	if lim.MaxUnique > 0 {
		shift := sampleShift(len(f.Unique), lim.MaxUnique)
		dst.UniqueShift = byte(shift)
		dst.Unique = slices.Grow(dst.Unique, min(len(f.Unique), 2*lim.MaxUnique))
		for _, u := range f.Unique {
			if keep(u.Hash, shift) {
				dst.Unique = append(dst.Unique, UniqueWord{Hash: u.Hash >> 32, Pos: u.Pos})
			}
		}
	}
	dst.Text = append(dst.Text[:0], f.Text...)
	if len(dst.Text) == 0 {
		dst.Text = nil
	}
	dst.Passage.reset()
	if lim.Passages && len(f.Passage.Fp) > 0 {
		f.Passage.stored(&dst.Passage)
	}
	dst.Sentences.reset()
	if lim.Sentences && f.Sentences.Bands > 0 {
		f.Sentences.stored(&dst.Sentences)
	}
}

// sortStored sorts vals, stored values of at most the bits of mask, with
// sorter when there is one: shifted to the top of the word, uniform
// hashes as sorter wants them, then back.
func sortStored(vals []uint64, mask uint64, sorter *hashSorter) {
	if sorter == nil || len(vals) < 32 {
		slices.Sort(vals)
		return
	}
	up := uint(bits.LeadingZeros64(mask))
	for i := range vals {
		vals[i] <<= up
	}
	sorter.sort(vals, nil)
	for i := range vals {
		vals[i] >>= up
	}
}

// appendNibbleOffsets appends the 4-bit codes of the token offsets (see
// appendPassageV3), without their count.
func appendNibbleOffsets(dst []byte, p *Passage) []byte {
	w := nibbleWriter{b: dst}
	var end uint32
	for i, s := range p.Starts {
		g, l := s-end, p.Ends[i]-s
		switch {
		case g == 1 && l >= 1 && l <= 14:
			w.put(byte(l))
		case g == 2 && l >= 1 && l <= 15:
			w.put(15)
			w.put(byte(l))
		default:
			w.put(0)
			w.varint(g)
			w.varint(l)
		}
		end = p.Ends[i]
	}
	return w.flush()
}

// decodePassageV3 reads the section appendPassageV3 writes into p.
func decodePassageV3(d *decoder, p *Passage) {
	if p.decodeFingerprints(d) {
		decodeOffsets(d, p)
	}
}

// decodeOffsets reads the token offsets appendOffsets writes.
func decodeOffsets(d *decoder, p *Passage) {
	// Each token takes at least one code: half a byte.
	decodeNibbleOffsets(d, p, int(d.uvarint(uint64(2*d.remaining()))))
}

// offsetSlices returns p's Starts and Ends resliced to nt, grown when
// short (one allocation for both: fresh decoded features have none), and
// empties p's. Written by index into these and assigned once, the fields'
// slice headers are not written to the heap per token.
func offsetSlices(p *Passage, nt int) (starts, ends []uint32) {
	starts, ends = p.Starts, p.Ends
	if cap(starts) < nt || cap(ends) < nt {
		both := make([]uint32, 2*nt)
		starts, ends = both[:0:nt], both[nt:nt]
	}
	p.Starts, p.Ends = starts[:0], ends[:0]
	return starts[:nt], ends[:nt]
}

// decodeNibbleOffsets reads nt tokens' 4-bit codes (appendNibbleOffsets).
func decodeNibbleOffsets(d *decoder, p *Passage, nt int) {
	if nt > 2*d.remaining() {
		d.fail("more token offsets than bytes")
		return
	}
	starts, ends := offsetSlices(p, nt)
	r := nibbleReader{b: d.b}
	var end uint64
	for i := range nt {
		var g, l uint64
		switch c := r.get(); c {
		case 0:
			g, l = r.varint(), r.varint()
		case 15:
			g, l = 2, uint64(r.get())
			if l == 0 {
				r.bad = true
			}
		default:
			g, l = 1, uint64(c)
		}
		if r.bad {
			d.fail("bad token offset")
			return
		}
		s := end + g
		e := s + l
		if e >= 1<<32 {
			d.fail("token offset overflows 32 bits")
			return
		}
		starts[i], ends[i] = uint32(s), uint32(e)
		end = e
	}
	p.Starts, p.Ends = starts, ends
	used := (r.n + 1) / 2
	if r.n%2 == 1 && r.b[r.n/2]>>4 != 0 {
		d.fail("nonzero padding")
		return
	}
	d.b = d.b[used:]
}

// appendPassageV5 appends the passage section of version 5: the
// fingerprints three bits a position (Passage.appendFp3), then the
// anchors and token offsets as version 4 (appendAnchorsV4).
func appendPassageV5(dst []byte, p *Passage) []byte {
	return appendAnchorsV4(p.appendFp3(dst), p)
}

// decodePassageV5 reads the section appendPassageV5 writes into p.
func decodePassageV5(d *decoder, p *Passage) {
	decodeAnchorsV4(d, p, p.decodeFp3(d))
}

// appendAnchorsV4 appends the anchors and the token offsets of versions 4
// and 5 (see appendPassageV4).
func appendAnchorsV4(dst []byte, p *Passage) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(p.Anchors)))
	if len(p.Anchors) > 0 {
		k := bitstream.RiceParam(uint64(p.Anchors[len(p.Anchors)-1].Pos), len(p.Anchors))
		dst = append(dst, byte(k))
		w := bitstream.NewWriter(dst)
		w.Reserve(len(p.Anchors) * (StoredBits + k + 3) / 8)
		var prev uint32
		for _, a := range p.Anchors {
			w.Bits(StoredHash(a.Hash), StoredBits)
			w.Rice(uint64(a.Pos-prev), k)
			prev = a.Pos
		}
		dst = w.Flush()
	}
	return appendOffsetsV4(dst, p)
}

// decodePassageV4 reads the section appendPassageV4 writes into p.
func decodePassageV4(d *decoder, p *Passage) {
	decodeAnchorsV4(d, p, p.decodeFp(d))
}

// decodeAnchorsV4 reads what appendAnchorsV4 writes into p, for n shingle
// positions.
func decodeAnchorsV4(d *decoder, p *Passage, n int) {
	if d.err != nil {
		return
	}
	// Each anchor takes at least StoredBits + 1 bits.
	na := int(d.uvarint(uint64(d.remaining() * 8 / (StoredBits + 1))))
	p.Anchors = slices.Grow(p.Anchors[:0], na)
	if na > 0 {
		k := int(d.byte())
		if k > 31 {
			d.fail("anchor Rice parameter over 31")
			return
		}
		r := bitReader{b: d.b}
		limit := uint64(1) << bits.Len64(uint64(n)) // over any gap, and a power of 2
		var pos uint64
		for range na {
			h, ok := r.read(StoredBits)
			gap, ok2 := r.rice(k, limit)
			pos += gap
			if !ok || !ok2 || pos >= uint64(max(n, 1)) {
				d.fail("bad anchor")
				return
			}
			p.Anchors = append(p.Anchors, Anchor{Hash: h, Pos: uint32(pos)})
		}
		d.b = d.b[r.used():]
	}
	d.section(&d.sizes.Anchors)
	decodeOffsetsV4(d, p)
}

// nibbleWriter appends 4-bit codes to b, two per byte, the first in the
// low half.
type nibbleWriter struct {
	b    []byte
	half bool // the last byte's high half is free
}

func (w *nibbleWriter) put(c byte) {
	if w.half {
		w.b[len(w.b)-1] |= c << 4
	} else {
		w.b = append(w.b, c)
	}
	w.half = !w.half
}

// varint writes v in 3-bit groups, least significant first, the code's
// high bit set when more groups follow.
func (w *nibbleWriter) varint(v uint32) {
	for v >= 8 {
		w.put(byte(v&7) | 8)
		v >>= 3
	}
	w.put(byte(v))
}

func (w *nibbleWriter) flush() []byte { return w.b }

// nibbleReader reads the codes a nibbleWriter wrote; bad is set past the
// end of b or on a varint over 32 bits.
type nibbleReader struct {
	b   []byte
	n   int // codes read
	bad bool
}

func (r *nibbleReader) get() byte {
	if r.n/2 >= len(r.b) {
		r.bad = true
		return 0
	}
	c := r.b[r.n/2] >> (4 * (r.n % 2)) & 0xF
	r.n++
	return c
}

func (r *nibbleReader) varint() uint64 {
	var v uint64
	for shift := 0; shift < 33; shift += 3 {
		c := r.get()
		v |= uint64(c&7) << shift
		if c&8 == 0 || r.bad {
			return v
		}
	}
	r.bad = true
	return 0
}
