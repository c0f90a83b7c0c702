package pipeline

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/verify"
)

func TestCoveredShare(t *testing.T) {
	for _, tt := range []struct {
		name string
		rs   []verify.Range
		n    int
		want float64
	}{
		{"none", nil, 100, 0},
		{"no words", []verify.Range{{Lo: 0, Hi: 5}}, 0, 0},
		{"one", []verify.Range{{Lo: 10, Hi: 35}}, 100, 0.25},
		{"overlapping, out of order", []verify.Range{{Lo: 30, Hi: 60}, {Lo: 10, Hi: 40}}, 100, 0.5},
		{"nested", []verify.Range{{Lo: 10, Hi: 60}, {Lo: 20, Hi: 30}}, 100, 0.5},
		{"past the end", []verify.Range{{Lo: 90, Hi: 120}}, 100, 0.1},
		{"thirds", []verify.Range{{Lo: 0, Hi: 1}}, 3, 0.333},
	} {
		if got := coveredShare(tt.rs, tt.n); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A match's share and match_share are the shares of each side's words
// inside its passages: a paragraph quoted in a page of its own is a small
// share of the page and a larger one of its source, a copy of most of a
// page a large share of both.
func TestMatchShare(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	words := func(n int) []string {
		w := make([]string, n)
		for i := range w {
			w[i] = fmt.Sprintf("w%x", r.Uint64()%1_000_000_000)
		}
		return w
	}
	join := func(parts ...[]string) string {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		return strings.Join(all, " ")
	}
	src := words(400)
	items := []Item{
		{Doc: Document{ID: "source", Text: []byte(join(src))}},
		// 100 of the source's words quoted in 600 words of its own
		{Doc: Document{ID: "quote", Text: []byte(join(words(300), src[150:250], words(300)))}},
		// 360 of the source's words and 40 of its own
		{Doc: Document{ID: "copy", Text: []byte(join(src[:360], words(40)))}},
	}
	for i := range items {
		items[i].Tag = i
	}
	outs := run(t, testConfig(t, "web"), func(p *Pipeline) index.Store { return memoryIndex(t, p) }, items)
	for _, tt := range []struct {
		id                string
		share, matchShare float64
	}{
		{"quote", 100.0 / 700, 100.0 / 400},
		{"copy", 360.0 / 400, 360.0 / 400},
	} {
		var m *Match
		for _, o := range outs {
			if o.Event != nil && o.Event.ID == tt.id {
				for i := range o.Event.Matches {
					if o.Event.Matches[i].ID == "source" {
						m = &o.Event.Matches[i]
					}
				}
			}
		}
		if m == nil {
			t.Errorf("%s: no match of the source", tt.id)
			continue
		}
		if len(m.Passages) == 0 {
			t.Errorf("%s: %s match with no passage", tt.id, m.Kind)
			continue
		}
		// Passage ends fall on shingle boundaries: a few words either way.
		if math.Abs(m.Share-tt.share) > 0.02 || math.Abs(m.MatchShare-tt.matchShare) > 0.02 {
			t.Errorf("%s: share %v, match_share %v; want about %.3f and %.3f", tt.id, m.Share, m.MatchShare, tt.share, tt.matchShare)
		}
	}
}

// coveredShare is the share of n words that the union of rs covers,
// rounded to three decimals; rs is sorted in place.
func coveredShare(rs []verify.Range, n int) float64 {
	return mainCover(rs, n, nil, 1).share()
}
