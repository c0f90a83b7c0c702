package suggest

import "testing"

func TestClosest(t *testing.T) {
	keys := []string{"sketch.k", "sketch.shingle", "index.url", "verify.jaccard"}
	for _, tt := range []struct{ word, want string }{
		{"sketch.kk", "sketch.k"},
		{"sketch.shingel", "sketch.shingle"}, // a swap is two edits
		{"index.rul", "index.url"},
		{"verify.jacard", "verify.jaccard"},
		{"pipeline.emit", ""}, // nothing near
		{"", ""},
	} {
		if got := Closest(tt.word, keys); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}
