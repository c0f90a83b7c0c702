package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/dataset"
)

func TestCompareGutenberg(t *testing.T) {
	frank1 := dataset.Gutenberg(t, "pg84.txt")
	frank2 := dataset.Gutenberg(t, "pg42324.txt")
	moby := dataset.Gutenberg(t, "pg2701.txt")
	compare := func(a, b string) map[string]any {
		code, out, errOut := neardup(t, "compare", "--json", a, b)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	same := compare(frank1, frank2)
	keys := make([]string, 0, len(same))
	for k := range same {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"candidate", "checks", "containment_ab", "containment_ba", "hamming", "imatch_equal", "jaccard", "jaccard_est", "jaccard_est_oph", "lcs", "lcs_cs", "lcs_its", "unique_a", "unique_b", "verdict"}
	if !slices.Equal(keys, want) {
		t.Errorf("JSON keys %v, want exactly %v", keys, want)
	}
	if j := same["jaccard"].(float64); j < 0.85 {
		t.Errorf("Frankenstein editions: jaccard %.4f, want ≥ 0.85", j)
	}
	if its := same["lcs_its"].(float64); its < 0.72 {
		t.Errorf("Frankenstein editions: its %.4f, want ≥ 0.72", its)
	}
	if same["verdict"] != "near" {
		t.Errorf("Frankenstein editions: verdict %v", same["verdict"])
	}
	diff := compare(frank1, moby)
	if j := diff["jaccard"].(float64); j > 0.01 {
		t.Errorf("Frankenstein vs Moby-Dick: jaccard %.4f, want ≤ 0.01", j)
	}
	if diff["verdict"] != "distinct" {
		t.Errorf("Frankenstein vs Moby-Dick: verdict %v", diff["verdict"])
	}
	t.Logf("Frankenstein editions: %v", same)
	t.Logf("Frankenstein / Moby-Dick: %v", diff)
}

func TestCompareTableAndErrors(t *testing.T) {
	docs := filepath.Join("..", "..", "examples", "docs")
	code, out, errOut := neardup(t, "compare", filepath.Join(docs, "05-library-hours.txt"), filepath.Join(docs, "06-library-hours-copy.txt"))
	if code != 0 || !strings.Contains(out, "verdict") || !strings.Contains(out, "exact") {
		t.Errorf("exit %d, out %s, err %s", code, out, errOut)
	}
	if code, _, _ := neardup(t, "compare", "one-file"); code != exitUsage {
		t.Errorf("one argument: exit %d", code)
	}
	if code, _, errOut := neardup(t, "compare", filepath.Join(docs, "nope"), filepath.Join(docs, "07-marathon.txt")); code != exitUsage || !strings.Contains(errOut, "nope") {
		t.Errorf("missing file: exit %d: %s", code, errOut)
	}
	bin := filepath.Join(t.TempDir(), "bin")
	if err := writeFile(bin, "\x00\x01\x02"); err != nil {
		t.Fatal(err)
	}
	// A file without text to compare is a mistake in the arguments (exit
	// 2, README "Exit codes"), named with why.
	if code, _, errOut := neardup(t, "compare", bin, filepath.Join(docs, "07-marathon.txt")); code != exitUsage || !strings.Contains(errOut, "binary") {
		t.Errorf("binary file: exit %d: %s", code, errOut)
	}
	big := filepath.Join(t.TempDir(), "big")
	if err := writeFile(big, strings.Repeat("x", 2048)); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := neardup(t, "compare", "--sketch.max_bytes=1024", big, filepath.Join(docs, "07-marathon.txt")); code != exitUsage || !strings.Contains(errOut, "too large") {
		t.Errorf("oversized file: exit %d: %s", code, errOut)
	}
}

// TestCompareClough runs compare on the Clough & Stevenson corpus of short
// answers against their Wikipedia sources, logs the verdicts per label
// (the checks' verdict, and scan's, which needs the pair to be an LSH
// candidate), and requires that no answer written independently ("non")
// is called a duplicate under the web profile.
func TestCompareClough(t *testing.T) {
	dir := dataset.Dir(t, "clough-plagiarised-short-answers")
	info, err := os.ReadFile(filepath.Join(dir, "file_information.csv"))
	if err != nil {
		t.Fatal(err)
	}
	table := map[string]map[string]int{}
	// The race run (-short, make race) compares the first two answers of
	// each label (compare is one pair at a time: more of the same finds no
	// race); make unit compares all 95.
	perLabel := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(info)), "\n")[1:] {
		f := strings.Split(strings.TrimSpace(line), ",")
		if len(f) != 3 || f[2] == "orig" {
			continue
		}
		if perLabel[f[2]]++; testing.Short() && perLabel[f[2]] > 2 {
			continue
		}
		src := filepath.Join(dir, "texts", "orig_task"+f[1]+".txt")
		code, out, errOut := neardup(t, "compare", "--json", src, filepath.Join(dir, "texts", f[0]))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", f[0], code, errOut)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		v := m["checks"].(string)
		if table[f[2]] == nil {
			table[f[2]] = map[string]int{}
		}
		table[f[2]][v]++
		table[f[2]]["scan:"+m["verdict"].(string)]++
		if f[2] == "non" && v != "distinct" {
			t.Errorf("%s (written independently) judged %s: %s", f[0], v, out)
		}
	}
	for _, label := range []string{"cut", "light", "heavy", "non"} {
		t.Logf("%-5s %v", label, table[label])
	}
}

