package sketch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// decodeShinglesRef is decodeShingles as it was, a Rice code at a time
// through bitReader.rice: TestDecodeShinglesReference holds the one that
// reads the common code inline to its answers.
func (f *Features) decodeShinglesRef(d *decoder, old bool) {
	width := 32
	shift := d.byte()
	count := d.uvarint(1 << 40)
	n := d.uvarint(uint64(d.remaining()) * 8)
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
	f.Shingles = slices.Grow(f.Shingles, int(n))
	r := bitReader{b: d.b}
	if !old {
		width = min(width, int(shift)+StoredBits)
	}
	limit := uint64(1) << (width - int(shift))
	var v uint64
	for i := range int(n) {
		gap, ok := r.rice(int(k), limit)
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
	d.b = d.b[r.used():]
}

// TestDecodeShinglesReference decodes shingle sections of many shapes
// (sizes, sampling shifts, Rice parameters chosen and forced, old and new
// widths), whole, truncated and with bytes changed, with decodeShingles
// and the reference: the same values, the same error and the same bytes
// left.
func TestDecodeShinglesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 40))
	decoded, failed := 0, 0
	for round := range 3000 {
		shift := r.IntN(12)
		n := []int{0, 1, 2, 5, 40, 256, 700}[r.IntN(7)]
		vals := make([]uint64, 0, n)
		for range n {
			vals = append(vals, uint64(r.Uint32())&shingleMask(shift)&^(1<<shift-1))
		}
		slices.Sort(vals)
		vals = slices.Compact(vals)
		count := len(vals) + r.IntN(3)
		b := appendShingleSection(nil, count, shift, vals)
		if r.IntN(4) == 0 { // another Rice parameter: shift, count, n, then k
			b[1+len(uvarintBytes(uint64(count)))+len(uvarintBytes(uint64(len(vals))))] = byte(r.IntN(34))
		}
		b = append(b, byte(r.IntN(256)), byte(r.IntN(256))) // what follows the section
		switch r.IntN(3) {
		case 1:
			b = b[:r.IntN(len(b)+1)]
		case 2:
			for range 1 + r.IntN(3) {
				b[r.IntN(len(b))] ^= byte(1 << r.IntN(8))
			}
		}
		old := r.IntN(5) == 0
		var got, want Features
		dg, dw := decoder{b: b, mark: len(b)}, decoder{b: b, mark: len(b)}
		got.decodeShingles(&dg, old)
		want.decodeShinglesRef(&dw, old)
		if old && dw.err == nil { // the reference stops before the older records' masking
			got.Shingles = want.Shingles
		}
		if fmt.Sprint(dg.err) != fmt.Sprint(dw.err) || len(dg.b) != len(dw.b) || !slices.Equal(got.Shingles, want.Shingles) ||
			got.ShingleShift != want.ShingleShift || got.ShingleCount != want.ShingleCount {
			t.Fatalf("round %d: decodeShingles gives %d values, %d bytes left, err %v; the reference %d, %d, %v",
				round, len(got.Shingles), len(dg.b), dg.err, len(want.Shingles), len(dw.b), dw.err)
		}
		if dw.err == nil {
			decoded++
		} else {
			failed++
		}
	}
	if decoded < 1000 || failed < 500 {
		t.Errorf("%d sections decoded, %d failed: the test covers too little", decoded, failed)
	}
}

func uvarintBytes(v uint64) []byte {
	var b []byte
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}
