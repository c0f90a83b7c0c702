package pipeline

import (
	"reflect"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

func TestGenericText(t *testing.T) {
	page := anchorPage
	section := [2]int{1, 21} // a generated section: anchors 1–20 at positions 5–100
	doc := page(1000, section, [2]int{30, 41})
	first := page(2000, section)
	p := &Pipeline{}
	w := sketch.PassageWindow(4200, p.passageWords(), p.cfg.Sketch.Shingle)
	sectionRange := []verify.Range{{Lo: max(5-(w-1), 0), Hi: 100 + w}}
	for _, tc := range []struct {
		name  string
		cands []*sketch.Features // in input order
		// want: the ranges left out for every candidate but the first
		// holder (nil: no discount at all).
		want []verify.Range
	}{
		{"three distinct texts hold it", []*sketch.Features{first, page(3000, section), page(4000, section, [2]int{30, 41})}, sectionRange},
		{"two distinct texts: a copy's source and one earlier copy", []*sketch.Features{first, page(3000, section)}, nil},
		{"three documents, two of them one text", []*sketch.Features{first, page(3000, section), page(3000, section)}, nil},
		{"three documents, one of them the document's own text", []*sketch.Features{first, page(3000, section), page(1000, section)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			feats := map[uint64]*sketch.Features{}
			j := &job{feats: doc, seq: make([]uint32, 4200), earlier: len(tc.cands)}
			for i, f := range tc.cands {
				j.cands = append(j.cands, index.Candidate{Seq: uint64(i + 1)})
				feats[uint64(i+1)] = f
			}
			p.genericText(j, func(c *index.Candidate) *sketch.Features { return feats[c.Seq] }, &hashBits{})
			d := j.discount
			if tc.want == nil {
				if d != nil {
					t.Fatalf("discount %+v, want none", d)
				}
				return
			}
			if d == nil || !reflect.DeepEqual(d.Common, tc.want) {
				t.Fatalf("discount %+v, want the section %v left out", d, tc.want)
			}
			// The first holder keeps the section as evidence; the text
			// only the document and the third candidate hold (30–40)
			// stays evidence against every one.
			if len(d.Sources) != 1 || d.Sources[0].Features != first || len(d.Sources[0].Common) != 0 {
				t.Errorf("sources %+v, want the first holder with nothing left out", d.Sources)
			}
		})
	}
}
