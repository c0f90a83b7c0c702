package eval

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/internal/dataset"
)

// The manual-page set is the machine's manual pages rendered by its man
// in two versions: every page of the second version is expected to link
// to its first, a link between versions or names of one page is right,
// and so is one between two pages that are near duplicates as texts;
// nothing of it lives in the repository.
func TestManPages(t *testing.T) {
	files, err := manSampleFiles(manRoot)
	if err != nil || len(files) == 0 {
		dataset.Missing(t, fmt.Sprintf("manpages: no manual pages under %s (%v)", manRoot, err))
	}
	// Render a few pages only: the whole sample takes a minute cold
	// (TestManPagesFigures, build tag issue36, streams it).
	man, err := exec.LookPath("man")
	if err != nil {
		dataset.Missing(t, "manpages: "+err.Error())
	}
	dir := t.TempDir()
	n := 0
	for _, f := range files[:min(5, len(files))] {
		if err := renderManPage(context.Background(), man, 0, f, dir); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "v1", f+".txt")); err == nil {
			n++
		}
	}
	if n == 0 {
		t.Fatalf("man rendered none of %v", files[:min(5, len(files))])
	}
}
