//go:build !nodev

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	for _, want := range []string{"neardup eval --data " + root + " --sets gutenberg\n", "| pg42671.txt | pg1342.txt | near (jaccard) |", "![pr-gutenberg](pr-gutenberg.png)"} {
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

// neardup eval, as the README gives it, writes nothing in the repository
// (on today's main it rewrote the committed docs/eval/report.md's run-time
// line): without --out the report goes into a new temporary folder, which
// the command names, and the report holds no run time.
func TestEvalWritesNothingInRepository(t *testing.T) {
	contractTest(t)
	root := filepath.Dir(dataset.Dir(t, "gutenberg-editions"))
	t.Chdir(filepath.Join("..", ".."))
	status := func() string {
		out, err := exec.Command("git", "status", "--porcelain", "--untracked-files=all").Output()
		if err != nil {
			t.Fatalf("git status: %v", err)
		}
		return string(out)
	}
	before := status()
	code, stdout, stderr := neardup(t, "eval", "--quiet", "--data", root, "--sets", "gutenberg")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if after := status(); after != before {
		t.Errorf("neardup eval changed the repository:\nbefore %q\nafter  %q", before, after)
	}
	m := regexp.MustCompile(`(?m)^report: (.*)$`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no report path in %q", stdout)
	}
	rep, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(m[1])) })
	if cwd, _ := os.Getwd(); strings.HasPrefix(m[1], cwd) || regexp.MustCompile(`\d+(\.\d+)?m?s\b`).Match(rep) {
		t.Errorf("report %s inside the repository %s, or it holds a run time", m[1], cwd)
	}
}
