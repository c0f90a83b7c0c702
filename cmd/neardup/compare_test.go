package main

import (
	"encoding/json"
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
	want := []string{"containment_ab", "containment_ba", "hamming", "imatch_equal", "jaccard", "jaccard_est", "jaccard_est_oph", "lcs", "lcs_cs", "lcs_its", "unique_a", "unique_b", "verdict"}
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
	if code, _, errOut := neardup(t, "compare", filepath.Join(docs, "nope"), filepath.Join(docs, "07-marathon.txt")); code != exitError || !strings.Contains(errOut, "nope") {
		t.Errorf("missing file: exit %d: %s", code, errOut)
	}
	bin := filepath.Join(t.TempDir(), "bin")
	if err := writeFile(bin, "\x00\x01\x02"); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := neardup(t, "compare", bin, filepath.Join(docs, "07-marathon.txt")); code != exitError || !strings.Contains(errOut, "binary") {
		t.Errorf("binary file: exit %d: %s", code, errOut)
	}
	big := filepath.Join(t.TempDir(), "big")
	if err := writeFile(big, strings.Repeat("x", 2048)); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := neardup(t, "compare", "--sketch.max_bytes=1024", big, filepath.Join(docs, "07-marathon.txt")); code != exitError || !strings.Contains(errOut, "too large") {
		t.Errorf("oversized file: exit %d: %s", code, errOut)
	}
}

// TestCompareClough runs compare on the Clough & Stevenson corpus of short
// answers against their Wikipedia sources, logs the verdicts per label,
// and requires that no answer written independently ("non") is called a
// duplicate under the web profile.
func TestCompareClough(t *testing.T) {
	dir := dataset.Dir(t, "clough-plagiarised-short-answers")
	info, err := os.ReadFile(filepath.Join(dir, "file_information.csv"))
	if err != nil {
		t.Fatal(err)
	}
	table := map[string]map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(info)), "\n")[1:] {
		f := strings.Split(strings.TrimSpace(line), ",")
		if len(f) != 3 || f[2] == "orig" {
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
		v := m["verdict"].(string)
		if table[f[2]] == nil {
			table[f[2]] = map[string]int{}
		}
		table[f[2]][v]++
		if f[2] == "non" && v != "distinct" {
			t.Errorf("%s (written independently) judged %s: %s", f[0], v, out)
		}
	}
	for _, label := range []string{"cut", "light", "heavy", "non"} {
		t.Logf("%-5s %v", label, table[label])
	}
}
