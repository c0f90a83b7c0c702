package sketch

import (
	"crypto/sha256"
	"encoding/binary"
	"strings"
	"testing"
)

// TestContentDigestDefinition computes the content digest as
// ContentDigest documents it, from the tokens' words, and compares it with
// what Sketch gives: tokens of one byte, of 127 and of 128 or more bytes
// (a length of two uvarint bytes), non-ASCII text, and a document
// sketched after another (the sketcher's buffers reused).
func TestContentDigestDefinition(t *testing.T) {
	s, err := New(DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, text string }{
		{"short", "a b c"},
		{"long tokens", "start " + strings.Repeat("x", 127) + " mid " + strings.Repeat("y", 128) + " " + strings.Repeat("z", 20000) + " end"},
		{"unicode", "Ça “va” — très bien, Straße ΣΊΣΥΦΟΣ " + strings.Repeat("é", 100)},
		{"after a long one", "the quick brown fox jumps over the lazy dog"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Features
			if err := s.Sketch([]byte(tt.text), &f); err != nil {
				t.Fatal(err)
			}
			tok := s.Tokens()
			h := sha256.New()
			var lens []byte
			for i := range tok.Len() {
				h.Write(tok.Word(i))
				lens = binary.AppendUvarint(lens, uint64(len(tok.Word(i))))
			}
			h.Write(lens)
			var want ContentDigest
			copy(want[:], h.Sum(nil))
			if f.Content != want {
				t.Errorf("digest %x, want %x (%d tokens)", f.Content, want, tok.Len())
			}
		})
	}
}
