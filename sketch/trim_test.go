package sketch

import (
	"bytes"
	"slices"
	"testing"
)

// scratchBytes is the capacity, in bytes, of the buffers Trim bounds.
func scratchBytes(s *Sketcher, f *Features) int {
	t := &s.tok
	n := 8*(cap(t.Hash)+cap(s.keys)+cap(s.dist)+cap(s.seq)+cap(s.sort.tmpK)+cap(f.Shingles)) +
		4*(cap(t.Off)+cap(t.SrcEnd)+cap(t.End)+cap(s.pos)+cap(s.sort.tmpV)+cap(f.Passage.Starts)+cap(f.Passage.Ends)) +
		cap(t.HasDigit) + cap(t.Text) + cap(s.once) + cap(s.norm.normed) + cap(s.norm.decoded) +
		16*cap(f.Unique) + cap(f.Passage.Fp)
	return n
}

// TestTrim sketches a long real text, trims, and checks that the scratch
// left is bounded by retainTokens, and that the next document's features
// are those a fresh Sketcher gives.
func TestTrim(t *testing.T) {
	long := readGutenberg(t, "pg2701.txt") // Moby Dick, about 215,000 tokens
	short := readGutenberg(t, "pg11.txt")[:20000]
	cfg := DefaultConfig()
	cfg.PassageWords = 40
	s, f := mustSketcher(t, cfg, long)
	if f.Tokens <= 2*retainTokens {
		t.Fatalf("%d tokens: the text does not exceed the retained scratch", f.Tokens)
	}
	before := scratchBytes(s, f)
	s.Trim()
	f.Trim()
	after := scratchBytes(s, f)
	// Per retained token at most: 8 × 6 + 4 × 7 + 1 × 3 + 16 × 3 (text) + 16 + 1.
	if bound := retainTokens * 144; after > bound || before <= bound {
		t.Errorf("scratch %d bytes before Trim, %d after; want over %d before, at most %d after", before, after, bound, bound)
	}
	if err := s.Sketch(short, f); err != nil {
		t.Fatal(err)
	}
	want := mustSketch(t, cfg, short)
	lim := DefaultLimits()
	if got, want := f.AppendBinary(nil, lim), want.AppendBinary(nil, lim); !bytes.Equal(got, want) {
		t.Errorf("features after Trim differ from a fresh sketcher's (%d vs %d bytes encoded)", len(got), len(want))
	}
	if f.Tokens != want.Tokens || f.Content != want.Content {
		t.Errorf("tokens %d content %x, want %d %x", f.Tokens, f.Content, want.Tokens, want.Content)
	}
}

// TestMaxSketchBytes: a document over MaxSketchBytes is sketched from its
// head only (its scratch does not grow with the rest), and its content
// digest still covers every byte of the rest.
func TestMaxSketchBytes(t *testing.T) {
	book := readGutenberg(t, "pg2701.txt")
	var long []byte
	for len(long) < 3*MaxSketchBytes {
		long = append(long, book...)
	}
	other := bytes.Clone(long)
	other[len(other)-10] ^= 1 // one byte after the cut differs
	cfg := DefaultConfig()
	cfg.PassageWords = 40
	cfg.MaxBytes = len(long)

	head, rest := sketchedPart(long)
	if len(head) > MaxSketchBytes || len(head) < MaxSketchBytes-4096 || len(head)+len(rest) != len(long) {
		t.Fatalf("cut at %d of %d: want within 4 KiB under %d", len(head), len(long), MaxSketchBytes)
	}
	if c := head[len(head)-1]; c != ' ' && c != '\n' && c != '\r' && c != '\t' {
		t.Errorf("cut after %q, want after a space or line break", c)
	}

	s, f := mustSketcher(t, cfg, long)
	full := scratchBytes(s, f)
	hs, hf := mustSketcher(t, cfg, head)
	if hsb := scratchBytes(hs, hf); full > hsb {
		t.Errorf("scratch %d bytes for %d bytes of text, more than the %d of its first %d bytes", full, len(long), hsb, len(head))
	}
	lim := DefaultLimits()
	if !slices.Equal(f.Signature, hf.Signature) || f.Tokens != hf.Tokens {
		t.Errorf("signature or tokens (%d) differ from those of the head (%d)", f.Tokens, hf.Tokens)
	}
	if f.Content == hf.Content {
		t.Error("the long document has the content digest of its head")
	}
	o := mustSketch(t, cfg, other)
	if o.Content == f.Content {
		t.Error("documents differing after the cut have equal content digests")
	}
	if again := mustSketch(t, cfg, bytes.Clone(long)); again.Content != f.Content || !bytes.Equal(again.AppendBinary(nil, lim), f.AppendBinary(nil, lim)) {
		t.Error("the same long document sketched twice differs")
	}
}
