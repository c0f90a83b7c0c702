package sketch

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/clipperhouse/uax29/v2/sentences"
)

// splitStrings returns the sentences of text as strings.
func splitStrings(s *SentenceSplitter, text string) []string {
	var out []string
	for _, st := range s.Split([]byte(text), nil) {
		out = append(out, text[st.Start:st.End])
	}
	return out
}

func TestSentenceSplit(t *testing.T) {
	tests := []struct {
		name  string
		lines LineBreaks
		text  string
		want  []string
	}{
		{"empty", LinesAuto, "", nil},
		{"only space", LinesAuto, " \n\t\u00a0\u3000 ", nil},
		{"plain", LinesAuto, "The cat sat. The dog ran! Did it? Yes.",
			[]string{"The cat sat.", "The dog ran!", "Did it?", "Yes."}},
		{"trimmed", LinesAuto, "  \tOne sentence.   Two.  \n",
			[]string{"One sentence.", "Two."}},

		// Abbreviations.
		{"title", LinesAuto, "Dr. Smith arrived. He was late.",
			[]string{"Dr. Smith arrived.", "He was late."}},
		{"titles upper case", LinesAuto, "MR. BROWN AND PROF. GREEN LEFT. THEN.",
			[]string{"MR. BROWN AND PROF. GREEN LEFT.", "THEN."}},
		{"e.g. before a name", LinesAuto, "Cities, e.g. Paris, are big. Then stop.",
			[]string{"Cities, e.g. Paris, are big.", "Then stop."}},
		{"e.g. before lower case (UAX 29)", LinesAuto, "Use tools, e.g. hammers. Then stop.",
			[]string{"Use tools, e.g. hammers.", "Then stop."}},
		{"et al.", LinesAuto, "Smith et al. Found it first. Others agreed.",
			[]string{"Smith et al. Found it first.", "Others agreed."}},
		{"vs.", LinesAuto, "It was Kramer vs. Kramer. A film.",
			[]string{"It was Kramer vs. Kramer.", "A film."}},
		{"number abbreviations before digits", LinesAuto, "See p. 5 and fig. 3 in vol. 2. Done.",
			[]string{"See p. 5 and fig. 3 in vol. 2.", "Done."}},
		{"No. before a digit", LinesAuto, "No. 5 was sold. It was the No. 1 hit.",
			[]string{"No. 5 was sold.", "It was the No. 1 hit."}},
		{"no. before a word ends the sentence", LinesAuto, "He said no. Then he left.",
			[]string{"He said no.", "Then he left."}},
		{"month abbreviation before a day", LinesAuto, "Born on Jan. 5 in Ulm. Then.",
			[]string{"Born on Jan. 5 in Ulm.", "Then."}},
		{"etc. ends a sentence", LinesAuto, "Apples, pears, etc. Then plums.",
			[]string{"Apples, pears, etc.", "Then plums."}},
		{"U.S. ends a sentence", LinesAuto, "He moved to the U.S. He liked it.",
			[]string{"He moved to the U.S.", "He liked it."}},
		{"U.S. before lower case (UAX 29)", LinesAuto, "The U.S. economy grew. It did.",
			[]string{"The U.S. economy grew.", "It did."}},
		{"abbreviation at a paragraph end", LinesAuto, "Ask the Dr.\n\nHe knows.",
			[]string{"Ask the Dr.", "He knows."}},
		{"abbreviation at the end", LinesAuto, "Ask Dr.", []string{"Ask Dr."}},

		// Initials.
		{"initials spaced", LinesAuto, "J. R. R. Tolkien wrote it. It sold well.",
			[]string{"J. R. R. Tolkien wrote it.", "It sold well."}},
		{"initials dotted", LinesAuto, "J.R.R. Tolkien wrote it. H.G. Wells did not.",
			[]string{"J.R.R. Tolkien wrote it.", "H.G. Wells did not."}},
		{"initial non-ASCII", LinesAuto, "É. Zola wrote it. Done.",
			[]string{"É. Zola wrote it.", "Done."}},

		// Decimals.
		{"decimals", LinesAuto, "Pi is 3.14 today. It grew 1.5 million times.",
			[]string{"Pi is 3.14 today.", "It grew 1.5 million times."}},
		{"decimal money", LinesAuto, "It cost $1.5 million. Then 2.75 more.",
			[]string{"It cost $1.5 million.", "Then 2.75 more."}},
		{"number ends a sentence", LinesAuto, "Meet at 3.30. OK then.",
			[]string{"Meet at 3.30.", "OK then."}},
		{"year ends a sentence", LinesAuto, "He was born in 1879. In 1880 he left.",
			[]string{"He was born in 1879.", "In 1880 he left."}},
		// A limit of UAX #29 (rule SB8 looks past digits for a lower-case
		// word): a sentence that starts with a number stays joined to the
		// one before.
		{"sentence starting with a number", LinesAuto, "He was born in 1879. 1880 was dry.",
			[]string{"He was born in 1879. 1880 was dry."}},

		// Ellipses.
		{"ellipsis before upper case", LinesAuto, "He waited... Then he left.",
			[]string{"He waited...", "Then he left."}},
		{"ellipsis before lower case", LinesAuto, "He waited... and left. Then.",
			[]string{"He waited... and left.", "Then."}},
		{"ellipsis character", LinesAuto, "He waited… and left. Or did he…",
			[]string{"He waited… and left.", "Or did he…"}},

		// Quotes and brackets.
		{"quote closes a sentence", LinesAuto, "He said \"Stop.\" Then he left.",
			[]string{"He said \"Stop.\"", "Then he left."}},
		{"curly quotes", LinesAuto, "He said “Stop.” Then he left.",
			[]string{"He said “Stop.”", "Then he left."}},
		{"quote then lower case", LinesAuto, "\"Stop.\" he said. Fine.",
			[]string{"\"Stop.\" he said.", "Fine."}},
		{"question in quotes", LinesAuto, "“Why?” she asked. Nobody knew.",
			[]string{"“Why?” she asked.", "Nobody knew."}},
		{"exclamation then lower case", LinesAuto, "Stop! he cried. Why? Because!",
			[]string{"Stop! he cried.", "Why?", "Because!"}},
		{"question then upper case", LinesAuto, "“Why?” Nobody knew.",
			[]string{"“Why?”", "Nobody knew."}},
		{"bracketed sentence", LinesAuto, "Was it over? (Yes.) Fine!",
			[]string{"Was it over?", "(Yes.)", "Fine!"}},

		// Lines and paragraphs without final punctuation.
		{"paragraphs", LinesAuto, "Paragraph one ends here\n\nParagraph two ends too",
			[]string{"Paragraph one ends here", "Paragraph two ends too"}},
		{"heading line", LinesAuto, "A Heading Without A Stop\nThe first line. The second.",
			[]string{"A Heading Without A Stop", "The first line.", "The second."}},
		{"list items", LinesAuto, "Ingredients\n- flour\n- 2 eggs\n3 spoons of sugar",
			[]string{"Ingredients", "- flour", "- 2 eggs", "3 spoons of sugar"}},
		{"hard wrap before lower case", LinesAuto, "It was the best\nof times, it was\nthe worst of times.",
			[]string{"It was the best\nof times, it was\nthe worst of times."}},
		{"hard wrap before upper case", LinesAuto, "He met\nMr. Holmes there.",
			[]string{"He met", "Mr. Holmes there."}},
		{"CR LF wrap", LinesAuto, "It was the best\r\nof times.\r\n\r\nNext paragraph",
			[]string{"It was the best\r\nof times.", "Next paragraph"}},
		{"blank line with spaces", LinesAuto, "one\n  \t\nsame case but new paragraph",
			[]string{"one", "same case but new paragraph"}},
		{"line separator", LinesAuto, "a line\u2028and more",
			[]string{"a line\u2028and more"}},
		{"paragraph separator", LinesAuto, "a line\u2029and more",
			[]string{"a line", "and more"}},
		{"lines end", LinesEnd, "It was the best\nof times.",
			[]string{"It was the best", "of times."}},
		{"lines join", LinesJoin, "He met\nMr. Holmes there.\n\nNext paragraph\nHere",
			[]string{"He met\nMr. Holmes there.", "Next paragraph\nHere"}},
		{"lines join CR", LinesJoin, "He met\rMr. Holmes.", []string{"He met\rMr. Holmes."}},
		{"lines join keeps paragraphs", LinesJoin, "Title\n\nBody text", []string{"Title", "Body text"}},

		// Other scripts.
		{"german", LinesAuto, "Der Bär kam um 3 Uhr. Er ging um 4.",
			[]string{"Der Bär kam um 3 Uhr.", "Er ging um 4."}},
		{"russian", LinesAuto, "Да, хорошо. Он родился в 1879 г. в Ульме.",
			[]string{"Да, хорошо.", "Он родился в 1879 г. в Ульме."}},
		{"japanese", LinesAuto, "東京は大きい。大阪も。", []string{"東京は大きい。", "大阪も。"}},
		{"hindi danda", LinesAuto, "यह अच्छा है। वह भी।", []string{"यह अच्छा है।", "वह भी।"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &SentenceSplitter{Lines: tt.lines}
			got := splitStrings(s, tt.text)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Split(%q)\n got %q\nwant %q", tt.text, got, tt.want)
			}
			checkSentences(t, []byte(tt.text), s.Split([]byte(tt.text), nil))
		})
	}
}

