package eval

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// The whole sample streamed, and the figures docs/boilerplate.md gives
// (neardup eval --sets manpages), on the sample they were measured on.
// About a minute cold, so not in CI:
//
//	go test -tags issue36 ./eval/ -run TestManPagesFigures -v
func manPagesFigures(t *testing.T) {
	r, err := manPages(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	s := buildManPages(r)
	byVersion := map[int]int{}
	for _, p := range r.Pages {
		byVersion[p.Version]++
		if !strings.HasPrefix(p.URL, "https://"+manHost+"/") || !strings.HasPrefix(p.Path, "man") {
			t.Fatalf("page %s at %s", p.Path, p.URL)
		}
	}
	if len(byVersion) != len(manVariants) || byVersion[1] < 100 || len(s.Expected) < byVersion[2]*9/10 {
		t.Fatalf("pages by version %v, %d expected links", byVersion, len(s.Expected))
	}
	x := s.Expected[0]
	if l := s.Label(x.Later, x.Earlier[0]); l != Positive {
		t.Errorf("%s → %s: %v, want positive", x.Later, x.Earlier[0], l)
	}
	// Two pages of the first version that are not near duplicates as
	// texts: the first and the last of the sample.
	first, last := r.Pages[0], r.Pages[byVersion[1]-1]
	if l := s.Label(last.ID, first.ID); l != Negative && first.Same != last.Same {
		t.Errorf("%s → %s: %v, want negative", last.ID, first.ID, l)
	}
	// The figures docs/boilerplate.md gives (neardup eval --sets
	// manpages), on the sample they were measured on.
	got := refFigures(t, s)
	if want, sample := "precision 0.876 recall 0.892, first versions linked wrongly 97 of 910, hubs 3 (most 8)", "manpages-d2ddc72ea680297a"; filepath.Base(r.Dir) != sample {
		t.Logf("sample %s: the documented figures are sample %s's", filepath.Base(r.Dir), sample)
	} else if got != want {
		t.Errorf("%s, docs/boilerplate.md says %s", got, want)
	}
}
