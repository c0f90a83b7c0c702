package main

import (
	"strings"
	"testing"

	"github.com/neardup/neardup/pipeline"
	"github.com/neardup/neardup/sketch"
)

// The peer is fed exactly neardup's shingles: hashing the peer's shingle
// strings the way neardup hashes its tokens gives neardup's shingle set,
// on text with case, punctuation and typographic quotes to normalize. With
// strings.Fields and lowercasing (the peer's input before) "world," and
// "world" were different words.
func TestPeerGetsNeardupShingles(t *testing.T) {
	for _, profile := range []string{"web", "books"} {
		cfg := loadConfig(profile)
		text := []byte("Hello, World! “Don’t” panic — the QUICK brown fox jumps over the lazy dog. " +
			"Page 12 of 300; the fox, again: quick, brown... and the dog (lazy) sleeps on.")
		s, err := sketch.New(pipeline.SketchConfig(cfg), nil)
		if err != nil {
			t.Fatal(err)
		}
		want := map[uint64]bool{}
		for _, h := range s.Shingles(nil, text) {
			want[h] = true
		}
		got := map[uint64]bool{}
		newShingler(cfg).each(text, func(b []byte) {
			var toks []uint64
			for _, w := range strings.Split(string(b), " ") {
				toks = append(toks, sketch.TokenHash([]byte(w)))
			}
			got[sketch.ShingleHash(toks)] = true
		})
		if len(got) != len(want) {
			t.Fatalf("%s: peer has %d shingles, neardup %d", profile, len(got), len(want))
		}
		for h := range want {
			if !got[h] {
				t.Fatalf("%s: a neardup shingle is missing from the peer's input", profile)
			}
		}
	}
}
