package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDesignLayout: docs/design.md's "Layout" section names every
// directory of Go code (itself or a listed parent), and every directory it
// names holds Go code.
func TestDesignLayout(t *testing.T) {
	root := filepath.Join("..", "..")
	b, err := os.ReadFile(filepath.Join(root, "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Layout\n")
	if !ok {
		t.Fatal(`docs/design.md has no "## Layout" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var listed []string
	for _, line := range strings.Split(sec, "\n") {
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), "|")
		for _, m := range regexp.MustCompile("`([a-z/]+/)`").FindAllStringSubmatch(first, -1) {
			listed = append(listed, strings.TrimSuffix(m[1], "/"))
		}
	}
	if len(listed) == 0 {
		t.Fatal("the Layout section lists no directories")
	}
	var dirs []string // directories holding .go files
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != root || d.Name() == "testdata" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			if rel = filepath.ToSlash(rel); !slices.Contains(dirs, rel) {
				dirs = append(dirs, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	covered := func(dir string) bool {
		for d := dir; d != "." && d != "/"; d = filepath.ToSlash(filepath.Dir(d)) {
			if slices.Contains(listed, d) {
				return true
			}
		}
		return false
	}
	for _, d := range dirs {
		if !covered(d) {
			t.Errorf("docs/design.md's Layout does not name %s/ (nor a parent)", d)
		}
	}
	for _, l := range listed {
		if !slices.ContainsFunc(dirs, func(d string) bool { return d == l || strings.HasPrefix(d, l+"/") }) {
			t.Errorf("docs/design.md's Layout names %s/, which holds no Go code", l)
		}
	}
}
