package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/dataset"
)

// neardup eval on one set writes the report and its plots and prints a
// summary with the run time; an empty data folder is explained.
func TestEvalCommand(t *testing.T) {
	root := filepath.Dir(dataset.Dir(t, "gutenberg-editions"))
	out := t.TempDir()
	code, stdout, stderr := neardup(t, "eval", "--data", root, "--sets", "gutenberg", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "gutenberg-editions") || !strings.Contains(stdout, "recall 1.000") || !strings.Contains(stdout, "neardup eval: 1 sets in") {
		t.Errorf("summary: %s", stdout)
	}
	rep, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"neardup eval --data " + root + " --sets gutenberg --out " + out, "| pg42671.txt | pg1342.txt | near (jaccard) |", "![pr-gutenberg](pr-gutenberg.png)"} {
		if !strings.Contains(string(rep), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, f := range []string{"pr-gutenberg.png", "lsh-gutenberg.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}

	code, _, stderr = neardup(t, "eval", "--data", t.TempDir(), "--out", t.TempDir())
	if code != exitError || !strings.Contains(stderr, "none of the evaluation sets") || !strings.Contains(stderr, "pan13-text-alignment-no-obfuscation") {
		t.Errorf("empty data folder: exit %d, %s", code, stderr)
	}
	if code, _, stderr = neardup(t, "eval", "--sets", "nosuchset"); code != exitUsage {
		t.Errorf("unknown set: exit %d, %s", code, stderr)
	}
}

func TestEvalSynthCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("the sweep runs a pipeline per copy")
	}
	out := t.TempDir()
	code, stdout, stderr := neardup(t, "eval", "synth", "--data", t.TempDir(), "--reps", "1", "--words", "200", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rep, err := os.ReadFile(filepath.Join(out, "synth.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "66 cells × 1 copies") || !strings.Contains(string(rep), "generated text") || !strings.Contains(string(rep), "| web: pipeline |") {
		t.Errorf("stdout %q; report:\n%s", stdout, rep)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"docs/eval": "docs/eval", "a b": "'a b'", "it's": `'it'\''s'`, "": "''"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// neardup eval sites --write writes the site corpus as JSON lines, one
// file per rendering and the expected links; without --write it is a
// usage error.
func TestEvalSitesCommand(t *testing.T) {
	root := filepath.Dir(dataset.Dir(t, "gutenberg-editions"))
	out := t.TempDir()
	code, stdout, stderr := neardup(t, "eval", "sites", "--data", root, "--pages", "40", "--write", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "40 pages of 8 sites") {
		t.Errorf("stdout: %s", stdout)
	}
	for _, f := range []string{"sites.jsonl", "sites-html.jsonl", "sites-html-boiler.jsonl"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n"); n != 40 {
			t.Errorf("%s: %d lines", f, n)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "sites-links.jsonl")); err != nil {
		t.Error(err)
	}
	if code, _, _ := neardup(t, "eval", "sites", "--data", root); code != exitUsage {
		t.Errorf("without --write: exit %d, want %d", code, exitUsage)
	}
}