func TestSentenceOffsets(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []Sentence
	}{
		{"ascii", "Hi there. Bye.", []Sentence{
			{Start: 0, End: 9, Offset: 0, Length: 9},
			{Start: 10, End: 14, Offset: 10, Length: 4},
		}},
		{"two-byte", "Ça va? Très bien.", []Sentence{
			{Start: 0, End: 7, Offset: 0, Length: 6},
			{Start: 8, End: 19, Offset: 7, Length: 10},
		}},
		{"three and four bytes", "東京。 😀 Yes. Ok", []Sentence{
			{Start: 0, End: 9, Offset: 0, Length: 3},
			{Start: 10, End: 19, Offset: 4, Length: 6},
			{Start: 20, End: 22, Offset: 11, Length: 2},
		}},
		{"leading non-breaking space", "\u00a0\u00a0Née. Ja.", []Sentence{
			{Start: 4, End: 9, Offset: 2, Length: 4},
			{Start: 10, End: 13, Offset: 7, Length: 3},
		}},
		// Invalid UTF-8 is read as Windows-1252: every byte is one code
		// point, so byte and code point offsets agree, and 0xA0 is a
		// non-breaking space that trimming drops.
		{"invalid utf-8", "caf\xe9 ok. \xa0Na\xefve. \xc9t\xe9", []Sentence{
			{Start: 0, End: 8, Offset: 0, Length: 8},
			{Start: 10, End: 16, Offset: 10, Length: 6},
			{Start: 17, End: 20, Offset: 17, Length: 3},
		}},
		// Once the text is not valid UTF-8, even its valid sequences count
		// a code point per byte ("é" is "Ã©"), as the tokenizer reads it.
		{"invalid utf-8 with valid sequences", "é\xff. Ünd.", []Sentence{
			{Start: 0, End: 4, Offset: 0, Length: 4},
			{Start: 5, End: 10, Offset: 5, Length: 5},
		}},
		{"joined line separators keep offsets", "a\u2028b\u0085c\r\nd. E.", []Sentence{
			{Start: 0, End: 12, Offset: 0, Length: 9},
			{Start: 13, End: 15, Offset: 10, Length: 2},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s SentenceSplitter
			got := s.Split([]byte(tt.text), nil)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Split(%q)\n got %+v\nwant %+v", tt.text, got, tt.want)
			}
			checkSentences(t, []byte(tt.text), got)
		})
	}
}

