package verify

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/sketch"
)

func TestWithout(t *testing.T) {
	for _, tt := range []struct{ set, drop, want []uint64 }{
		{nil, []uint64{1}, nil},
		{[]uint64{1, 2, 3}, nil, []uint64{1, 2, 3}},
		{[]uint64{1, 2, 3, 5, 8}, []uint64{0, 2, 4, 8, 9}, []uint64{1, 3, 5}},
		{[]uint64{4, 5}, []uint64{4, 5}, nil},
	} {
		if got := without(nil, tt.set, tt.drop); !slices.Equal(got, tt.want) {
			t.Errorf("without(%v, %v) = %v, want %v", tt.set, tt.drop, got, tt.want)
		}
	}
}

// A passage counts only for the matched positions it holds outside the
// document's common ranges.
func TestDropCommon(t *testing.T) {
	cover := make([]byte, 200)
	for q := 10; q < 100; q++ {
		cover[q] = 1
	}
	for q := 150; q < 160; q++ {
		cover[q] = 1 // a short run past a gap
	}
	ps := []AlignPassage{{A0: 10, A1: 100, Matched: 90}, {A0: 140, A1: 170, Matched: 10}}
	for _, tt := range []struct {
		name    string
		common  []Range
		minRun  int
		want    int // passages kept
		matched int
	}{
		{"no common ranges", nil, 0, 1, 90},
		{"template inside the passage, 25 positions left", []Range{{0, 75}}, 0, 1, 90},
		{"template inside the passage, 15 positions left", []Range{{0, 80}, {95, 200}}, 0, 0, 0},
		{"the whole passage", []Range{{5, 120}}, 0, 0, 0},
		{"two ranges around 30 positions", []Range{{0, 40}, {70, 100}}, 0, 1, 90},
		{"30 positions, shorter than a window of 36", []Range{{0, 40}, {70, 100}}, 36, 0, 0},
		{"10 and 35 positions left, a window of 30", []Range{{0, 50}, {60, 65}}, 30, 1, 90},
		{"60 positions left, a window of 36", []Range{{0, 40}}, 36, 1, 90},
	} {
		got, matched := dropCommon(slices.Clone(ps), tt.common, cover, 20, tt.minRun)
		if len(got) != tt.want || matched != tt.matched {
			t.Errorf("%s: kept %v (matched %d), want %d passages matching %d", tt.name, got, matched, tt.want, tt.matched)
		}
	}
}

// commonFor: against a source, only its own common passages stay out of
// the evidence; against any other candidate, all of them.
func TestCommonFor(t *testing.T) {
	src, other := &sketch.Features{}, &sketch.Features{}
	d := &Discount{Common: []Range{{0, 10}, {20, 30}}, Sources: []Source{{Features: src, Common: []Range{{0, 10}}}}}
	for _, tt := range []struct {
		name string
		d    *Discount
		b    *sketch.Features
		want []Range
	}{
		{"a source", d, src, []Range{{0, 10}}},
		{"another candidate", d, other, d.Common},
		{"no discount", nil, src, nil},
	} {
		if got := tt.d.commonFor(tt.b); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// dropCommonReference is dropCommon as first written, a position at a
// time with no early exit: TestDropCommonReference holds the faster one,
// which skips common ranges whole and stops at enough evidence, to it.
func dropCommonReference(ps []AlignPassage, rs []Range, cover []byte, minShared, minRun int) ([]AlignPassage, int) {
	kept, matched := ps[:0], 0
	for _, x := range ps {
		out, run, r := 0, 0, 0
		for q := x.A0; q <= x.A1; q++ {
			for r < len(rs) && rs[r].Hi <= q {
				r++
			}
			if q < x.A1 && q < len(cover) && cover[q] != 0 && (r == len(rs) || q < rs[r].Lo) {
				run++
				continue
			}
			if run >= MinEvidenceRun {
				out += run
			}
			run = 0
		}
		if out < max(minShared, minRun) {
			continue
		}
		kept = append(kept, x)
		matched += x.Matched
	}
	return kept, matched
}

func TestDropCommonReference(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	for range 3000 {
		n := 1 + r.IntN(300)
		cover := make([]byte, n)
		for q, on := 0, r.IntN(2) == 0; q < n; q++ {
			if r.IntN(12) == 0 {
				on = !on
			}
			if on {
				cover[q] = 1
			}
		}
		var rs []Range
		for q := r.IntN(40); q < n+20; q += 1 + r.IntN(60) {
			hi := q + 1 + r.IntN(50)
			rs = append(rs, Range{Lo: q, Hi: hi})
			q = hi
		}
		var ps []AlignPassage
		for range 1 + r.IntN(4) {
			a0 := r.IntN(n)
			a1 := a0 + r.IntN(n-a0+10) // may run past cover
			ps = append(ps, AlignPassage{A0: a0, A1: a1, Matched: r.IntN(100)})
		}
		minShared, minRun := 1+r.IntN(40), r.IntN(50)
		got, gm := dropCommon(slices.Clone(ps), rs, cover, minShared, minRun)
		want, wm := dropCommonReference(slices.Clone(ps), rs, cover, minShared, minRun)
		if !slices.Equal(got, want) || gm != wm {
			t.Fatalf("passages %v, ranges %v, minShared %d, minRun %d: got %v (%d), want %v (%d)", ps, rs, minShared, minRun, got, gm, want, wm)
		}
	}
}

// A candidate the site rules found to be the document's own text is
// judged whole, whatever the discount leaves out against the others.
func TestDiscountWhole(t *testing.T) {
	s, err := sketch.New(sketch.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := New(WebProfile())
	if err != nil {
		t.Fatal(err)
	}
	text := "The harbour committee met on Tuesday to plan the summer fair. Volunteers will staff the stalls, direct the parking and help clear the field on the Sunday after. The weather for the week ahead looks mild and dry, with rain expected only on Thursday evening and a chance of fog in the valley early on Friday morning."
	sk := func(s2 string) *sketch.Features {
		var f sketch.Features
		if err := s.Sketch([]byte(s2), &f); err != nil {
			t.Fatal(err)
		}
		return &f
	}
	doc, copy1, copy2 := sk(text), sk(text+" Updated."), sk(text+" Updated.")
	// Everything of the document is taken as template.
	all := &Discount{Shingles: slices.Clone(doc.Shingles), Common: []Range{{0, doc.Tokens}}}
	whole := &Discount{Shingles: all.Shingles, Common: all.Common, Whole: []*sketch.Features{copy1}}
	for _, tt := range []struct {
		name string
		d    *Discount
		b    *sketch.Features
		want Kind
	}{
		{"no discount", nil, copy1, Near},
		{"all template", all, copy1, Distinct},
		{"all template, judged whole", whole, copy1, Near},
		{"another candidate", whole, copy2, Distinct},
	} {
		if got := v.VerifyDiscounted(doc, tt.b, tt.d).Kind; got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}
