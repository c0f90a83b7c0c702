package sketch

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func sentenceConfig() Config {
	c := DefaultConfig()
	c.Sentence = SentenceConfig{On: true}.WithDefaults()
	return c
}

// TestSentenceFeatures checks what sentence mode sketches: the sentences
// above the minimum length, their places in code points of the text as
// received, their text, and band keys that near-identical sentences share
// and unrelated ones do not.
func TestSentenceFeatures(t *testing.T) {
	text := "Über den Wolken: a short line. The observatory was founded in 1879 by the astronomer Anna Winter. " +
		"Tiny. The telescope mirror was polished by hand over three long winters in the workshop."
	f := mustSketch(t, sentenceConfig(), []byte(text))
	s := f.Sentences
	if s.Bands != 10 || len(s.Items) != 2 || s.Skipped != 2 {
		t.Fatalf("bands %d, %d sentences, %d skipped; want 10, 2, 2", s.Bands, len(s.Items), s.Skipped)
	}
	runes := []rune(text)
	for _, it := range s.Items {
		if got := string(runes[it.Offset : it.Offset+it.Length]); got != string(it.Text) {
			t.Errorf("sentence at %d+%d reads %q, text %q", it.Offset, it.Length, got, it.Text)
		}
		if len(it.Keys) != 10 {
			t.Errorf("%d keys", len(it.Keys))
		}
	}
	if !strings.HasPrefix(string(s.Items[0].Text), "The observatory") || s.Items[0].Offset != utf8.RuneCountInString("Über den Wolken: a short line. ") {
		t.Errorf("first sentence %q at %d", s.Items[0].Text, s.Items[0].Offset)
	}

	// A copy edit shares most band keys; another sentence none.
	g := mustSketch(t, sentenceConfig(), []byte("the Observatory was founded in 1879 by the astronomer Anna Winter!"))
	shared := func(a, b []uint64) int {
		n := 0
		for i := range a {
			if a[i] == b[i] {
				n++
			}
		}
		return n
	}
	if n := shared(s.Items[0].Keys, g.Sentences.Items[0].Keys); n < 9 {
		t.Errorf("copy-edited sentence shares %d of 10 band keys", n)
	}
	if n := shared(s.Items[1].Keys, g.Sentences.Items[0].Keys); n != 0 {
		t.Errorf("unrelated sentences share %d band keys", n)
	}

	// Stored and decoded agree.
	lim := DefaultLimits()
	var stored, decoded Features
	f.Stored(&stored, lim)
	if err := decoded.UnmarshalBinary(f.AppendBinary(nil, lim)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(stored.Sentences, decoded.Sentences) {
		t.Errorf("stored %+v\ndecoded %+v", stored.Sentences, decoded.Sentences)
	}
	if decoded.Sentences.Items[0].Keys[0] != s.Items[0].Keys[0]>>32 {
		t.Error("decoded keys are not the top 32 bits")
	}
	// Without the limit, nothing is stored.
	lim.Sentences = false
	if err := decoded.UnmarshalBinary(f.AppendBinary(nil, lim)); err != nil || len(decoded.Sentences.Items) != 0 {
		t.Errorf("sentences stored without the limit: %v", err)
	}
}

// TestSentenceCaps checks MaxSentences and the configuration's bounds.
func TestSentenceCaps(t *testing.T) {
	c := sentenceConfig()
	c.Sentence.MaxSentences = 3
	text := strings.Repeat("This sentence is long enough to be sketched on its own. ", 10)
	f := mustSketch(t, c, []byte(text))
	if len(f.Sentences.Items) != 3 || f.Sentences.Skipped != 7 {
		t.Errorf("%d sentences, %d skipped; want 3 and 7", len(f.Sentences.Items), f.Sentences.Skipped)
	}
	for _, bad := range []SentenceConfig{
		{On: true, CharGram: 10, Bands: 10, Rows: 8, MinChars: 50, MaxChars: 10, MaxSentences: 5},
		{On: true, CharGram: 10, Bands: 100, Rows: 8, MinChars: 1, MaxChars: 10, MaxSentences: 1000},
		{On: true, CharGram: 0, Bands: 10, Rows: 8, MinChars: 1, MaxChars: 10, MaxSentences: 5},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}
