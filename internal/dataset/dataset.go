// Package dataset locates the third-party evaluation sets that tests and
// tools read from the shared data folder (never copied into the repository).
//
// The folder is $NEARDUP_DATA when set, otherwise the first "shared/data"
// found beside the repository root or one of its parents' siblings.
package dataset

import (
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

// Dir returns the named data set's folder, or skips the test when absent.
func Dir(t testing.TB, name string) string {
	t.Helper()
	root := Root()
	if root == "" {
		t.Skipf("evaluation data not found (set NEARDUP_DATA or place shared/data beside the repository); skipping %s", name)
	}
	d := filepath.Join(root, name)
	if _, err := os.Stat(d); err != nil {
		t.Skipf("evaluation data set %s not present: %v", name, err)
	}
	return d
}

// Gutenberg returns the path of one e-text of the gutenberg-editions set.
func Gutenberg(t testing.TB, file string) string {
	t.Helper()
	return filepath.Join(Dir(t, "gutenberg-editions"), "texts", file)
}
