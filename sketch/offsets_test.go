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
