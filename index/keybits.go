package index

import "math/bits"

// bitWriter appends bits to a byte slice, most significant bit first (the
// packed keys record, version 3).
type bitWriter struct {
	b    []byte
	acc  uint64 // pending bits, right-aligned
	nacc uint   // number of pending bits (< 8 between calls)
}

// bits writes the n ≤ 64 low bits of v.
func (w *bitWriter) bits(v uint64, n uint) {
	for n > 0 {
		take := min(n, 56-w.nacc)
		w.acc = w.acc<<take | (v>>(n-take))&(1<<take-1)
		w.nacc += take
		n -= take
		for w.nacc >= 8 {
			w.nacc -= 8
			w.b = append(w.b, byte(w.acc>>w.nacc))
		}
	}
}

// rice writes v with parameter k: v>>k one bits, a zero, the k low bits.
func (w *bitWriter) rice(v uint64, k int) {
	for q := v >> k; q > 0; {
		run := min(q, 48)
		w.bits(1<<run-1, uint(run))
		q -= run
	}
	w.bits(0, 1)
	w.bits(v, uint(k))
}

// flush pads the last byte with zero bits and returns the bytes.
func (w *bitWriter) flush() []byte {
	if w.nacc > 0 {
		w.b = append(w.b, byte(w.acc<<(8-w.nacc)))
		w.acc, w.nacc = 0, 0
	}
	return w.b
}

// bitReader reads what bitWriter wrote; past the end it reads zeros and
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

// riceParam returns the Rice parameter for n gaps summing to span: the
// floor of log2 of the mean gap.
func riceParam(span uint64, n int) int {
	if n == 0 || span < uint64(n) {
		return 0
	}
	return bits.Len64(span/uint64(n)) - 1
}
