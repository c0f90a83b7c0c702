// Package dataset locates the third-party evaluation sets that tests and
// tools read from the shared data folder (never copied into the repository).
//
// The folder is $NEARDUP_DATA when set, otherwise the first "shared/data"
// found beside the repository root or one of its parents' siblings.
//
// A test whose data set is absent is skipped on a developer's machine and
// fails when the environment variable CI is set (to anything but "" or
// "false"), so that a CI run cannot pass by skipping what it was meant to
// check.
package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Root returns the data folder, or "" when it cannot be found.
func Root() string {
	if d := os.Getenv("NEARDUP_DATA"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		cand := filepath.Join(dir, "shared", "data")
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Dir returns the named data set's folder. When it is absent the test is
// skipped, or fails under CI (see the package documentation).
func Dir(t testing.TB, name string) string {
	t.Helper()
	root := Root()
	if root == "" {
		Missing(t, "evaluation data not found (set NEARDUP_DATA or place shared/data beside the repository); needed: "+name)
	}
	d := filepath.Join(root, name)
	if _, err := os.Stat(d); err != nil {
		Missing(t, fmt.Sprintf("evaluation data set %s not present: %v", name, err))
	}
	return d
}

// CI reports whether the tests run under continuous integration: the
// environment variable CI is set to anything but "", "false" or "0"
// (deploy/main_test.go reads it the same way).
func CI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false" && v != "0"
}

// Missing reports a test dependency that is not there: it skips the test,
// or fails it under CI.
func Missing(t testing.TB, why string) {
	t.Helper()
	if CI() {
		t.Fatalf("%s (CI is set: a missing dependency fails the test instead of skipping it)", why)
	}
	t.Skip(why)
}

// Gutenberg returns the path of one e-text of the gutenberg-editions set.
func Gutenberg(t testing.TB, file string) string {
	t.Helper()
	return filepath.Join(Dir(t, "gutenberg-editions"), "texts", file)
}
