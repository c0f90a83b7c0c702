package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// testVersion is stamped into the binary the tests build, so a test can
// tell that binary from any other neardup.
const testVersion = "deploy-test-1"

// neardupBin is the static neardup binary built once by TestMain; the
// image test packs it and the live tests run it.
var neardupBin string

// repoRoot is the neardup repository (this module's parent directory).
var repoRoot = func() string {
	abs, err := filepath.Abs("..")
	if err != nil {
		panic(err)
	}
	return abs
}()

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "neardup-deploy-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	neardupBin = filepath.Join(dir, "neardup")
	// Containerfile's build stage on the host, without -trimpath (it only
	// changes the file paths recorded in the binary): built with this test
	// binary's own settings, it reuses the packages just compiled for the
	// tests, and make test runs them with CGO_ENABLED=0 as well.
	build := exec.Command("go", "build", "-tags", "nodev", "-ldflags", "-X main.version="+testVersion, "-o", neardupBin, "./cmd/neardup")
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build neardup: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// requireTool returns the path of an external program a test needs. When
// it is missing the test fails under CI (the CI variable is set; make test
// installs it) and is skipped elsewhere, with how to install it.
func requireTool(t *testing.T, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	msg := fmt.Sprintf("%s not found on PATH: %s", name, install)
	if v := os.Getenv("CI"); v != "" && v != "false" && v != "0" { // as internal/dataset.CI
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// neardupCmd runs the test binary with args and exactly the environment
// env (plus PATH); it fails the test on a non-zero exit.
func neardupCmd(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(neardupBin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("neardup %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// readFile returns a file of the kit, relative to this directory.
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
