package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sketch.join_hyphens as a user sets it: a page of text broken at 40
// columns with words hyphenated at line ends (U+2010, as man renders) and
// the same words on unbroken lines are an exact copy by default and not
// with --sketch.join_hyphens=false; a value that is not a boolean exits 2
// naming the key.
func TestScanJoinHyphens(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("..", "..", "examples", "docs", "01-harbour-bridge.txt"))
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields(string(base))
	var broken strings.Builder
	col, hyphenated := 0, 0
	for _, w := range words {
		if col > 0 && col+1+len(w) > 40 {
			if len(w) >= 8 && strings.Trim(w[:4], "abcdefghijklmnopqrstuvwxyz") == "" && w[4] >= 'a' && w[4] <= 'z' {
				broken.WriteString(" " + w[:4] + "\u2010\n    " + w[4:])
				col, hyphenated = 4+len(w)-4, hyphenated+1
				continue
			}
			broken.WriteString("\n")
			col = 0
		} else if col > 0 {
			broken.WriteByte(' ')
			col++
		}
		broken.WriteString(w)
		col += len(w)
	}
	if hyphenated == 0 {
		t.Fatal("no word hyphenated: the test text does not exercise the rule")
	}
	dir := t.TempDir()
	one, two := filepath.Join(dir, "wide.txt"), filepath.Join(dir, "narrow.txt")
	if err := os.WriteFile(one, []byte(strings.Join(words, " ")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(two, []byte(broken.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	kind := func(args ...string) string {
		t.Helper()
		code, out, errOut := neardup(t, append(append([]string{"scan", "--quiet", "--emit", "all"}, args...), one, two)...)
		if code != 0 {
			t.Fatalf("scan %v: exit %d: %s", args, code, errOut)
		}
		var e struct {
			Kind string `json:"kind"`
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &e); err != nil {
			t.Fatalf("scan %v: %q: %v", args, out, err)
		}
		return e.Kind
	}
	if k := kind(); k != "exact" {
		t.Errorf("default: %s, want exact (%d words hyphenated at line ends)", k, hyphenated)
	}
	if k := kind("--sketch.join_hyphens=false"); k == "exact" {
		t.Errorf("--sketch.join_hyphens=false: exact, want the hyphenated words apart")
	}
	code, _, errOut := neardup(t, "scan", "--sketch.join_hyphens=maybe", one)
	if code != 2 || !strings.Contains(errOut, "sketch.join_hyphens") {
		t.Errorf("join_hyphens maybe: exit %d, %q; want exit 2 naming the key", code, errOut)
	}
}
