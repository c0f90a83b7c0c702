package pipeline

import (
	"cmp"
	"slices"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/verify"
)

// kindRank orders duplicate kinds: exact before near before partial.
func kindRank(k string) int {
	switch k {
	case KindExact:
		return 0
	case KindNear:
		return 1
	case KindPartial:
		return 2
	}
	return 3
}

// strength is the score that ranks matches of the same kind: the shingle
// resemblance when computed, else the larger containment, else DUPNIQ its,
// else edit similarity.
func strength(s verify.Scores) float64 {
	switch {
	case s.Jaccard != nil:
		return *s.Jaccard
	case s.ContainmentAB != nil || s.ContainmentBA != nil:
		var c float64
		if s.ContainmentAB != nil {
			c = *s.ContainmentAB
		}
		if s.ContainmentBA != nil {
			c = max(c, *s.ContainmentBA)
		}
		return c
	case s.ITS != nil:
		return *s.ITS
	case s.Edit != nil:
		return *s.Edit
	}
	return 0
}

// sortMatches orders matches best first: by kind, then strength, then the
// earlier document (lower sequence number) first, so ties resolve to the
// same document on every run.
func sortMatches(m []Match, cands []index.Candidate) {
	seq := make(map[string]uint64, len(cands))
	for _, c := range cands {
		seq[c.ID] = c.Seq
	}
	slices.SortStableFunc(m, func(a, b Match) int {
		return cmp.Or(
			cmp.Compare(kindRank(a.Kind), kindRank(b.Kind)),
			cmp.Compare(strength(b.Scores), strength(a.Scores)),
			cmp.Compare(seq[a.ID], seq[b.ID]),
		)
	})
}
