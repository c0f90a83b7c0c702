package pipeline

import (
	"cmp"
	"math"
	"slices"

	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// emits reports whether ev leaves the pipeline: a duplicate, a document
// with matching sentences (sentence mode), or any document when unique
// events are on.
func (p *Pipeline) emits(ev *Event) bool {
	return ev.Kind != KindUnique || len(ev.Sentences) > 0 || p.cfg.EmitUnique
}

// hotSentences marks the sentences of j whose band keys include a hot
// anchor (index.Result.CommonAnchors: a full bucket, boilerplate); nil when
// there is none.
func (p *Pipeline) hotSentences(j *job) []bool {
	if len(j.res.CommonAnchors) == 0 || j.feats == nil || j.feats.Sentences.Bands == 0 {
		return nil
	}
	bands := j.feats.Sentences.Bands
	keys := j.entry.Anchors[min(j.sentenceBase, len(j.entry.Anchors)):]
	var hot []bool
	for i := range j.feats.Sentences.Items {
		for _, k := range keys[min(i*bands, len(keys)):min((i+1)*bands, len(keys))] {
			if _, ok := slices.BinarySearch(j.res.CommonAnchors, k); ok {
				if hot == nil {
					hot = make([]bool, len(j.feats.Sentences.Items))
				}
				hot[i] = true
				break
			}
		}
	}
	return hot
}

// sentenceMatches appends the matched sentence pairs of doc and one
// earlier candidate (id) as event items, placed in both texts, leaving out
// the document's boilerplate sentences (hot).
func (p *Pipeline) sentenceMatches(dst []SentenceMatch, doc, cand *sketch.Features, id string, pairs []verify.SentencePair, hot []bool) []SentenceMatch {
	if doc == nil || cand == nil {
		return dst
	}
	for _, pr := range pairs {
		if pr.A >= len(doc.Sentences.Items) || pr.B >= len(cand.Sentences.Items) {
			continue // not from these features: never expected
		}
		if pr.A < len(hot) && hot[pr.A] {
			continue
		}
		a, b := &doc.Sentences.Items[pr.A], &cand.Sentences.Items[pr.B]
		dst = append(dst, SentenceMatch{
			Offset: a.Offset, Length: a.Length, MatchID: id, MatchOffset: b.Offset, MatchLength: b.Length,
			Similarity: math.Round(pr.Similarity*1000) / 1000, Edit: string(pr.Edit),
		})
	}
	return dst
}

// capSentences orders the sentence matches of an event, by the document's
// offset, then the most similar first (then by earlier match order, which
// ranks candidates best first), and keeps at most limit per sentence; it
// returns how many it dropped.
func capSentences(ms []SentenceMatch, limit int) ([]SentenceMatch, int) {
	if len(ms) == 0 {
		return nil, 0
	}
	slices.SortStableFunc(ms, func(x, y SentenceMatch) int {
		return cmp.Or(cmp.Compare(x.Offset, y.Offset), cmp.Compare(y.Similarity, x.Similarity))
	})
	out, run, dropped := ms[:0], 0, 0
	for i, m := range ms {
		if i > 0 && ms[i-1].Offset == m.Offset {
			run++
		} else {
			run = 0
		}
		if run < limit {
			out = append(out, m)
		} else {
			dropped++
		}
	}
	return out, dropped
}
