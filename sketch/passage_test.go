package sketch

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// words returns n random words from a vocabulary large enough that
// shingles of unrelated texts rarely repeat.
func randomWords(r *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "w" + strings.Repeat("x", r.IntN(3)) + string(rune('a'+r.IntN(26))) + string(rune('a'+r.IntN(26))) + string(rune('a'+r.IntN(26)))
	}
	return out
}

func passageConfig(words int) Config {
	c := DefaultConfig()
	c.PassageWords = words
	return c
}

// Two documents sharing a passage of PassageWords words share an anchor,
// wherever the passage sits and however long the documents are (up to the
// window widening of very long ones), and the shared anchors' positions
// fall inside the passage on both sides.
func TestPassageGuarantee(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 12))
	for trial := range 200 {
		t := t
		words := 30 + r.IntN(30)
		shared := randomWords(r, words)
		la, lb := r.IntN(3000), r.IntN(300)
		a := append(append(randomWords(r, la), shared...), randomWords(r, r.IntN(500))...)
		b := append(append(randomWords(r, lb), shared...), randomWords(r, r.IntN(2000))...)
		fa := mustSketch(t, passageConfig(words), []byte(strings.Join(a, " ")))
		fb := mustSketch(t, passageConfig(words), []byte(strings.Join(b, " ")))
		found := false
		for _, x := range fa.Passage.Anchors {
			for _, y := range fb.Passage.Anchors {
				if x.Hash == y.Hash && int(x.Pos) >= la && int(x.Pos) < la+words && int(y.Pos) >= lb && int(y.Pos) < lb+words {
					found = true
				}
			}
		}
		if !found {
			t.Fatalf("trial %d: a shared passage of %d words (at %d and %d) yields no shared anchor", trial, words, la, lb)
		}
	}
}

// The density is about 2/(w+1), and a long document is capped at
// MaxAnchors with a widened window.
func TestPassageAnchorCount(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 13))
	f := mustSketch(t, passageConfig(40), []byte(strings.Join(randomWords(r, 20000), " ")))
	n := len(f.Passage.Fp)
	w := WinnowWindow(40, 5)
	want := 2 * float64(n) / float64(w+1)
	if got := float64(len(f.Passage.Anchors)); got < 0.8*want || got > 1.2*want {
		t.Errorf("%d positions: %v anchors, want about %.0f", n, got, want)
	}
	long := mustSketch(t, passageConfig(40), []byte(strings.Join(randomWords(r, 60000), " ")))
	if len(long.Passage.Anchors) > MaxAnchors || len(long.Passage.Anchors) < MaxAnchors/2 {
		t.Errorf("60,000 words: %d anchors, want at most %d and not far below", len(long.Passage.Anchors), MaxAnchors)
	}
	if len(long.Passage.Fp) != 60000-4 {
		t.Errorf("60,000 words: %d fingerprints, want one per shingle", len(long.Passage.Fp))
	}
}

// Range maps shingle positions to the code points of the text as
// received: the passage's first and last words, through accents, case and
// punctuation.
func TestPassageRange(t *testing.T) {
	text := "Ça commence. The «Quick» brown fox — jumps over the lazy dog; ÉTÉ fini!"
	f := mustSketch(t, passageConfig(5), []byte(text))
	runes := []rune(text)
	// Shingle positions [1, 3): tokens 1 … 1+2+5−2 = 6.
	off, n, ok := f.Passage.Range(1, 3, 5)
	if !ok {
		t.Fatal("range outside the offsets")
	}
	if got := string(runes[off : off+n]); got != "commence. The «Quick» brown fox — jumps" {
		t.Errorf("range = %q", got)
	}
	if utf8.RuneCountInString(text) != len(runes) {
		t.Fatal("bad test text")
	}
	if _, _, ok := f.Passage.Range(len(f.Passage.Starts), len(f.Passage.Starts)+1, 5); ok {
		t.Error("a range past the tokens is ok")
	}
	var g Features
	if err := g.UnmarshalBinary(f.AppendBinary(nil, Limits{Passages: true})); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.Passage.Starts, f.Passage.Starts) || !slices.Equal(g.Passage.Ends, f.Passage.Ends) || !slices.Equal(g.Passage.Fp, f.Passage.Fp) {
		t.Error("passage section changes in a round trip")
	}
}

// Version 5's fingerprints, three bits a position in groups of eight:
// every count round-trips, including partial last groups, in ⌈3n/8⌉
// bytes; nonzero padding and a cut section are errors; version 4's
// four-bit fingerprints decode to their low three bits, which is what
// a fresh document keeps of the same shingle hash.
func TestFingerprintsV5(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 14))
	for _, n := range []int{0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 1000, 1001} {
		var p Passage
		hashes := make([]uint64, n)
		for i := range hashes {
			hashes[i] = r.Uint64()
			p.Fp = append(p.Fp, fingerprint(hashes[i]))
		}
		b := p.appendFp3(nil)
		if want := varintLen(n) + (3*n+7)/8; len(b) != want {
			t.Errorf("%d positions: %d bytes, want %d", n, len(b), want)
		}
		var got Passage
		d := decoder{b: b}
		if m := got.decodeFp3(&d); m != n || d.err != nil || d.remaining() != 0 || !slices.Equal(got.Fp, p.Fp) {
			t.Errorf("%d positions: decoded %d, err %v, %d bytes left, equal %v", n, m, d.err, d.remaining(), slices.Equal(got.Fp, p.Fp))
		}
		for cut := range len(b) {
			d := decoder{b: b[:cut]}
			got.decodeFp3(&d)
			if d.err == nil {
				t.Fatalf("%d positions cut to %d of %d bytes: no error", n, cut, len(b))
			}
		}
		if pad := (3*n+7)/8*8 - 3*n; pad > 0 {
			bad := slices.Clone(b)
			bad[len(bad)-1] |= 0x80
			d := decoder{b: bad}
			if got.decodeFp3(&d); d.err == nil {
				t.Errorf("%d positions: nonzero padding decodes", n)
			}
		}
		// Version 4 stored the top four bits of each hash.
		var old Passage
		for _, h := range hashes {
			old.Fp = append(old.Fp, byte(h>>60))
		}
		d = decoder{b: old.appendFp(nil)}
		if got.decodeFp(&d); !slices.Equal(got.Fp, p.Fp) {
			t.Errorf("%d positions: version 4 fingerprints decode to other values than version 5 keeps", n)
		}
	}
}