// skipShort skips a long test of results, not of concurrency, in the
// -short run (make race); the unit run (make unit) always runs it.
func skipShort(t *testing.T) {
	if testing.Short() {
		t.Skip("a long check of results, run by make unit; -short is the race run")
	}
}

// scanVerdicts runs scan --emit all over files (in this order, as
// separate arguments) and returns each file's event.
func scanVerdicts(t *testing.T, files ...string) map[string]event {
	t.Helper()
	code, out, errOut := neardup(t, append([]string{"scan", "--emit", "all", "--quiet"}, files...)...)
	if code != 0 {
		t.Fatalf("scan: exit %d: %s", code, errOut)
	}
	evs := map[string]event{}
	for _, ev := range events(t, out) {
		evs[ev.ID] = ev
	}
	return evs
}

func compareVerdict(t *testing.T, a, b string) string {
	t.Helper()
	code, out, errOut := neardup(t, "compare", "--json", a, b)
	if code != 0 {
		t.Fatalf("compare %s %s: exit %d: %s", a, b, code, errOut)
	}
	var m struct {
		Verdict string `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if m.Verdict == "distinct" {
		return "unique"
	}
	return m.Verdict
}

// Exact means exact, and scan and compare agree: eight copies of Pride and
// Prejudice, each with one "not" turned into "now" somewhere, are near
// duplicates of the original, never exact, whatever shingle sample is
// stored; and compare gives every pair the verdict scan gives. On today's
// main scan called such a copy exact (jaccard 1, its stored sample being
// identical) while compare called it near (jaccard 0.9999).
func TestExactMeansExact(t *testing.T) {
	skipShort(t)
	orig, err := os.ReadFile(dataset.Gutenberg(t, "pg1342.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	a := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(a, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	files := []string{a}
	s := string(orig)
	for i := range 8 {
		at := len(s) * (i + 1) / 10
		k := strings.Index(s[at:], " not ")
		if k < 0 {
			t.Fatal("no \"not\" to change")
		}
		at += k
		f := filepath.Join(dir, fmt.Sprintf("b%d.txt", i))
		if err := os.WriteFile(f, []byte(s[:at]+" now "+s[at+5:]), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	evs := scanVerdicts(t, files...)
	for _, f := range files[1:] {
		ev := evs[filepath.ToSlash(f)]
		if ev.Kind != "near" || ev.DuplicateOf != filepath.ToSlash(a) {
			t.Errorf("%s: %s of %q by %s, want near of a.txt", filepath.Base(f), ev.Kind, ev.DuplicateOf, ev.Method)
		}
		if c := compareVerdict(t, a, f); c != ev.Kind {
			t.Errorf("%s: compare says %s, scan says %s", filepath.Base(f), c, ev.Kind)
		}
	}
}

// scan and compare agree on every Gutenberg pair (the later file of each
// pair against the earlier, as scan orders them) and on every Clough &
// Stevenson answer against its source.
func TestScanAgreesWithCompare(t *testing.T) {
	skipShort(t)
	gut := filepath.Join(dataset.Dir(t, "gutenberg-editions"), "texts")
	names, err := filepath.Glob(filepath.Join(gut, "*.txt"))
	if err != nil || len(names) != 10 {
		t.Fatalf("gutenberg texts: %v %v", names, err)
	}
	slices.Sort(names)
	evs := scanVerdicts(t, gut)
	for i, b := range names {
		ev := evs[filepath.ToSlash(b)]
		for _, a := range names[:i] {
			want := "unique"
			if ev.DuplicateOf == filepath.ToSlash(a) {
				want = ev.Kind
			}
			if c := compareVerdict(t, a, b); c != want && !(want == "unique" && ev.Kind != "unique") {
				t.Errorf("%s after %s: compare says %s, scan %s of %q", filepath.Base(b), filepath.Base(a), c, ev.Kind, ev.DuplicateOf)
			}
		}
	}

	dir := dataset.Dir(t, "clough-plagiarised-short-answers")
	info, err := os.ReadFile(filepath.Join(dir, "file_information.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(info)), "\n")[1:] {
		f := strings.Split(strings.TrimSpace(line), ",")
		if len(f) != 3 || f[2] == "orig" {
			continue
		}
		src, ans := filepath.Join(dir, "texts", "orig_task"+f[1]+".txt"), filepath.Join(dir, "texts", f[0])
		ev := scanVerdicts(t, src, ans)[filepath.ToSlash(ans)]
		if c := compareVerdict(t, src, ans); c != ev.Kind {
			t.Errorf("%s: compare says %s, scan says %s", f[0], c, ev.Kind)
		}
	}
}
