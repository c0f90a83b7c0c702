package bitstream

import (
	"bytes"
	"testing"
)

func TestWriter(t *testing.T) {
	tests := []struct {
		name  string
		write func(w *Writer)
		want  []byte
	}{
		{"nothing", func(w *Writer) {}, nil},
		{"one bit, padded", func(w *Writer) { w.Bits(1, 1) }, []byte{0x80}},
		{"a byte across calls", func(w *Writer) { w.Bits(0xa, 4); w.Bits(0x5, 4) }, []byte{0xa5}},
		{"64 bits", func(w *Writer) { w.Bits(0x0123456789abcdef, 64) }, []byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}},
		{"rice k=2 of 9: 2 ones, a zero, 01", func(w *Writer) { w.Rice(9, 2) }, []byte{0b11001000}},
		{"rice k=0 of 0: a zero", func(w *Writer) { w.Rice(0, 0); w.Bits(1, 1) }, []byte{0b01000000}},
		{"rice with a long unary part (q = 60)", func(w *Writer) { w.Rice(60, 0) }, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWriter(nil)
			tt.write(&w)
			if got := w.Flush(); !bytes.Equal(got, tt.want) {
				t.Errorf("got %08b, want %08b", got, tt.want)
			}
		})
	}
}

func TestWriterAppends(t *testing.T) {
	w := NewWriter([]byte{7})
	w.Reserve(16)
	w.Bits(0xff, 8)
	if got := w.Flush(); !bytes.Equal(got, []byte{7, 0xff}) {
		t.Errorf("got %v, want [7 255]", got)
	}
}

func TestRiceParam(t *testing.T) {
	tests := []struct {
		span uint64
		n    int
		want int
	}{
		{0, 0, 0}, {5, 10, 0}, {10, 10, 0}, {20, 10, 1}, {1 << 20, 256, 12}, {1<<20 - 1, 256, 11},
	}
	for _, tt := range tests {
		if got := RiceParam(tt.span, tt.n); got != tt.want {
			t.Errorf("RiceParam(%d, %d) = %d, want %d", tt.span, tt.n, got, tt.want)
		}
	}
}
