package index

import "math/bits"

// bitReader reads what a bitstream.Writer wrote; past the end it reads zeros and
// sets short.
type bitReader struct {
	b     []byte
	pos   uint // bits read
	short bool
}

// read reads n ≤ 64 bits.
func (r *bitReader) read(n int) uint64 {
	var v uint64
	for n > 0 {
		i := r.pos / 8
		if int(i) >= len(r.b) {
			r.short = true
			return v << n
		}
		off := r.pos % 8
		take := min(uint(n), 8-off)
		c := uint64(r.b[i]>>(8-off-take)) & (1<<take - 1)
		v = v<<take | c
		r.pos += take
		n -= int(take)
	}
	return v
}

// rice reads one Rice code with parameter k; false past the end or when
// the value would reach limit.
func (r *bitReader) rice(k int, limit uint64) (uint64, bool) {
	var q uint64
	for {
		i := r.pos / 8
		if int(i) >= len(r.b) {
			return 0, false
		}
		off := r.pos % 8
		// The ones left in this byte, from off on.
		ones := uint(bits.LeadingZeros8(^(r.b[i] << off)))
		if ones >= 8-off {
			q += uint64(8 - off)
			r.pos += 8 - off
		} else {
			q += uint64(ones)
			r.pos += ones + 1
			break
		}
		if q > limit>>k {
			return 0, false
		}
	}
	if q > limit>>k {
		return 0, false
	}
	v := q<<k | r.read(k)
	return v, !r.short && v < limit
}

// used returns the bytes consumed, the last one padded.
func (r *bitReader) used() int { return int((r.pos + 7) / 8) }
