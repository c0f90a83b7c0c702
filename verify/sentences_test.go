package verify

import (
	"math/rand/v2"
	"testing"

	"github.com/neardup/neardup/sketch"
)

// storedSentences sketches text in sentence mode and returns its stored
// features, as the pipeline verifies them.
func storedSentences(t *testing.T, text string) *sketch.Features {
	t.Helper()
	c := sketch.DefaultConfig()
	c.Sentence = sketch.SentenceConfig{On: true}.WithDefaults()
	s, err := sketch.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	var f, st sketch.Features
	if err := s.Sketch([]byte(text), &f); err != nil {
		t.Fatal(err)
	}
	f.Stored(&st, sketch.Limits{Sentences: true})
	return &st
}

func TestSentencePairs(t *testing.T) {
	a := storedSentences(t, "The bridge over the river was completed in 1931 after four years of work. "+
		"Its main span is 503 metres long and carries six lanes of traffic. "+
		"Local legend says the first person to cross it was a baker on a bicycle.")
	b := storedSentences(t, "Nothing in this sentence resembles any sentence of the other text at all. "+
		"The bridge over the river was completed in 1932 after four years of work. "+
		"Its main span is 503 metres long and carries six lanes of traffic.")
	p := WebProfile()
	p.Sentences = &SentenceCheck{}
	v, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	got := v.Verify(a, b).Sentences
	want := []SentencePair{
		{A: 0, B: 1, Edit: EditNumberOrDate},
		{A: 1, B: 2, Similarity: 1, Edit: EditIdentical},
	}
	if len(got) != len(want) {
		t.Fatalf("pairs %+v, want %+v", got, want)
	}
	for i, w := range want {
		g := got[i]
		if g.A != w.A || g.B != w.B || g.Edit != w.Edit || (w.Similarity != 0 && g.Similarity != w.Similarity) || g.Similarity < DefaultEdit {
			t.Errorf("pair %d: %+v, want %+v", i, g, w)
		}
	}
	// Without the check, no pairs; with another band count, none either.
	if v, _ := New(WebProfile()); len(v.Verify(a, b).Sentences) != 0 {
		t.Error("sentences matched without the sentence check")
	}
	if _, err := New(Profile{Name: "x", Checks: WebProfile().Checks, Sentences: &SentenceCheck{Threshold: 2}}); err == nil {
		t.Error("threshold 2 accepted")
	}
}

// TestSentencePairsCap checks MaxMatches: a sentence repeated in the
// candidate is matched at most that many times.
func TestSentencePairsCap(t *testing.T) {
	s := "A sentence that the candidate repeats many times over, word for word. "
	a := storedSentences(t, s)
	var long string
	for range 8 {
		long += s
	}
	b := storedSentences(t, long)
	p := WebProfile()
	p.Sentences = &SentenceCheck{MaxMatches: 3}
	v, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	got := v.Verify(a, b).Sentences
	if len(got) != 3 || got[0].B != 0 || got[2].B != 2 {
		t.Errorf("pairs %+v, want the first 3 of 8 identical sentences", got)
	}
}

func TestZeroBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		w := r.Uint64()
		for b := range 8 { // many zero bytes
			if r.IntN(3) == 0 {
				w &^= 0xff << (8 * b)
			}
		}
		want := 0
		for b := range 8 {
			if byte(w>>(8*b)) == 0 {
				want++
			}
		}
		if got := zeroBytes(w); got != want {
			t.Fatalf("zeroBytes(%#x) = %d, want %d", w, got, want)
		}
	}
	x := []byte("abcdefghijklmnopqrstu")
	y := []byte("abcdefghijklmnopqrstu")
	if j := sigJaccard(x, y); j != 1 {
		t.Errorf("equal signatures estimate %v", j)
	}
	y[20], y[3] = 'x', 'x'
	if j := sigJaccard(x, y); j > 0.91 || j < 0.9 {
		t.Errorf("19 of 21 equal estimate %v", j)
	}
}
