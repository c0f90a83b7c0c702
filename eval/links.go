package eval

import (
	"math"
	"slices"
)

// Counts are reported links judged against a set's labels, and how many
// of the expected links they found.
type Counts struct {
	// TP, FP and Unlabelled count the reported links (one per verified
	// match of an event) that the labels call right, wrong, or say
	// nothing about.
	TP, FP, Unlabelled int
	// Found counts expected links ([Set].Expected) that were reported.
	Found int
}

// Precision is TP / (TP + FP), NaN when no labelled link was reported.
func (c Counts) Precision() float64 {
	if c.TP+c.FP == 0 {
		return math.NaN()
	}
	return float64(c.TP) / float64(c.TP+c.FP)
}

// Recall is Found / expected, NaN when nothing is expected.
func (c Counts) Recall(expected int) float64 {
	if expected == 0 {
		return math.NaN()
	}
	return float64(c.Found) / float64(expected)
}

// F1 is the harmonic mean of Precision and Recall (0 when either is 0 or
// undefined).
func (c Counts) F1(expected int) float64 {
	p, r := c.Precision(), c.Recall(expected)
	if math.IsNaN(p) || math.IsNaN(r) {
		return 0
	}
	return f1(p, r)
}

// LinkStats judge the links a stream reported. A link is one verified
// match of an event: the event's document duplicates the matched earlier
// document (duplicate_of is the best of them).
type LinkStats struct {
	// Expected is the number of expected links.
	Expected int
	// All counts every link; Best only the duplicate_of of each event.
	All, Best Counts
	// ByMethod and ByKind split All by the check that decided a link and
	// by its kind. An expected link found by several matches counts for
	// the first, the best ranked.
	ByMethod, ByKind map[string]*Counts
	// FoundBy holds, for each expected link (same index as Set.Expected),
	// the match that found it, or nil.
	FoundBy []*Match
	// Wrong lists up to maxWrong links the labels call wrong, as
	// (later, earlier) ids.
	Wrong [][2]string
}

const maxWrong = 12

func judgeLinks(s *Set, events []Event) LinkStats {
	st := LinkStats{Expected: len(s.Expected), ByMethod: map[string]*Counts{}, ByKind: map[string]*Counts{}, FoundBy: make([]*Match, len(s.Expected))}
	byID := map[string]*Event{}
	for i := range events {
		byID[events[i].ID] = &events[i]
	}
	add := func(m map[string]*Counts, key string) *Counts {
		if m[key] == nil {
			m[key] = &Counts{}
		}
		return m[key]
	}
	for _, ev := range events {
		for _, m := range ev.Matches {
			l := s.Label(ev.ID, m.ID)
			for _, c := range []*Counts{&st.All, add(st.ByMethod, m.Method), add(st.ByKind, m.Kind)} {
				switch l {
				case Positive:
					c.TP++
				case Negative:
					c.FP++
				default:
					c.Unlabelled++
				}
			}
			if l == Negative && len(st.Wrong) < maxWrong {
				st.Wrong = append(st.Wrong, [2]string{ev.ID, m.ID})
			}
		}
		if ev.DuplicateOf != "" {
			switch s.Label(ev.ID, ev.DuplicateOf) {
			case Positive:
				st.Best.TP++
			case Negative:
				st.Best.FP++
			default:
				st.Best.Unlabelled++
			}
		}
	}
	for i, x := range s.Expected {
		ev := byID[x.Later]
		if ev == nil {
			continue
		}
		if ev.DuplicateOf != "" && slices.Contains(x.Earlier, ev.DuplicateOf) {
			st.Best.Found++
		}
		for j := range ev.Matches {
			m := &ev.Matches[j]
			if slices.Contains(x.Earlier, m.ID) {
				st.FoundBy[i] = m
				st.All.Found++
				add(st.ByMethod, m.Method).Found++
				add(st.ByKind, m.Kind).Found++
				break
			}
		}
	}
	return st
}

// linkedTo returns the first match of ev whose id satisfies ok.
func linkedTo(ev *Event, ok func(id string) bool) *Match {
	if ev == nil {
		return nil
	}
	for i := range ev.Matches {
		if ok(ev.Matches[i].ID) {
			return &ev.Matches[i]
		}
	}
	return nil
}
