package pipeline

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// discount turns the common anchors the index reports into common
// passages: runs of two or more within a winnowing window of each other,
// widened by a window less one, or a lone anchor that many documents
// hold; a document mostly made of them is judged whole.
func TestDiscount(t *testing.T) {
	p, err := New(testConfig(t, "web"), nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	w := sketch.PassageWindow(n, p.passageWords(), p.cfg.Sketch.Shingle)
	seq := make([]uint32, n)
	for i := range seq {
		seq[i] = uint32(i + 1)
	}
	// Anchors every 20 positions; key k is anchor k's hash.
	var anchors []sketch.Anchor
	var keys []uint64
	for pos := 0; pos < n; pos += 20 {
		anchors = append(anchors, sketch.Anchor{Hash: uint64(pos + 1), Pos: uint32(pos)})
		keys = append(keys, uint64(1000+pos))
	}
	job := func(common []uint64, docs []int) *job {
		j := &job{seq: seq, feats: &sketch.Features{Passage: sketch.Passage{Anchors: anchors}},
			entry: index.Entry{Anchors: keys}, sentenceBase: len(keys),
			res: index.Result{CommonAnchors: common, CommonAnchorDocs: docs}}
		return j
	}
	for _, tt := range []struct {
		name   string
		common []uint64
		docs   []int
		want   []verify.Range
		whole  bool
	}{
		{"none", nil, nil, nil, false},
		{"a lone anchor held by a few", []uint64{1100}, []int{3}, nil, false},
		{"a lone anchor held by many", []uint64{1100}, []int{boilerplateDocs}, []verify.Range{{Lo: 100 - (w - 1), Hi: 100 + w}}, false},
		{"a run of three", []uint64{1500, 1520, 1540}, []int{3, 3, 3}, []verify.Range{{Lo: 500 - (w - 1), Hi: 540 + w}}, false},
		{"two runs far apart", []uint64{1000, 1020, 1900, 1920}, []int{3, 3, 3, 3}, []verify.Range{{Lo: 0, Hi: 20 + w}, {Lo: 900 - (w - 1), Hi: 920 + w}}, false},
		{"a template and a copied passage", []uint64{1000, 1020, 1040, 1060, 1080, 1100, 1500, 1520}, []int{boilerplateDocs, boilerplateDocs, boilerplateDocs, boilerplateDocs, boilerplateDocs, boilerplateDocs, 3, 3},
			[]verify.Range{{Lo: 0, Hi: 100 + w}}, false},
		{"most of the document", func() []uint64 {
			var c []uint64
			for pos := 0; pos < 800; pos += 20 {
				c = append(c, uint64(1000+pos))
			}
			return c
		}(), nil, []verify.Range{{Lo: 0, Hi: 780 + w}}, true},
	} {
		j := job(tt.common, tt.docs)
		d := p.discount(j)
		var got []verify.Range
		if d != nil {
			got = d.Common
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: common ranges %v, want %v", tt.name, got, tt.want)
			continue
		}
		if d == nil {
			continue
		}
		covered := 0
		for _, r := range tt.want {
			covered += r.Hi - r.Lo
		}
		if tt.name == "a template and a copied passage" {
			covered += 520 + w - (500 - (w - 1)) // the copied passage is left out of resemblance all the same
		}
		if want := float64(covered) / n; j.commonShare != want {
			t.Errorf("%s: share %v, want %v", tt.name, j.commonShare, want)
		}
		if whole := d.Shingles == nil; whole != tt.whole {
			t.Errorf("%s: judged whole %v, want %v", tt.name, whole, tt.whole)
		}
		if !tt.whole && len(d.Shingles) != covered {
			t.Errorf("%s: %d shingles left out, want %d", tt.name, len(d.Shingles), covered)
		}
	}
}

// templateDocs: when most of a document's common text is held by many
// documents, a passage held by fewer is a copied text, not its template;
// when most of it is held by few, only passages held by fewer than the
// most widely held of them are.
func TestTemplateDocs(t *testing.T) {
	run := func(lo, hi, docs int) commonRun { return commonRun{Range: verify.Range{Lo: lo, Hi: hi}, docs: docs} }
	for _, tt := range []struct {
		name string
		runs []commonRun
		want int
	}{
		{"a known template and a copied passage", []commonRun{run(0, 100, 40), run(300, 360, 4)}, boilerplateDocs},
		{"a known template only", []commonRun{run(0, 100, 255)}, boilerplateDocs},
		{"a young template", []commonRun{run(0, 100, 4), run(400, 450, 4)}, 4},
		{"a young template, a widely shared notice", []commonRun{run(0, 60, 30), run(100, 300, 5)}, 5},
		{"no template, two copied passages", []commonRun{run(0, 100, 6), run(200, 260, 3)}, 6},
		{"equal shares: the known template decides", []commonRun{run(0, 100, 9), run(200, 300, 3)}, boilerplateDocs},
	} {
		if got := templateDocs(tt.runs); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}
