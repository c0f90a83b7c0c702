package eval

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/neardup/neardup/internal/dataset"
)

// panBrute is the definition over character sets.
func panBrute(cases, dets []Case) PANScores {
	chars := func(off, n int) map[int]bool {
		m := map[int]bool{}
		for i := off; i < off+n; i++ {
			m[i] = true
		}
		return m
	}
	inter := func(a, b map[int]bool) map[int]bool {
		m := map[int]bool{}
		for k := range a {
			if b[k] {
				m[k] = true
			}
		}
		return m
	}
	detects := func(c, d Case) (map[int]bool, map[int]bool, bool) {
		if c.Susp != d.Susp || c.Src != d.Src {
			return nil, nil, false
		}
		s, r := inter(chars(c.SuspOff, c.SuspLn), chars(d.SuspOff, d.SuspLn)), inter(chars(c.SrcOff, c.SrcLn), chars(d.SrcOff, d.SrcLn))
		return s, r, len(s) > 0 && len(r) > 0
	}
	var res PANScores
	det, by := 0, 0
	for _, c := range cases {
		us, ur, n := map[int]bool{}, map[int]bool{}, 0
		for _, d := range dets {
			if s, r, ok := detects(c, d); ok {
				n++
				for k := range s {
					us[k] = true
				}
				for k := range r {
					ur[k] = true
				}
			}
		}
		res.Recall += float64(len(us)+len(ur)) / float64(c.SuspLn+c.SrcLn)
		if n > 0 {
			det++
			by += n
		}
	}
	for _, d := range dets {
		us, ur := map[int]bool{}, map[int]bool{}
		for _, c := range cases {
			if s, r, ok := detects(c, d); ok {
				for k := range s {
					us[k] = true
				}
				for k := range r {
					ur[k] = true
				}
			}
		}
		res.Precision += float64(len(us)+len(ur)) / float64(d.SuspLn+d.SrcLn)
	}
	res.Recall /= float64(len(cases))
	res.Precision /= float64(max(len(dets), 1))
	res.Granularity = 1
	if det > 0 {
		res.Granularity = float64(by) / float64(det)
	}
	if res.Precision+res.Recall > 0 {
		res.PlagDet = 2 * res.Precision * res.Recall / (res.Precision + res.Recall) / math.Log2(1+res.Granularity)
	}
	return res
}

func TestPANMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	rc := func(docs int) Case {
		return Case{Susp: string(rune('a' + r.IntN(docs))), Src: string(rune('x' + r.IntN(docs))),
			SuspOff: r.IntN(200), SuspLn: 1 + r.IntN(80), SrcOff: r.IntN(200), SrcLn: 1 + r.IntN(80)}
	}
	for range 300 {
		var cases, dets []Case
		for range 1 + r.IntN(6) {
			cases = append(cases, rc(2))
		}
		for range r.IntN(8) {
			dets = append(dets, rc(2))
		}
		got, want := PAN(cases, dets), panBrute(cases, dets)
		for _, p := range [][2]float64{{got.Precision, want.Precision}, {got.Recall, want.Recall}, {got.Granularity, want.Granularity}, {got.PlagDet, want.PlagDet}} {
			if math.Abs(p[0]-p[1]) > 1e-9 {
				t.Fatalf("got %+v\nwant %+v\ncases %v dets %v", got, want, cases, dets)
			}
		}
	}
	// One case found as two halves: perfect precision and recall,
	// granularity 2.
	c := Case{"s", "r", 0, 100, 50, 100}
	got := PAN([]Case{c}, []Case{{"s", "r", 0, 50, 50, 50}, {"s", "r", 50, 50, 100, 50}})
	if got.Precision != 1 || got.Recall != 1 || got.Granularity != 2 || math.Abs(got.PlagDet-1/math.Log2(3)) > 1e-12 {
		t.Errorf("halves: %+v", got)
	}
}

func TestLoadSets(t *testing.T) {
	pan, err := LoadPAN13(dataset.Dir(t, "pan13-text-alignment-no-obfuscation"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pan.Pairs) != 500 || len(pan.Cases) != 624 {
		t.Errorf("pan13: %d pairs, %d cases", len(pan.Pairs), len(pan.Cases))
	}
	cl, err := LoadClough(dataset.Dir(t, "clough-plagiarised-short-answers"))
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, a := range cl.Answers {
		n[a.Category]++
	}
	if n["cut"] != 19 || n["light"] != 19 || n["heavy"] != 19 || n["non"] != 38 || n["orig"] != 5 {
		t.Errorf("clough categories %v", n)
	}
	g, err := LoadGutenberg(dataset.Dir(t, "gutenberg-editions"))
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for _, p := range g.Pairs {
		if p.SameWork {
			same++
		}
	}
	if len(g.Texts) != 10 || len(g.Pairs) != 45 || same != 5 {
		t.Errorf("gutenberg: %d texts, %d pairs, %d same", len(g.Texts), len(g.Pairs), same)
	}
}
