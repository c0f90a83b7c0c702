package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/difftest"
)

var update = flag.Bool("update", false, "rewrite what the docs show from what the program prints now: the generated output blocks (TestDocsGenerated), docs/examples/event-*.json and README's event example (TestDocsExamplesGenerated), the golden files")

// A generated block is a fenced block whose info string is "console
// generated": lines "$ COMMAND" (a shell command line run from the
// repository root, with neardup the command under test), each followed by
// what it prints on standard output. TestDocsGenerated runs every one and
// fails when a block is not what the program prints; with -update it
// rewrites the blocks instead:
//
//	go test ./cmd/neardup -run TestDocsGenerated -update
//
// Values that change from run to run (the events' "at", the build's
// version) are printed as "…" (generatedVolatile).
var generatedFence = regexp.MustCompile("(?ms)^```console generated\n(.*?)^```\n")

// generatedVolatile are the parts of an output that differ between runs
// and builds, with what a block shows instead.
var generatedVolatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"at":"[^"]*"`), `"at":"…"`},
	{regexp.MustCompile(`"version":"[^"]*"`), `"version":"…"`},
}

// runGenerated runs each "$ COMMAND" of a block and returns the block as
// the program prints it now.
func runGenerated(t *testing.T, root, bin, block string) string {
	t.Helper()
	var out strings.Builder
	for _, line := range strings.Split(block, "\n") {
		cmdLine, ok := strings.CutPrefix(line, "$ ")
		if !ok {
			continue
		}
		c := exec.Command("sh", "-c", cmdLine)
		c.Dir = root
		c.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		var stdout, stderr bytes.Buffer
		c.Stdout, c.Stderr = &stdout, &stderr
		if err := c.Run(); err != nil {
			t.Errorf("%s: %v\n%s", cmdLine, err, stderr.String())
		}
		text := stdout.String()
		for _, v := range generatedVolatile {
			text = v.re.ReplaceAllString(text, v.with)
		}
		out.WriteString("$ " + cmdLine + "\n" + text)
		if text != "" && !strings.HasSuffix(text, "\n") {
			out.WriteString("\n")
		}
	}
	return out.String()
}

// neardupOnPath puts a neardup command (this test binary standing in for
// it) into a new folder and returns the folder.
func neardupOnPath(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\nNEARDUP_TEST_AS_COMMAND=1 exec %q \"$@\"\n", exe)
	if err := os.WriteFile(filepath.Join(dir, "neardup"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDocsGenerated: every output a doc shows in a generated block is what
// the program prints (see generatedFence); -update rewrites them.
func TestDocsGenerated(t *testing.T) {
	contractTest(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := neardupOnPath(t)
	blocks := 0
	for _, f := range docFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		changed := false
		text = generatedFence.ReplaceAllStringFunc(text, func(m string) string {
			blocks++
			body := generatedFence.FindStringSubmatch(m)[1]
			got := runGenerated(t, root, bin, body)
			if got == body {
				return m
			}
			if *update {
				changed = true
				return "```console generated\n" + got + "```\n"
			}
			if line, a, b := difftest.FirstLine(got, body); line > 0 {
				t.Errorf("%s: a generated block is not what the program prints (go test ./cmd/neardup -run TestDocsGenerated -update rewrites it); first difference, line %d of the block:\nprinted: %s\nshown:   %s", f, line, a, b)
			}
			return m
		})
		if changed {
			if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: generated blocks rewritten", f)
		}
	}
	if blocks < 3 {
		t.Errorf("%d generated blocks in the docs, want at least 3: the pattern is broken", blocks)
	}
}

// The checker itself: a block whose output drifted fails, with the line.
func TestDocsGeneratedDrift(t *testing.T) {
	contractTest(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := neardupOnPath(t)
	body := "$ neardup config check --profile books | grep '^verify.jaccard='\nverify.jaccard=0.5\n"
	if got := runGenerated(t, root, bin, body); got == body || !strings.Contains(got, "verify.jaccard=0.6\n") {
		t.Errorf("a drifted block passes: %q", got)
	}
	ev := `$ neardup scan --emit all examples/docs | head -1` + "\n"
	if got := runGenerated(t, root, bin, ev); !strings.Contains(got, `"at":"…"`) || !strings.Contains(got, `"version":"…"`) {
		t.Errorf("volatile values not masked: %q", got)
	}
}
