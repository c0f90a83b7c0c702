package sketch

import "testing"

// Golden vectors pin the frozen hash; they were cross-checked against an
// independent Python implementation of FNV-1a 64 + SplitMix64. If one of these changes, every stored
// signature, band key and unique-word sequence changes with it.
func TestTokenHashGolden(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
	}{
		{"", 0xf52a15e9a9b5e89b},
		{"a", 0x02c0bdbf481420f8},
		{"hello", 0x16fe05a1c75bcd0f},
		{"naïve", 0xde6b847127ce5820},
	}
	for _, tt := range tests {
		if got := TokenHash([]byte(tt.in)); got != tt.want {
			t.Errorf("TokenHash(%q) = %#x, want %#x", tt.in, got, tt.want)
		}
	}
}

func TestShingleHashGolden(t *testing.T) {
	toks := []uint64{TokenHash([]byte("the")), TokenHash([]byte("quick")), TokenHash([]byte("brown")), TokenHash([]byte("fox")), TokenHash([]byte("jumps"))}
	const want uint64 = 0xd73b2d4fd7fa51e0
	if got := ShingleHash(toks); got != want {
		t.Errorf("ShingleHash = %#x, want %#x", got, want)
	}
}

func TestMix64Bijective(t *testing.T) {
	seen := map[uint64]bool{}
	for i := range uint64(1 << 16) {
		h := Mix64(i)
		if seen[h] {
			t.Fatalf("Mix64 collision at %d", i)
		}
		seen[h] = true
	}
}
