package verify

import (
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
	cover := make([]bool, 200)
	for q := 10; q < 100; q++ {
		cover[q] = true
	}
	for q := 150; q < 160; q++ {
		cover[q] = true // a short run past a gap
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
