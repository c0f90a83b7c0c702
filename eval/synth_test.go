package eval

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/config"
)

// On generated text: an unchanged copy is found by every detector, and
// a copy with nothing of the reference left by none but chance LSH
// collisions; the sweep is the same for the same seed.
func TestSynthSweep(t *testing.T) {
	cfg, err := config.Load("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := SynthConfig{Seed: 3, Words: 300, Overlaps: []float64{0, 1}, Noise: []float64{0, 0.2}, Reps: 2, Score: cfg, Source: "generated"}
	r, err := RunSynth(context.Background(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Cells) != 4 || len(r.Detectors) == 0 {
		t.Fatalf("%d cells, %d detectors", len(r.Cells), len(r.Detectors))
	}
	same, none := r.Cell(1, 0), r.Cell(0, 0)
	for d, det := range r.Detectors {
		if det.Name == "containment ≥ 0.8" {
			// One way only: a copy as long as its reference is not
			// contained in it; the jaccard check after it decides.
			continue
		}
		if same.Detected[d] != 1 {
			t.Errorf("%s: found %.2f of unchanged copies, want all", det, same.Detected[d])
		}
		if det.Name != "candidate" && none.Detected[d] != 0 {
			t.Errorf("%s: found %.2f of copies of unrelated text, want none", det, none.Detected[d])
		}
	}
	for _, s := range []Score{ScoreJaccard, ScoreContainmentAB, ScoreCS, ScoreITS, ScoreEdit} {
		if same.Scores[s] != 1 || none.Scores[s] >= same.Scores[s] {
			t.Errorf("%s: unchanged copy %.3f, unrelated %.3f", s, same.Scores[s], none.Scores[s])
		}
	}
	if noisy := r.Cell(1, 1); noisy.Scores[ScoreJaccard] > 0.2 || noisy.Scores[ScoreITS] < noisy.Scores[ScoreJaccard] {
		t.Errorf("noise 0.2: jaccard %.3f, its %.3f; want shingles broken and unique words surviving better",
			noisy.Scores[ScoreJaccard], noisy.Scores[ScoreITS])
	}
	if r.WordErrors[0] != 0 || r.WordErrors[1] < 0.3 {
		t.Errorf("words changed by noise 0 and 0.2: %v", r.WordErrors)
	}
	again, err := RunSynth(context.Background(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Cells {
		if r.Cells[i].Scores != again.Cells[i].Scores {
			t.Errorf("cell %d: %v then %v with the same seed", i, r.Cells[i].Scores, again.Cells[i].Scores)
		}
	}
	dir := t.TempDir()
	if err := r.Write(dir, "neardup eval synth"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{SynthReport, "synth-scores.png", "synth-detection.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
