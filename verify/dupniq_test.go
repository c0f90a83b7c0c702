package verify

import (
	"math"
	"testing"
)

func TestScoresTable(t *testing.T) {
	tests := []struct {
		name        string
		lcs, x, y   int
		cs, its     float64
		approximate bool
	}{
		{"nothing common", 0, 100, 100, 0, 0, false},
		{"empty x", 0, 0, 100, 0, 0, false},
		{"both empty", 0, 0, 0, 0, 0, false},
		{"identical", 500, 500, 500, 1, 1, false},
		{"identical single word", 1, 1, 1, 1, 1, false},
		{"one common word", 1, 10, 10, 0.1, 0, false},
		// DUPNIQ Table 2, row 1 (Shakespeare's Law): cs 0.922, its 0.979.
		{"table2 row1", 1404, 1482, 1563, 0.922, 0.979, true},
		// Row 2 (Departmental ditties); the extraction lost |X|, recovered
		// from cs 0.260: |X| ≈ (739/0.260)²/4512 ≈ 1790.
		{"table2 row2", 739, 1790, 4512, 0.260, 0.765, true},
		// Row 3 (Metrical translations vs Ausonius): cs 0.005, its 0.400.
		{"table2 row3", 53, 7526, 12695, 0.005, 0.400, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, its := CS(tt.lcs, tt.x, tt.y), ITS(tt.lcs, tt.x, tt.y)
			tol := 0.0
			if tt.approximate {
				tol = 0.0015
			}
			if math.Abs(cs-tt.cs) > tol || math.Abs(its-tt.its) > tol {
				t.Errorf("cs %.4f its %.4f, want %.3f %.3f", cs, its, tt.cs, tt.its)
			}
		})
	}
}

// TestMinLCS checks the lower bound against a linear scan: L is the least
// length that reaches t, and no shorter one does.
func TestMinLCS(t *testing.T) {
	for _, s := range []Score{ScoreCS, ScoreITS} {
		for _, th := range []float64{0.05, DefaultCS, 0.5, DefaultITS, 0.9, 1, 1.5} {
			for _, x := range []int{0, 1, 2, 3, 10, 99, 1000, 7526} {
				for _, y := range []int{0, 1, 5, 64, 1563, 12695} {
					got, err := MinLCS(s, th, x, y)
					if err != nil {
						t.Fatal(err)
					}
					want := min(x, y) + 1
					for l := 1; l <= min(x, y); l++ {
						if score(s, l, x, y) >= th {
							want = l
							break
						}
					}
					if got != want {
						t.Fatalf("MinLCS(%s, %v, %d, %d) = %d, want %d", s, th, x, y, got, want)
					}
				}
			}
		}
	}
	if l, _ := MinLCS(ScoreITS, 0, 10, 10); l != 0 {
		t.Errorf("MinLCS at t = 0 is %d, want 0", l)
	}
	if _, err := MinLCS("jaccard", 0.5, 10, 10); err == nil {
		t.Error("MinLCS accepted an unknown score")
	}
	// Table 2, row 3: 689 common words cannot reach its 0.72, so DUPNIQ
	// skips the alignment; row 1's 1406 can.
	if l, _ := MinLCS(ScoreITS, DefaultITS, 7526, 12695); l <= 689 {
		t.Errorf("row 3 bound %d does not prune 689 common words", l)
	}
	if l, _ := MinLCS(ScoreITS, DefaultITS, 1482, 1563); l > 1406 {
		t.Errorf("row 1 bound %d prunes a duplicate with 1406 common words", l)
	}
}

func BenchmarkMinLCS(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		minLCS(ScoreITS, DefaultITS, 7526, 12695)
	}
}