// TestSentenceReuse checks that Split appends to dst and that a splitter
// gives the same answers whatever it split before.
func TestSentenceReuse(t *testing.T) {
	texts := []string{
		"Dr. Smith came.\nthen left. Bye.",
		"caf\xe9. Ok.",
		"Über 3.5 km. Weiter.",
		"It was the best\nof times.",
		"",
	}
	var reused SentenceSplitter
	for round := range 2 {
		for _, text := range texts {
			var fresh SentenceSplitter
			want := fresh.Split([]byte(text), nil)
			prefix := []Sentence{{Start: -1}}
			got := reused.Split([]byte(text), prefix)
			if got[0] != prefix[0] || !slices.Equal(got[1:], want) {
				t.Errorf("round %d: reused Split(%q) = %+v, want %+v after the prefix", round, text, got, want)
			}
		}
	}
}

// TestSentenceSplitDoesNotModifyInput checks that joining lines and
// decoding happen in the splitter's buffer, not the caller's text.
func TestSentenceSplitDoesNotModifyInput(t *testing.T) {
	for _, text := range []string{"a\nb\nc. D\n\ne", "caf\xe9\nb. C"} {
		in := []byte(text)
		s := SentenceSplitter{Lines: LinesJoin}
		s.Split(in, nil)
		if string(in) != text {
			t.Errorf("Split changed its input %q to %q", text, in)
		}
	}
}

func TestSentenceSplitAllocs(t *testing.T) {
	text := []byte(strings.Repeat("Dr. Smith met J. R. R. Tolkien at 3.30 p.m.\nthen left. Ça va? Très bien. ", 20))
	bad := append([]byte("caf\xe9 \n"), text...)
	var s SentenceSplitter
	dst := s.Split(text, nil)
	dst = s.Split(bad, dst[:0])
	for _, in := range [][]byte{text, bad} {
		allocs := testing.AllocsPerRun(20, func() { dst = s.Split(in, dst[:0]) })
		if allocs != 0 {
			t.Errorf("Split allocates %v times per call after warm-up, want 0", allocs)
		}
	}
}

