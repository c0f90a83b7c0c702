package bitstream

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// refWriter writes one bit at a time: what Writer must produce whatever
// the widths of the writes.
type refWriter struct {
	b []byte
	n uint // bits written
}

func (r *refWriter) bits(v uint64, n uint) {
	for i := int(n) - 1; i >= 0; i-- {
		if r.n%8 == 0 {
			r.b = append(r.b, 0)
		}
		if v>>uint(i)&1 != 0 {
			r.b[len(r.b)-1] |= 0x80 >> (r.n % 8)
		}
		r.n++
	}
}

func (r *refWriter) rice(v uint64, k int) {
	for range v >> k {
		r.bits(1, 1)
	}
	r.bits(0, 1)
	r.bits(v, uint(k))
}

// TestWriterMatchesBitByBit writes random sequences of Bits (every width
// 0…64, values with stray high bits) and Rice codes (short and long unary
// parts) after a prefix, and compares them with the bit-by-bit writer.
func TestWriterMatchesBitByBit(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for round := range 500 {
		prefix := []byte{byte(round)}
		w := NewWriter(bytes.Clone(prefix))
		ref := refWriter{b: bytes.Clone(prefix), n: 8}
		for range r.IntN(200) {
			if r.IntN(3) == 0 {
				k := r.IntN(20)
				v := r.Uint64N(uint64(1) << (k + r.IntN(7)))
				w.Rice(v, k)
				ref.rice(v, k)
				continue
			}
			n := uint(r.IntN(65))
			v := r.Uint64() // high bits beyond n must be ignored
			w.Bits(v, n)
			ref.bits(v, n)
		}
		if got := w.Flush(); !bytes.Equal(got, ref.b) {
			t.Fatalf("round %d: got %x, want %x", round, got, ref.b)
		}
	}
}
