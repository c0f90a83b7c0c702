package deploy

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/sketch"
)

// The S-curve table of docs/operations.md is what neardup computes: the
// bands and rows sketch.BandsWeighted chooses for the row's k, threshold
// and recall weight, and P(s) = 1 − (1 − s^r)^b at each column's s.
func TestGuideSCurve(t *testing.T) {
	guide := string(readFile(t, guideFile))
	start := strings.Index(guide, "| setting | k | threshold | recall_weight | bands × rows |")
	if start < 0 {
		t.Fatal("no S-curve table in docs/operations.md")
	}
	lines := strings.Split(guide[start:], "\n")
	header := strings.Split(strings.Trim(lines[0], "| "), "|")
	var cols []float64
	for _, h := range header[5:] {
		s, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(h), "P("), ")"), 64)
		if err != nil {
			t.Fatalf("column %q: %v", h, err)
		}
		cols = append(cols, s)
	}
	rows := 0
	for _, l := range lines[2:] {
		if !strings.HasPrefix(l, "|") {
			break
		}
		f := strings.Split(strings.Trim(l, "| "), "|")
		for i := range f {
			f[i] = strings.Trim(strings.TrimSpace(f[i]), "*`")
		}
		k, _ := strconv.Atoi(f[1])
		thr, _ := strconv.ParseFloat(f[2], 64)
		w, _ := strconv.ParseFloat(f[3], 64)
		b, r := sketch.BandsWeighted(k, thr, w)
		if got := fmt.Sprintf("%d × %d", b, r); f[4] != got {
			t.Errorf("%s: bands × rows %q, neardup chooses %s", f[0], f[4], got)
		}
		for i, s := range cols {
			if want := fmt.Sprintf("%.3f", sketch.Collision(s, b, r)); !regexp.MustCompile(`^` + regexp.QuoteMeta(want) + `$`).MatchString(f[5+i]) {
				t.Errorf("%s: P(%.1f) %q, want %s", f[0], s, f[5+i], want)
			}
		}
		rows++
	}
	if rows < 3 {
		t.Errorf("%d rows in the S-curve table", rows)
	}
}
