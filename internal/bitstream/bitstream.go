// Package bitstream writes bit streams, most significant bit first, with
// Rice codes: the packing of the stored features (sketch) and of the keys
// records (index). Each reader stays with its format, which decides what
// a short or malformed stream means.
package bitstream

import (
	"math/bits"
	"slices"
)

// Writer appends bits to a byte slice, most significant bit first.
type Writer struct {
	b    []byte
	acc  uint64 // pending bits, right-aligned
	nacc uint   // number of pending bits (< 8 between calls)
}

// NewWriter returns a Writer that appends to dst.
func NewWriter(dst []byte) Writer { return Writer{b: dst} }

// Bits writes the n ≤ 64 low bits of v.
func (w *Writer) Bits(v uint64, n uint) {
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

// Reserve grows the slice for about n more bytes.
func (w *Writer) Reserve(n int) { w.b = slices.Grow(w.b, n) }

// Rice writes v with parameter k: v>>k one bits, a zero, the k low bits.
func (w *Writer) Rice(v uint64, k int) {
	q := v >> k
	if n := q + 1 + uint64(k); n <= 48 {
		// The usual case, one write: q ones, a zero, k bits of v.
		w.Bits((1<<q-1)<<(k+1)|v&(1<<k-1), uint(n))
		return
	}
	for q > 0 {
		run := min(q, 48)
		w.Bits(1<<run-1, uint(run))
		q -= run
	}
	w.Bits(0, 1)
	w.Bits(v, uint(k))
}

// Flush pads the last byte with zero bits and returns the bytes.
func (w *Writer) Flush() []byte {
	if w.nacc > 0 {
		w.b = append(w.b, byte(w.acc<<(8-w.nacc)))
		w.acc, w.nacc = 0, 0
	}
	return w.b
}

// RiceParam returns the Rice parameter for n gaps summing to span: the
// floor of log2 of the mean gap (0 when the mean is below 1).
func RiceParam(span uint64, n int) int {
	if n == 0 || span < uint64(n) {
		return 0
	}
	return bits.Len64(span/uint64(n)) - 1
}
