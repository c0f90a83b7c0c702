package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// verify.settle_after as a user sets it: with N = 1 the last of four
// near copies of one text verifies one candidate and counts the others
// in settled, with the same verdict and duplicate_of as with every
// candidate verified; a negative N is refused before anything runs.
func TestScanSettleAfter(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("..", "..", "examples", "docs", "01-harbour-bridge.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var files []string
	for i := range 4 {
		f := filepath.Join(dir, fmt.Sprintf("copy%d.txt", i))
		text := fmt.Sprintf("%s\nEdition %d of the city desk, page %d.\n", base, i+1, 10+i)
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	type ev struct {
		ID          string            `json:"id"`
		Kind        string            `json:"kind"`
		DuplicateOf string            `json:"duplicate_of"`
		Settled     int               `json:"settled"`
		Matches     []json.RawMessage `json:"matches"`
	}
	last := func(args ...string) ev {
		t.Helper()
		code, out, errOut := neardup(t, append(append([]string{"scan", "--emit", "all", "--quiet"}, args...), files...)...)
		if code != 0 {
			t.Fatalf("scan %v: exit %d: %s", args, code, errOut)
		}
		events(t, out) // every line valid against the event schema
		lines := strings.Split(strings.TrimSpace(out), "\n")
		var e ev
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	all, settled := last(), last("--verify.settle_after=1")
	if all.Kind != "near" || all.Settled != 0 || len(all.Matches) < 3 {
		t.Fatalf("every candidate verified: kind %s, settled %d, %d matches; want near, 0, at least 3", all.Kind, all.Settled, len(all.Matches))
	}
	if settled.Kind != all.Kind || settled.DuplicateOf != all.DuplicateOf {
		t.Errorf("settle_after 1: %s of %s, want %s of %s", settled.Kind, settled.DuplicateOf, all.Kind, all.DuplicateOf)
	}
	if settled.Settled < 1 || len(settled.Matches)+settled.Settled != len(all.Matches) {
		t.Errorf("settle_after 1: %d matches and %d settled, want %d in all with at least one settled", len(settled.Matches), settled.Settled, len(all.Matches))
	}
	code, _, errOut := neardup(t, "scan", "--verify.settle_after=-1", files[0])
	if code != 2 || !strings.Contains(errOut, "verify.settle_after") {
		t.Errorf("settle_after -1: exit %d, %q; want exit 2 naming the key", code, errOut)
	}
}
