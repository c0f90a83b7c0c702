package eval

import (
	"cmp"
	"math"
	"slices"
)

// scored is one labelled, weighted score.
type scored struct {
	Score  float64
	Pos    bool
	Weight float64
}

// PRPoint is a point of a precision–recall curve: calling every pair with
// a score at or above Threshold a duplicate gives Precision and Recall.
type PRPoint struct {
	Threshold, Precision, Recall float64
}

// Curve summarizes how well one score separates the positive pairs of a
// set from the negative ones.
type Curve struct {
	Score Score
	// Pairs and Positives count the scored pairs (with weights, the
	// pairs they stand for).
	Pairs, Positives float64
	// AUC is the area under the ROC curve: the probability that a random
	// positive pair scores above a random negative one (ties count half).
	// It and the other figures are NaN when there is no positive pair (and
	// AUC when there is no negative one).
	AUC float64
	// AP is the average precision, the area under the precision–recall
	// curve taken as steps.
	AP float64
	// BestF1 is the highest F1 of any threshold, reached at BestThreshold
	// with BestPrecision and BestRecall.
	BestF1, BestThreshold, BestPrecision, BestRecall float64
	// PR is the precision–recall curve, threshold decreasing.
	PR []PRPoint
}

// newCurve computes the curve of xs. Scores where lower means closer
// (the SimHash distance) are passed negated by the caller, so that a
// higher score always means closer.
func newCurve(score Score, xs []scored) Curve {
	c := Curve{Score: score}
	xs = slices.Clone(xs)
	slices.SortFunc(xs, func(a, b scored) int { return cmp.Compare(b.Score, a.Score) })
	var totPos, totNeg float64
	for _, x := range xs {
		if x.Pos {
			totPos += x.Weight
		} else {
			totNeg += x.Weight
		}
	}
	c.Pairs, c.Positives = totPos+totNeg, totPos
	if totPos == 0 {
		c.AUC, c.AP, c.BestF1, c.BestThreshold, c.BestPrecision, c.BestRecall = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
		return c
	}
	// Walk down the thresholds, one distinct score at a time.
	var tp, fp, auc, prevRecall float64
	for i := 0; i < len(xs); {
		j := i
		var dtp, dfp float64
		for ; j < len(xs) && xs[j].Score == xs[i].Score; j++ {
			if xs[j].Pos {
				dtp += xs[j].Weight
			} else {
				dfp += xs[j].Weight
			}
		}
		// Positives of this score beat the negatives below it and tie
		// with the negatives at it.
		auc += dtp * (totNeg - fp - dfp + dfp/2)
		tp, fp = tp+dtp, fp+dfp
		p := PRPoint{Threshold: xs[i].Score, Precision: tp / (tp + fp), Recall: tp / totPos}
		c.AP += (p.Recall - prevRecall) * p.Precision
		prevRecall = p.Recall
		if f := f1(p.Precision, p.Recall); f > c.BestF1 {
			c.BestF1, c.BestThreshold, c.BestPrecision, c.BestRecall = f, p.Threshold, p.Precision, p.Recall
		}
		c.PR = append(c.PR, p)
		i = j
	}
	if totNeg > 0 {
		c.AUC = auc / (totPos * totNeg)
	} else {
		c.AUC = math.NaN()
	}
	return c
}

func f1(p, r float64) float64 {
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// curves computes the curve of every score over pairs.
func curves(pairs []PairScores) []Curve {
	out := make([]Curve, 0, NumScores)
	for s := range NumScores {
		var xs []scored
		for _, p := range pairs {
			if !p.Has[s] {
				continue
			}
			v := p.Values[s]
			if !s.HigherIsCloser() {
				v = -v
			}
			xs = append(xs, scored{Score: v, Pos: p.Label == Positive, Weight: p.Weight})
		}
		c := newCurve(s, xs)
		if !s.HigherIsCloser() {
			c.BestThreshold = -c.BestThreshold
			for i := range c.PR {
				c.PR[i].Threshold = -c.PR[i].Threshold
			}
		}
		out = append(out, c)
	}
	return out
}
