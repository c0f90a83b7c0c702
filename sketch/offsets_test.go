package sketch

import (
	"fmt"
	"testing"
)

func TestCodePoints(t *testing.T) {
	tests := []struct {
		name string
		opt  Normalization
		text string
		want string // token:start-end in code points, space separated
	}{
		{"ascii", Normalization{FoldQuotes: true}, "Hello, don't  panic!", "hello:0-5 dont:7-12 panic:14-19"},
		{"utf-8 unchanged by NFKC", Normalization{FoldQuotes: true}, "“Naïve” café’s 東京", "naïve:1-6 cafés:8-14 東:15-16 京:16-17"},
		{"NFKC changes the text", Normalization{FoldQuotes: true}, "the ﬁnal ｆｕｌｌ width", "the:0-3 final:4-8 full:9-13 width:14-19"},
		{"Windows-1252 bytes", Normalization{FoldQuotes: true}, "caf\xe9 au lait\x92s", "café:0-4 au:5-7 laits:8-14"},
		{"accents stripped", Normalization{StripAccents: true}, "Crème brûlée ﬁx", "creme:0-5 brulee:6-12 fix:13-15"},
		{"hyphenated at a line end", DefaultNormalization(), "a dat\u2010\n  aplex b", "a:0-1 dataplex:2-14 b:15-16"},
		{"hyphenated, CR LF", DefaultNormalization(), "a exam\u2010\r\nple b", "a:0-1 example:2-12 b:13-14"},
		{"soft hyphen, NFKC changes the text", DefaultNormalization(), "ﬁ hy\u00adphen\u00ad\n ation ﬁ", "fi:0-1 hyphenation:2-17 fi:18-19"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := NewNormalizer(tt.opt)
			var tok Tokens
			n.Tokenize([]byte(tt.text), &tok)
			st, en := n.CodePoints([]byte(tt.text), &tok, nil, nil)
			got := ""
			for i := range tok.Len() {
				if i > 0 {
					got += " "
				}
				got += fmt.Sprintf("%s:%d-%d", tok.Word(i), st[i], en[i])
			}
			if got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestCodePointsPrefix checks the passage lane's bounded mapping of a long
// document's first tokens against the mapping of the whole text: the same
// offsets, for every prefix length, when normalization changed the text.
func TestCodePointsPrefix(t *testing.T) {
	tests := []struct {
		name string
		opt  Normalization
		text string
	}{
		{"NFKC changes the text", Normalization{FoldQuotes: true}, "the ﬁnal ｆｕｌｌ width, “quoted” ﬁrst ① and café au lait ｅｎｄ"},
		{"accents stripped", Normalization{StripAccents: true}, "Crème brûlée ﬁx naïve façade über ﬁn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := NewNormalizer(tt.opt)
			var tok Tokens
			n.Tokenize([]byte(tt.text), &tok)
			if !tok.normalized {
				t.Fatalf("normalization did not change %q: the test does not reach unnormalize", tt.text)
			}
			wantSt, wantEn := n.CodePoints([]byte(tt.text), &tok, nil, nil)
			for limit := 1; limit < tok.Len(); limit++ {
				st, en := n.codePoints([]byte(tt.text), &tok, limit, nil, nil)
				if fmt.Sprint(st, en) != fmt.Sprint(wantSt[:limit], wantEn[:limit]) {
					t.Errorf("first %d tokens: starts %v ends %v, want %v %v", limit, st, en, wantSt[:limit], wantEn[:limit])
				}
			}
		})
	}
}

// TestRuneOffsetsPairs: the one-pass count of start and end offsets gives
// what runeOffsets gives on each, on texts of every kind the tokenizer
// reads, and declines (changing nothing) offsets out of order or inside
// a code point.
func TestRuneOffsetsPairs(t *testing.T) {
	texts := []string{
		"plain ASCII words, no change",
		"“Naïve” café’s 東京 — déjà vu",
		"the ﬁnal ｆｕｌｌ width ﬁx",
		"caf\xe9 au lait\x92s",
		"Crème brûlée ﬁx 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 emoji 🙂 and ß",
		"",
	}
	accepted := 0
	for _, opt := range []Normalization{{FoldQuotes: true}, {StripAccents: true}, {KeepPunct: true}} {
		n := NewNormalizer(opt)
		for _, text := range texts {
			var tok Tokens
			n.Tokenize([]byte(text), &tok)
			pre := []byte(text)
			if tok.decoded {
				pre = n.decoded
			}
			starts, ends := append([]uint32(nil), tok.Off...), append([]uint32(nil), tok.SrcEnd...)
			if tok.normalized {
				n.unnormalize(pre, starts, ends, false)
			}
			ws, we := append([]uint32(nil), starts...), append([]uint32(nil), ends...)
			runeOffsets(pre, ws)
			runeOffsets(pre, we)
			gs, ge := append([]uint32(nil), starts...), append([]uint32(nil), ends...)
			if !runeOffsetsPairs(pre, gs, ge) {
				continue
			}
			accepted++
			if fmt.Sprint(gs) != fmt.Sprint(ws) || fmt.Sprint(ge) != fmt.Sprint(we) {
				t.Errorf("%+v %q: got %v %v, want %v %v", opt, text, gs, ge, ws, we)
			}
		}
	}
	if accepted < 10 {
		t.Errorf("the one-pass count took %d of the 18 tokenized texts", accepted)
	}
	b := []byte("ab 東京 cd")
	for _, tt := range []struct {
		name         string
		starts, ends []uint32
	}{
		{"inside a code point", []uint32{0, 4}, []uint32{2, 6}},
		{"out of order", []uint32{3, 0}, []uint32{9, 2}},
		{"past the end", []uint32{0}, []uint32{20}},
		{"lengths differ", []uint32{0, 3}, []uint32{2}},
	} {
		s, e := append([]uint32(nil), tt.starts...), append([]uint32(nil), tt.ends...)
		if runeOffsetsPairs(b, s, e) || fmt.Sprint(s) != fmt.Sprint(tt.starts) || fmt.Sprint(e) != fmt.Sprint(tt.ends) {
			t.Errorf("%s: accepted or changed: %v %v", tt.name, s, e)
		}
	}
}
