package eval

import (
	"math"
	"math/rand/v2"
	"testing"
)

// aucBrute is the definition: over every (positive, negative) pair, the
// weight of those where the positive scores higher, ties counting half.
func aucBrute(xs []scored) float64 {
	var num, den float64
	for _, p := range xs {
		if !p.Pos {
			continue
		}
		for _, n := range xs {
			if n.Pos {
				continue
			}
			w := p.Weight * n.Weight
			den += w
			switch {
			case p.Score > n.Score:
				num += w
			case p.Score == n.Score:
				num += w / 2
			}
		}
	}
	return num / den
}

// prBrute returns precision and recall when every score ≥ t is called a
// duplicate.
func prBrute(xs []scored, t float64) (p, r float64) {
	var tp, fp, pos float64
	for _, x := range xs {
		if x.Pos {
			pos += x.Weight
		}
		if x.Score >= t {
			if x.Pos {
				tp += x.Weight
			} else {
				fp += x.Weight
			}
		}
	}
	return tp / (tp + fp), tp / pos
}

func TestCurveMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 7))
	for range 200 {
		var xs []scored
		for range 2 + r.IntN(40) {
			// Few distinct scores, so that ties are common.
			xs = append(xs, scored{Score: float64(r.IntN(8)) / 8, Pos: r.IntN(3) == 0, Weight: float64(1 + r.IntN(3))})
		}
		xs[0].Pos, xs[1].Pos = true, false
		c := newCurve(ScoreJaccard, xs)
		if want := aucBrute(xs); math.Abs(c.AUC-want) > 1e-12 {
			t.Fatalf("AUC %v, want %v for %v", c.AUC, want, xs)
		}
		best := 0.0
		for _, pt := range c.PR {
			p, rec := prBrute(xs, pt.Threshold)
			if math.Abs(p-pt.Precision) > 1e-12 || math.Abs(rec-pt.Recall) > 1e-12 {
				t.Fatalf("at %v: precision %v recall %v, want %v %v", pt.Threshold, pt.Precision, pt.Recall, p, rec)
			}
			best = max(best, f1(p, rec))
		}
		if math.Abs(best-c.BestF1) > 1e-12 {
			t.Fatalf("best F1 %v, want %v", c.BestF1, best)
		}
		if last := c.PR[len(c.PR)-1]; last.Recall != 1 {
			t.Fatalf("the lowest threshold recalls %v, want 1", last.Recall)
		}
	}
}

func TestCurveEdges(t *testing.T) {
	perfect := newCurve(ScoreJaccard, []scored{{0.9, true, 1}, {0.8, true, 1}, {0.1, false, 5}})
	if perfect.AUC != 1 || perfect.AP != 1 || perfect.BestF1 != 1 || perfect.BestThreshold != 0.8 {
		t.Errorf("perfect separation: %+v", perfect)
	}
	inverted := newCurve(ScoreJaccard, []scored{{0.1, true, 1}, {0.9, false, 1}})
	if inverted.AUC != 0 {
		t.Errorf("inverted: AUC %v, want 0", inverted.AUC)
	}
	if none := newCurve(ScoreJaccard, []scored{{0.5, false, 1}}); !math.IsNaN(none.AUC) || !math.IsNaN(none.BestF1) {
		t.Errorf("no positive: %+v, want NaN figures", none)
	}
	// The SimHash distance is ranked lower-is-closer.
	pairs := []PairScores{{Label: Positive, Weight: 1}, {Label: Negative, Weight: 1}}
	pairs[0].Values[ScoreHamming], pairs[1].Values[ScoreHamming] = 2, 30
	for i := range pairs {
		for s := range ScoreEdit {
			pairs[i].Has[s] = true
		}
	}
	if c := curves(pairs)[ScoreHamming]; c.AUC != 1 || c.BestThreshold != 2 {
		t.Errorf("hamming: AUC %v at %v, want 1 at ≤ 2", c.AUC, c.BestThreshold)
	}
}
