package pipeline

import (
	"encoding/json"
	"slices"
)

// shorten leaves evidence out of ev, whose encoding is size bytes, until
// it encodes to at most limit bytes, and returns the size it encodes to
// then (more than limit when even the shortest form does not fit: a huge
// meta object, or ids). It sets Abridged when it left anything out. What
// goes, in this order, each step only while the event is still too large:
//
//  1. the passages of every match but the best, the last match's first;
//  2. the matches but the best, the last first;
//  3. the sentence matches, the last first (counted in
//     SentenceMatchesDropped);
//  4. the passages of the best match.
//
// The verdict itself (kind, duplicate_of, cluster, method, scores), the
// best match, the counters, the source and its meta are never left out.
// A match whose passages were left out keeps share and match_share, which
// describe them. ev's slices are copied before anything in them changes.
func shorten(ev *Event, size, limit int) int {
	if size <= limit {
		return size
	}
	ev.Matches = slices.Clone(ev.Matches)
	ev.Sentences = slices.Clone(ev.Sentences)
	encoded := func(v any) int {
		b, _ := json.Marshal(v)
		return len(b)
	}
	dropPassages := func(i int) {
		if len(ev.Matches[i].Passages) == 0 {
			return
		}
		// "passages":[...] and its comma.
		size -= encoded(ev.Matches[i].Passages) + len(`,"passages":`)
		ev.Matches[i].Passages = nil
		ev.Abridged = true
	}
	for i := len(ev.Matches) - 1; i >= 1 && size > limit; i-- {
		dropPassages(i)
	}
	for len(ev.Matches) > 1 && size > limit {
		last := len(ev.Matches) - 1
		size -= encoded(ev.Matches[last]) + 1
		ev.Matches = ev.Matches[:last]
		ev.Abridged = true
	}
	for len(ev.Sentences) > 0 && size > limit {
		last := len(ev.Sentences) - 1
		size -= encoded(ev.Sentences[last]) + 1
		ev.Sentences = ev.Sentences[:last]
		ev.SentenceMatchesDropped++
		ev.Abridged = true
	}
	if len(ev.Matches) > 0 && size > limit {
		dropPassages(0)
	}
	if b, err := json.Marshal(ev); err == nil {
		size = len(b) // the estimate above counts separators loosely
	}
	return size
}
