package eval

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/internal/dataset"
	"github.com/neardup/neardup/internal/difftest"
)

// The regression tests of neardup's accuracy: each set is streamed
// through the default (web) profile's pipeline once, as neardup eval does,
// and every test of the package reads that one evaluation. The figures
// asserted here are those of the committed report (docs/eval/report.md,
// which TestCommittedReport keeps in step). The targets of the passage
// lane are in targets_issue12_test.go.

var evaluated struct {
	sync.Mutex
	results map[string]*Result
}

// evaluate returns the evaluation of the named set under the default
// configuration, computing it on first use. A missing set skips the test,
// or fails it under CI.
func evaluate(t *testing.T, name string) *Result {
	t.Helper()
	var dir string
	if Generated(name) {
		dir = filepath.Join(filepath.Dir(dataset.Dir(t, SetGutenberg)), name) // generated from the e-texts
	} else {
		dir = dataset.Dir(t, name)
	}
	if name == setLicensecheck {
		dataset.Dir(t, setSPDX) // the reference texts
	}
	evaluated.Lock()
	defer evaluated.Unlock()
	if r := evaluated.results[name]; r != nil {
		return r
	}
	cfg, err := config.Load("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sets, _, err := Build(filepath.Dir(dir), []string{name})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Evaluate(context.Background(), cfg, sets[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if evaluated.results == nil {
		evaluated.results = map[string]*Result{}
	}
	evaluated.results[name] = r
	return r
}

// auc returns the ROC AUC of a score.
func auc(r *Result, s Score) float64 { return r.Curve(s).AUC }

// Gutenberg: exactly the five edition pairs are linked, none of the 40
// pairs of different works; every score separates the two perfectly.
func TestGutenbergEditions(t *testing.T) {
	r := evaluate(t, SetGutenberg)
	same, cross := 0, 0
	for _, row := range r.Gutenberg {
		switch {
		case row.SameWork && row.Kind != "":
			same++
		case !row.SameWork && row.Kind != "":
			cross++
			t.Errorf("different works linked: %s → %s (%s)", row.Later, row.Earlier, row.Kind)
		}
	}
	if same != 5 || cross != 0 || r.Links.All.FP != 0 || r.Links.All.Unlabelled != 0 {
		t.Errorf("edition pairs linked %d of 5, cross-work %d of 40; links %+v", same, cross, r.Links.All)
	}
	for _, s := range []Score{ScoreJaccard, ScoreContainmentAB, ScoreContainmentBA, ScoreJaccardEst, ScoreCS, ScoreITS} {
		if a := auc(r, s); a != 1 {
			t.Errorf("%s: AUC %.3f, want 1", s, a)
		}
	}
}

// Clough & Stevenson: no independent answer is linked to a source and no
// answer to another task's source; the cut answers the current cascade
// finds stay found. Pair scores separate plagiarised answers from the
// rest well, whatever the stream reports.
func TestCloughAnswers(t *testing.T) {
	r := evaluate(t, setClough)
	for _, row := range r.Clough.Rows {
		if row.WrongSource != 0 {
			t.Errorf("%s: %d answers linked to another task's source", row.Category, row.WrongSource)
		}
	}
	if non := r.Clough.Row("non"); non.Linked != 0 {
		t.Errorf("%d independent answers linked to their task's source", non.Linked)
	}
	// The only links the labels do not expect are between two answers to
	// the same task (students who copied the same source passage share
	// it): never across tasks, never to an independent answer.
	for _, w := range r.Links.Wrong {
		ta, tb := w[0][strings.LastIndex(w[0], "_")+1:], w[1][strings.LastIndex(w[1], "_")+1:]
		if ta != tb || strings.HasPrefix(w[0], "orig_") || strings.HasPrefix(w[1], "orig_") {
			t.Errorf("wrong link %v", w)
		}
	}
	if cut := r.Clough.Row("cut"); cut.Linked < 5 {
		t.Errorf("cut answers linked to their source: %d of %d, want at least 5", cut.Linked, cut.Answers)
	}
	for s, floor := range map[Score]float64{ScoreJaccard: 0.97, ScoreContainmentAB: 0.97, ScoreCS: 0.98, ScoreITS: 0.98} {
		if a := auc(r, s); a < floor {
			t.Errorf("%s: AUC %.3f, want at least %.2f", s, a, floor)
		}
	}
}

