package pipeline

import (
	"encoding/json"
	"strings"
	"testing"
)

// shorten leaves evidence out in its documented order, only as far as
// needed, and never the verdict, the best match or the meta.
func TestShortenOrder(t *testing.T) {
	passages := func(n int) []Passage {
		ps := make([]Passage, n)
		for i := range ps {
			ps[i] = Passage{Offset: i * 1000, Length: 500, MatchOffset: i * 900, MatchLength: 500}
		}
		return ps
	}
	event := func() *Event {
		ev := &Event{ID: "d", Kind: KindPartial, DuplicateOf: "m0", Cluster: "m0", Method: "passages",
			Source: EventSource{Meta: json.RawMessage(`{"blob":"` + strings.Repeat("x", 2000) + `"}`)}}
		for i := range 5 {
			ev.Matches = append(ev.Matches, Match{ID: "m" + string(rune('0'+i)), Kind: KindPartial, Method: "passages", Passages: passages(10), Share: 0.5})
		}
		for i := range 10 {
			ev.Sentences = append(ev.Sentences, SentenceMatch{Offset: i, Length: 40, MatchID: "m0", Similarity: 0.9, Edit: "identical"})
		}
		return ev
	}
	size := func(ev *Event) int {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	full := size(event())
	tests := []struct {
		name  string
		limit int
		check func(t *testing.T, ev *Event)
	}{
		{"fits", full, func(t *testing.T, ev *Event) {
			if ev.Abridged || len(ev.Matches) != 5 || len(ev.Matches[4].Passages) != 10 {
				t.Errorf("an event that fits was changed: %+v", ev)
			}
		}},
		{"last match's passages", full - 100, func(t *testing.T, ev *Event) {
			if !ev.Abridged || ev.Matches[4].Passages != nil || ev.Matches[3].Passages == nil || len(ev.Matches) != 5 {
				t.Errorf("want only the last match's passages left out")
			}
		}},
		{"lower matches", full - 2900, func(t *testing.T, ev *Event) {
			if len(ev.Matches) == 5 || len(ev.Matches) < 2 || ev.Matches[0].Passages == nil || len(ev.Sentences) != 10 {
				t.Errorf("want lower matches left out before sentences and the best match's passages: %d matches, %d sentences", len(ev.Matches), len(ev.Sentences))
			}
		}},
		{"everything but the verdict", 2600, func(t *testing.T, ev *Event) {
			if len(ev.Matches) != 1 || ev.Matches[0].ID != "m0" || ev.Matches[0].Passages != nil || len(ev.Sentences) != 0 ||
				ev.SentenceMatchesDropped != 10 || ev.DuplicateOf != "m0" || ev.Kind != KindPartial || len(ev.Source.Meta) < 2000 {
				t.Errorf("shortest form: %+v", ev)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := event()
			orig := ev.Matches
			got := shorten(ev, full, tt.limit)
			if got != size(ev) {
				t.Errorf("shorten returned %d, the event encodes to %d", got, size(ev))
			}
			if got > tt.limit {
				t.Errorf("%d bytes, limit %d", got, tt.limit)
			}
			if orig[4].Passages == nil {
				t.Error("the caller's matches were changed")
			}
			tt.check(t, ev)
		})
	}
	if n := shorten(event(), full, 1000); n <= 1000 {
		t.Errorf("an event whose meta alone is over the limit fits in %d", n)
	}
}
