package sketch

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/neardup/neardup/internal/bitstream"
)

// appendOffsetsV4Ref is appendOffsetsV4 as first written: one pass to
// choose the mode, another to write it. The one-pass form must give the
// same bytes.
func appendOffsetsV4Ref(dst []byte, p *Passage) []byte {
	codeBits, nibbles := 0, 0
	var end uint32
	for i, s := range p.Starts {
		g, l := s-end, p.Ends[i]-s
		sym := offsetSymbol(g, l)
		codeBits += int(offsetLens[sym])
		switch {
		case sym == offsetEscape:
			e := nibbleVarintBits(g) + nibbleVarintBits(l)
			codeBits += e
			nibbles += 1 + e/4
		case g == 1 && l <= 14:
			nibbles++
		case g == 2:
			nibbles += 2
		default:
			nibbles += 1 + (nibbleVarintBits(g)+nibbleVarintBits(l))/4
		}
		end = p.Ends[i]
	}
	nt := uint64(len(p.Starts))
	if (codeBits+7)/8 >= (nibbles+1)/2 {
		return appendNibbleOffsets(binary.AppendUvarint(dst, nt<<1), p)
	}
	dst = binary.AppendUvarint(dst, nt<<1|1)
	w := bitstream.NewWriter(dst)
	end = 0
	for i, s := range p.Starts {
		g, l := s-end, p.Ends[i]-s
		sym := offsetSymbol(g, l)
		w.Bits(uint64(offsetCodes.codes[sym]), uint(offsetLens[sym]))
		if sym == offsetEscape {
			nibbleVarint(&w, g)
			nibbleVarint(&w, l)
		}
		end = p.Ends[i]
	}
	return w.Flush()
}

// TestAppendOffsetsV4OnePass compares appendOffsetsV4 with the two-pass
// reference on offsets drawn to take either mode: English-like gaps and
// lengths (mode 1), long words and wide gaps (escapes, mode 0 shorter),
// and mixes, after a prefix already in the buffer.
func TestAppendOffsetsV4OnePass(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	tests := []struct {
		name        string
		gap, length func() uint32
		tokens      int
		mode        byte // the mode bit the encoding must take (2: either)
	}{
		{"english", func() uint32 { return 1 + uint32(r.IntN(10)/8) }, func() uint32 { return 1 + uint32(r.IntN(9)) }, 900, 1},
		{"english, some escapes", func() uint32 { return 1 + uint32(r.IntN(10)/8) + 6*uint32(r.IntN(40)/39) }, func() uint32 { return 1 + uint32(r.IntN(9)) }, 900, 1},
		{"long words", func() uint32 { return 1 }, func() uint32 { return 14 + uint32(r.IntN(40)) }, 300, 0},
		{"wide gaps", func() uint32 { return uint32(r.IntN(5000)) }, func() uint32 { return uint32(r.IntN(70000)) }, 200, 0},
		{"mixed", func() uint32 { return uint32(r.IntN(4)) }, func() uint32 { return uint32(r.IntN(17)) }, 1000, 2},
		{"none", func() uint32 { return 1 }, func() uint32 { return 1 }, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for round := range 20 {
				var p Passage
				var end uint32
				for range tt.tokens {
					s := end + tt.gap()
					p.Starts, p.Ends = append(p.Starts, s), append(p.Ends, s+tt.length())
					end = p.Ends[len(p.Ends)-1]
				}
				prefix := []byte{0xaa, byte(round)}
				got := appendOffsetsV4(bytes.Clone(prefix), &p)
				want := appendOffsetsV4Ref(bytes.Clone(prefix), &p)
				if !bytes.Equal(got, want) {
					t.Fatalf("round %d: %d bytes, the reference %d", round, len(got), len(want))
				}
				if mode := got[len(prefix)] & 1; tt.mode < 2 && mode != tt.mode {
					t.Fatalf("round %d: mode %d, want %d (the draw does not test the mode it is for)", round, mode, tt.mode)
				}
				var q Passage
				d := decoder{b: got[len(prefix):]}
				decodeOffsetsV4(&d, &q)
				if d.err != nil || d.remaining() != 0 || len(q.Starts) != len(p.Starts) {
					t.Fatalf("round %d: decode: %v, %d bytes left, %d tokens of %d", round, d.err, d.remaining(), len(q.Starts), len(p.Starts))
				}
				for i := range p.Starts {
					if q.Starts[i] != p.Starts[i] || q.Ends[i] != p.Ends[i] {
						t.Fatalf("round %d: token %d decodes to [%d,%d), want [%d,%d)", round, i, q.Starts[i], q.Ends[i], p.Starts[i], p.Ends[i])
					}
				}
			}
		})
	}
}
