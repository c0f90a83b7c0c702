// Package bitstream writes bit streams, most significant bit first, with
// Rice codes: the packing of the stored features (sketch) and of the keys
// records (index). Each reader stays with its format, which decides what
// a short or malformed stream means.
package bitstream

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// Writer appends bits to a byte slice, most significant bit first.
type Writer struct {
	b    []byte
	acc  uint64 // pending bits, right-aligned (higher bits are stale)
	nacc uint   // number of pending bits (< 32 between calls)
}

// NewWriter returns a Writer that appends to dst.
func NewWriter(dst []byte) Writer { return Writer{b: dst} }

// Bits writes the n ≤ 64 low bits of v.
func (w *Writer) Bits(v uint64, n uint) {
	if n > 32 {
		w.wide(v, n)
		return
	}
	w.put(v&(1<<n-1), n)
}

// wide is Bits for 32 < n ≤ 64, out of line so that Bits inlines.
func (w *Writer) wide(v uint64, n uint) {
	w.put(v>>32&(1<<(n-32)-1), n-32)
	w.put(v&(1<<32-1), 32)
}

// put writes the n ≤ 32 bits of v < 1<<n, four bytes at a time.
func (w *Writer) put(v uint64, n uint) {
	w.acc = w.acc<<n | v
	w.nacc += n
	if w.nacc >= 32 {
		w.nacc -= 32
		w.b = binary.BigEndian.AppendUint32(w.b, uint32(w.acc>>w.nacc))
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
	for w.nacc >= 8 {
		w.nacc -= 8
		w.b = append(w.b, byte(w.acc>>w.nacc))
	}
	if w.nacc > 0 {
		w.b = append(w.b, byte(w.acc<<(8-w.nacc)))
	}
	w.acc, w.nacc = 0, 0
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
