package eval

import (
	"encoding/json"
	"math"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/internal/dataset"
)

// A small set: b copies a, c copies nothing, d is unlabelled against a.
func tinySet() *Set {
	labels := map[[2]string]Label{{"b", "a"}: Positive, {"c", "a"}: Negative, {"c", "b"}: Negative}
	return &Set{
		Name:     "tiny",
		Label:    func(later, earlier string) Label { return labels[[2]string{later, earlier}] },
		Expected: []Expect{{Later: "b", Earlier: []string{"a"}}, {Later: "e", Earlier: []string{"a", "b"}}},
	}
}

func TestJudgeLinks(t *testing.T) {
	events := []Event{
		{ID: "a", Kind: "unique"},
		{ID: "b", Kind: "near", DuplicateOf: "a", Matches: []Match{{ID: "a", Kind: "near", Method: "jaccard"}}},
		{ID: "c", Kind: "partial", DuplicateOf: "b", Matches: []Match{{ID: "b", Kind: "partial", Method: "containment"}, {ID: "a", Kind: "near", Method: "jaccard"}}},
		{ID: "d", Kind: "near", DuplicateOf: "a", Matches: []Match{{ID: "a", Kind: "near", Method: "jaccard"}}},
		{ID: "e", Kind: "unique"},
	}
	st := judgeLinks(tinySet(), events)
	if st.All != (Counts{TP: 1, FP: 2, Unlabelled: 1, Found: 1}) {
		t.Errorf("all: %+v", st.All)
	}
	if st.Best != (Counts{TP: 1, FP: 1, Unlabelled: 1, Found: 1}) {
		t.Errorf("duplicate_of: %+v", st.Best)
	}
	if j := st.ByMethod["jaccard"]; *j != (Counts{TP: 1, FP: 1, Unlabelled: 1, Found: 1}) {
		t.Errorf("jaccard: %+v", *j)
	}
	if c := st.ByKind["partial"]; *c != (Counts{FP: 1}) {
		t.Errorf("partial: %+v", *c)
	}
	if st.FoundBy[0] == nil || st.FoundBy[0].ID != "a" || st.FoundBy[1] != nil {
		t.Errorf("found by %v", st.FoundBy)
	}
	if p, r := st.All.Precision(), st.All.Recall(st.Expected); math.Abs(p-1.0/3) > 1e-12 || r != 0.5 {
		t.Errorf("precision %v recall %v, want 1/3 and 1/2", p, r)
	}
	if len(st.Wrong) != 2 || st.Wrong[0] != [2]string{"c", "b"} {
		t.Errorf("wrong links %v", st.Wrong)
	}
	if !math.IsNaN((Counts{}).Precision()) || (Counts{}).F1(0) != 0 {
		t.Error("no links: precision should be undefined and F1 0")
	}
}

// Events carry passages in their JSON form (docs/event.schema.json);
// Event reads them whether or not package pipeline's Go type has them.
func TestEventPassagesDecode(t *testing.T) {
	line := `{"id":"s","kind":"partial","duplicate_of":"r","cluster":"r","method":"passage",
		"matches":[{"id":"r","kind":"partial","method":"passage","scores":{"containment_ab":0.2},
		"passages":[{"offset":3,"length":10,"match_offset":5,"match_length":11}]}]}`
	var ev Event
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		t.Fatal(err)
	}
	if len(ev.Matches) != 1 || len(ev.Matches[0].Passages) != 1 || ev.Matches[0].Passages[0] != (Passage{3, 10, 5, 11}) {
		t.Errorf("decoded %+v", ev)
	}
}

// A detector that reports exactly the labelled passages of PAN13 scores
// precision and recall 1 at granularity 1, and detects every case; one
// that reports each passage in two halves has granularity 2.
func TestPANFromPassages(t *testing.T) {
	sets, _, err := Build(parentDir(dataset.Dir(t, setPAN13)), []string{setPAN13})
	if err != nil {
		t.Fatal(err)
	}
	s := sets[0]
	for _, halves := range []bool{false, true} {
		bySusp := map[string]map[string][]Passage{}
		for _, c := range s.pan.Cases {
			if bySusp[c.Susp] == nil {
				bySusp[c.Susp] = map[string][]Passage{}
			}
			ps := []Passage{{c.SuspOff, c.SuspLn, c.SrcOff, c.SrcLn}}
			if halves {
				h, g := c.SuspLn/2, c.SrcLn/2
				ps = []Passage{{c.SuspOff, h, c.SrcOff, g}, {c.SuspOff + h, c.SuspLn - h, c.SrcOff + g, c.SrcLn - g}}
			}
			bySusp[c.Susp][c.Src] = append(bySusp[c.Susp][c.Src], ps...)
		}
		var events []Event
		for _, d := range s.Docs {
			ev := Event{ID: d.ID, Kind: "unique"}
			for src, ps := range bySusp[d.ID] {
				ev.Matches = append(ev.Matches, Match{ID: src, Kind: "partial", Method: "passage", Passages: ps})
			}
			events = append(events, ev)
		}
		r := panResult(s, events)
		wantG := 1.0
		if halves {
			wantG = 2
		}
		if r.PAN.Precision != 1 || r.PAN.Recall != 1 || r.PAN.Granularity != wantG || r.LinkedPairs != len(s.pan.Pairs) {
			t.Errorf("halves %v: %+v, %d pairs linked", halves, r.PAN, r.LinkedPairs)
		}
		for _, b := range r.ByLength {
			if b.Detected != b.Cases || b.Linked != b.Cases {
				t.Errorf("halves %v: bin %+v", halves, b)
			}
		}
		if st := judgeLinks(s, events); st.All.Found != len(s.pan.Pairs) || st.All.FP != 0 {
			t.Errorf("halves %v: links %+v", halves, st.All)
		}
	}
}

func parentDir(dir string) string { return filepath.Dir(dir) }