// PAN13: no suspicious document is linked to a source it does not copy.
// The copied passages (256 to 8,546 characters in long documents) leave
// whole-document resemblance tiny, yet the exact scores still rank the
// labelled pairs above the others.
func TestPAN13(t *testing.T) {
	r := evaluate(t, setPAN13)
	// Links to sources a suspicious document is not labelled with are
	// copies the labels of this subset do not list: nearly all of the
	// passages reported on them are word-for-word copies of the source.
	if p := r.PAN; p.OffPair > 0 && float64(p.OffPairCopied) < 0.9*float64(p.OffPair) {
		t.Errorf("%d of %d passages on unlabelled pairs are copies, want at least 90%%: links %v", p.OffPairCopied, p.OffPair, r.Links.Wrong)
	}
	if r.PAN.LinkedPairs != r.Links.All.Found {
		t.Errorf("linked pairs %d, expected links found %d", r.PAN.LinkedPairs, r.Links.All.Found)
	}
	for _, s := range []Score{ScoreJaccard, ScoreContainmentAB, ScoreContainmentBA} {
		if a := auc(r, s); a < 0.99 {
			t.Errorf("%s: AUC %.3f, want at least 0.99", s, a)
		}
	}
}

// licensecheck test files after the SPDX texts: files that are one
// license are linked to a copy of their license text, duplicate_of names
// the right license, and every exact link is right.
func TestLicensecheck(t *testing.T) {
	r := evaluate(t, setLicensecheck)
	// The wrong links measured on the texts are the links judged wrong.
	if td, all := r.Licenses.TextDup, r.Links.All; td.Right != all.TP || td.Wrong != all.FP || td.WrongText > td.Wrong {
		t.Errorf("wrong links near as text: %d right, %d wrong (%d near as text); links judged: %d right, %d wrong", td.Right, td.Wrong, td.WrongText, all.TP, all.FP)
	}
	full := r.Licenses.Class(classFull)
	if full.Linked < 540 || full.Expected != 567 {
		t.Errorf("full license texts linked to their license: %d of %d, want at least 540 of 567", full.Linked, full.Expected)
	}
	// 0.964 with the passage lane (0.974 before it): licenses of different
	// families share verbatim clauses (warranty disclaimers), which the
	// lane reports as partial duplicates.
	if p := r.Links.Best.Precision(); p < 0.95 {
		t.Errorf("duplicate_of precision %.3f, want at least 0.95", p)
	}
	if ex := r.Links.ByMethod["exact"]; ex == nil || ex.FP != 0 || ex.TP < 300 {
		t.Errorf("exact links: %+v, want at least 300 right and none wrong", ex)
	}
	// Every embedded license is linked to a copy of its license text: as a
	// near duplicate when the file is mostly that license (Jaccard runs
	// before the partial checks), and as a partial duplicate when the
	// license is under 80% of the file.
	for _, e := range r.Licenses.Embedded {
		switch {
		case e.Kind == "":
			t.Errorf("embedded license %s (%.1f%% of the file) not linked to its license text", e.File, 100*e.Coverage)
		case e.Coverage < 0.8 && e.Kind != "partial":
			t.Errorf("embedded license %s (%.1f%% of the file) linked as %s, want partial", e.File, 100*e.Coverage, e.Kind)
		}
	}
}

// SPDX: every license text listed under several ids (GPL-2.0,
// GPL-2.0-only, …) is linked to its first id, identical texts as exact
// copies, and they end in one cluster.
func TestSPDX(t *testing.T) {
	r := evaluate(t, setSPDX)
	l := r.Links
	if l.Expected != 47 || l.All.Found != l.Expected {
		t.Errorf("ids of one license text linked: %d of %d, want 47 of 47", l.All.Found, l.Expected)
	}
	if ex := l.ByMethod["exact"]; ex == nil || ex.Found < 45 || ex.FP != 0 {
		t.Errorf("exact links: %+v, want 45 found and none wrong", ex)
	}
	if tr := r.Licenses.Clusters.TextRecall; tr != 1 {
		t.Errorf("pairs of one license text in one cluster: %.3f, want 1", tr)
	}
}

// The committed report is what neardup eval reports now: the tests above
// assert its figures, and a change of accuracy must come with a new
// report (make eval from the repository root, and commit docs/eval).
func TestCommittedReport(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "docs", "eval", ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{Command: "neardup eval", Config: cfg}
	for _, name := range SetNames() {
		rep.Results = append(rep.Results, evaluate(t, name))
	}
	var got bytes.Buffer
	if err := rep.WriteMarkdown(&got); err != nil {
		t.Fatal(err)
	}
	if line, a, b := difftest.FirstLine(got.String(), string(want)); line > 0 {
		t.Fatalf("docs/eval/%s is not what neardup eval reports now (make eval, i.e. neardup eval --out docs/eval, and commit docs/eval); first difference, line %d:\nreported:  %s\ncommitted: %s", ReportFile, line, a, b)
	}
}