// checkSentences checks the invariants of Split's output: spans in range,
// non-empty, increasing and non-overlapping, trimmed, code point offsets
// consistent with the bytes, and (for valid UTF-8) every non-space
// character of text inside some sentence.
func checkSentences(t *testing.T, text []byte, got []Sentence) {
	t.Helper()
	valid := utf8.Valid(text)
	prevEnd, prevOff := 0, 0
	for i, s := range got {
		if s.Start < prevEnd || s.End <= s.Start || s.End > len(text) {
			t.Fatalf("sentence %d: bytes [%d, %d) out of order or range (previous end %d, len %d)", i, s.Start, s.End, prevEnd, len(text))
		}
		if s.Offset < prevOff || s.Length <= 0 {
			t.Fatalf("sentence %d: code points [%d, +%d) out of order (previous end %d)", i, s.Offset, s.Length, prevOff)
		}
		if !valid {
			// One code point per byte.
			if s.Offset != s.Start || s.Length != s.End-s.Start {
				t.Fatalf("sentence %d of invalid UTF-8: bytes [%d, %d) but code points [%d, +%d)", i, s.Start, s.End, s.Offset, s.Length)
			}
		} else {
			if off := utf8.RuneCount(text[:s.Start]); s.Offset != off {
				t.Fatalf("sentence %d: offset %d, want %d code points", i, s.Offset, off)
			}
			if n := utf8.RuneCount(text[s.Start:s.End]); s.Length != n {
				t.Fatalf("sentence %d: length %d, want %d code points", i, s.Length, n)
			}
			sent := text[s.Start:s.End]
			if r, _ := utf8.DecodeRune(sent); unicode.IsSpace(r) {
				t.Fatalf("sentence %d %q starts with space", i, sent)
			}
			if r, _ := utf8.DecodeLastRune(sent); unicode.IsSpace(r) {
				t.Fatalf("sentence %d %q ends with space", i, sent)
			}
			// Between sentences there is only white space.
			if gap := text[prevEnd:s.Start]; len(bytes.TrimFunc(gap, unicode.IsSpace)) > 0 {
				t.Fatalf("before sentence %d: %q dropped", i, gap)
			}
		}
		prevEnd, prevOff = s.End, s.Offset+s.Length
	}
	if valid {
		if tail := text[prevEnd:]; len(bytes.TrimFunc(tail, unicode.IsSpace)) > 0 {
			t.Fatalf("after the last sentence: %q dropped", tail)
		}
	}
}

func FuzzSentenceSplit(f *testing.F) {
	for _, seed := range []string{
		"",
		"Dr. Smith arrived. He was late.",
		"J. R. R. Tolkien wrote it. It sold well.",
		"Pi is 3.14 today. It grew 1.5 million times.",
		"He said \"Stop.\" Then he left.",
		"He waited... Then he left. Or did he…",
		"A heading\nThe first line. The second.\n\nNext paragraph",
		"It was the best\r\nof times.\u2028x\u2029y\u0085z",
		"Der Bär kam um 3 Uhr. Да, хорошо. 東京は大きい。大阪も。",
		"caf\xe9 ok. \xa0Na\xefve. \xff",
		"é\xff. Ünd.\n\x85\xc2",
		". . . .. \n\n.",
		"e.g.\tParis. vol.\n2",
	} {
		f.Add(seed, uint8(LinesAuto))
	}
	f.Fuzz(func(t *testing.T, text string, lines uint8) {
		s := SentenceSplitter{Lines: LineBreaks(lines % 3)}
		in := []byte(text)
		got := s.Split(in, nil)
		if string(in) != text {
			t.Fatalf("Split modified its input")
		}
		checkSentences(t, in, got)
		// Deterministic and independent of earlier calls.
		again := s.Split(in, nil)
		if !slices.Equal(got, again) {
			t.Fatalf("second Split differs: %+v vs %+v", got, again)
		}
	})
}

// BenchmarkSentenceSplit compares Split with its peer, the bare UAX #29
// iterator it builds on (no abbreviation rule, no offsets in code points).
func BenchmarkSentenceSplit(b *testing.B) {
	para := "Dr. Smith met J. R. R. Tolkien at 3.30 p.m. on Jan. 5 in the U.S. He said “Why?” and left. " +
		"It was the best\nof times. Ça va? Très bien, merci. The colour cost $1.5 million, e.g. Paris. "
	for _, size := range []int{1 << 10, 16 << 10} {
		text := []byte(strings.Repeat(para, size/len(para)+1)[:size])
		b.Run(fmt.Sprintf("neardup/%dKB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			var s SentenceSplitter
			var dst []Sentence
			for b.Loop() {
				dst = s.Split(text, dst[:0])
			}
		})
		b.Run(fmt.Sprintf("uax29/%dKB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			it := sentences.FromBytes(nil)
			for b.Loop() {
				it.SetText(text)
				for it.Next() {
				}
			}
		})
	}
}
