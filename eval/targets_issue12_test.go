package eval

import "testing"

// The targets of the passage lane (issue 12), under the default web
// profile with each set in crawler order. They do not hold before the
// lane is in, so this file builds only with -tags issue12 until then;
// the merge of issue 12 removes the build constraint.

// PAN13: at least 495 of the 500 labelled (suspicious, source) pairs
// linked, and the reported passages at PAN 2013 precision and recall of
// at least 0.90.
func TestIssue12PAN13(t *testing.T) {
	r := evaluate(t, setPAN13)
	if r.PAN.LinkedPairs < 495 {
		t.Errorf("labelled pairs linked: %d of 500, want at least 495", r.PAN.LinkedPairs)
	}
	s := r.PAN.PAN
	if r.PAN.Passages == 0 || s.Precision < 0.9 || s.Recall < 0.9 {
		t.Errorf("passages: %d reported, precision %.3f, recall %.3f (granularity %.3f), want precision and recall at least 0.90",
			r.PAN.Passages, s.Precision, s.Recall, s.Granularity)
	}
}

// Clough & Stevenson: at least 17 of the 19 cut answers linked to their
// task's source, and no independent (non) answer linked to any source.
func TestIssue12Clough(t *testing.T) {
	r := evaluate(t, setClough)
	if cut := r.Clough.Row("cut"); cut.Linked < 17 {
		t.Errorf("cut answers linked to their source: %d of 19, want at least 17", cut.Linked)
	}
	if non := r.Clough.Row("non"); non.Linked+non.WrongSource != 0 {
		t.Errorf("independent answers linked to a source: %d to their own, %d to another", non.Linked, non.WrongSource)
	}
}

// Gutenberg: still exactly the five edition pairs and none of the 40
// cross-work pairs.
func TestIssue12Gutenberg(t *testing.T) {
	r := evaluate(t, SetGutenberg)
	linked := 0
	for _, row := range r.Gutenberg {
		if row.Kind == "" {
			continue
		}
		if !row.SameWork {
			t.Errorf("different works linked: %s → %s (%s)", row.Later, row.Earlier, row.Kind)
		}
		linked++
	}
	if linked != 5 {
		t.Errorf("pairs linked: %d, want exactly the 5 edition pairs", linked)
	}
}
