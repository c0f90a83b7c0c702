package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/dataset"
)

// TestNewcomerPath walks the README as a newcomer would, headless: a fresh
// clone of the repository (its committed state, HEAD) with ../shared beside
// it, the README's first command (go run ./cmd/neardup demo), then each
// line of every block the README marks runnable, as printed, through the
// shell; then a build with the commit recorded, whose version names the
// clone's commit. Afterwards the clone has no file changed, added or
// ignored-but-written (git status --ignored is empty). The README's other
// command, make test, is the run this test is part of.
//
// The clone lives at a path fixed per checkout, so that a second run finds
// its packages in Go's build cache (a new path compiles the module again).
func TestNewcomerPath(t *testing.T) {
	if testing.Short() {
		t.Skip("clones the repository and builds it")
	}
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			dataset.Missing(t, tool+" is needed to clone and run the repository")
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	run := func(dir, name string, args ...string) string {
		t.Helper()
		c := exec.Command(name, args...)
		c.Dir = dir
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Run(); err != nil {
			t.Fatalf("%s %s (in %s): %v\n%s", name, strings.Join(args, " "), dir, err, out.String())
		}
		return out.String()
	}
	base := filepath.Join(os.TempDir(), fmt.Sprintf("neardup-newcomer-%x", sha256.Sum256([]byte(root)))[:len("neardup-newcomer-")+12])
	if err := os.RemoveAll(base); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	clone := filepath.Join(base, "neardup")
	run(base, "git", "clone", "--quiet", root, clone)
	if data := dataset.Root(); data != "" {
		if err := os.Symlink(filepath.Dir(data), filepath.Join(base, "shared")); err != nil {
			t.Fatal(err)
		}
	}
	head := strings.TrimSpace(run(clone, "git", "rev-parse", "HEAD"))

	readme, err := os.ReadFile(filepath.Join(clone, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	first := regexp.MustCompile(`(?m)^    (go run \./cmd/neardup demo)$`).FindStringSubmatch(string(readme))
	if first == nil {
		t.Fatal("the README's first command is not 'go run ./cmd/neardup demo'")
	}
	out := run(clone, "sh", "-c", first[1])
	for _, want := range []string{"dead letters: 5 of 5", "0 reported pairs were not planted"} {
		if !strings.Contains(out, want) {
			t.Errorf("%s: output lacks %q:\n%s", first[1], want, out)
		}
	}
	lines := 0
	for _, block := range regexp.MustCompile("(?ms)^```sh runnable\n(.*?)^```").FindAllStringSubmatch(string(readme), -1) {
		for _, line := range strings.Split(strings.TrimSpace(block[1]), "\n") {
			lines++
			if out := run(clone, "sh", "-c", line); strings.TrimSpace(out) == "" {
				t.Errorf("%s: no output", line)
			}
		}
	}
	if lines < 3 {
		t.Errorf("only %d runnable lines in the README", lines)
	}

	// Built from the clone, the binary says which commit it is.
	bin := filepath.Join(t.TempDir(), "neardup")
	run(clone, "go", "build", "-buildvcs=true", "-o", bin, "./cmd/neardup")
	if v := run(clone, bin, "version"); !strings.Contains(v, "\ncommit "+head+" (") || !strings.HasPrefix(v, "neardup v0.0.0-") {
		t.Errorf("version of a build from the clone at %s:\n%s", head, v)
	}

	if st := run(clone, "git", "status", "--porcelain", "--ignored", "--untracked-files=all"); st != "" {
		t.Errorf("the newcomer path changed the clone:\n%s", st)
	}
}
