package extract

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// checkTextRef is CheckText one byte at a time, as first written.
func checkTextRef(b []byte) error {
	head := b[:min(len(b), 8192)]
	ctl := 0
	for _, c := range head {
		switch {
		case c == 0:
			return fmt.Errorf("%w: NUL byte", ErrBinary)
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f':
			ctl++
		}
	}
	if len(head) > 0 && ctl*10 > len(head) {
		return fmt.Errorf("%w: %d control bytes in the first %d", ErrBinary, ctl, len(head))
	}
	return nil
}

// TestCheckTextMatchesByteByByte compares CheckText with the byte-at-a-time
// form on texts of every length around the word size and the 8 KiB head,
// with control bytes (NUL included) at random places and at rates on
// either side of the 10 % bound, and bytes above 0x7f.
func TestCheckTextMatchesByteByByte(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	alphabet := []byte("abc XYZ.,\n\t\r\f\x01\x1f\x7f\x80\xe2\x9c\x93\x20\x21")
	binary := 0
	for round := range 3000 {
		n := r.IntN(40)
		if round%3 == 0 {
			n = 8192 - 20 + r.IntN(40)
		}
		b := make([]byte, n)
		rate := r.IntN(25) // percent of bytes drawn as C0 controls
		for i := range b {
			switch {
			case r.IntN(100) < rate:
				b[i] = byte(1 + r.IntN(0x1f))
			default:
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
		}
		if n > 0 && r.IntN(10) == 0 {
			b[r.IntN(n)] = 0
		}
		got, want := CheckText(b), checkTextRef(b)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d (%d bytes): %v, want %v", round, n, got, want)
		}
		if errors.Is(got, ErrBinary) {
			binary++
		}
	}
	if binary == 0 || binary == 3000 {
		t.Fatalf("%d of 3000 texts binary: the draws test one side of the bound only", binary)
	}
}

// TestHasControl checks the word test against each byte value at each
// place of the word, among bytes that are not controls.
func TestHasControl(t *testing.T) {
	for c := range 256 {
		for place := range 8 {
			w := [8]byte{'a', 0x80, 0xff, ' ', 'z', 0x7f, '~', 0x20}
			w[place] = byte(c)
			v := uint64(0)
			for i := 7; i >= 0; i-- {
				v = v<<8 | uint64(w[i])
			}
			if got, want := hasControl(v), c < 0x20; got != want {
				t.Fatalf("byte %#x at %d: hasControl %v, want %v", c, place, got, want)
			}
		}
	}
}
