//go:build issue36

package eval

import (
	"context"
	"fmt"
	"testing"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/internal/dataset"
)

// Other draws of the chrome and site generators than the sets' own (other
// sites, templates, authors and copies), streamed as a crawler without
// urls would (main c8af158's rules: the counts of common keys alone) and
// with them (the site templates and template records): the figures
// docs/boilerplate.md gives for the draws, logged.
//
//	go test -tags issue36 ./eval/ -run TestIssue36Draws -v
func TestIssue36Draws(t *testing.T) {
	dir := dataset.Dir(t, SetGutenberg)
	cfg, err := config.Load("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	line := func(name string, urls bool, s *Set) {
		if !urls {
			s.WithoutURLs()
		}
		r, err := Evaluate(context.Background(), cfg, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		l, st := r.Links, r.Sites
		syn := ""
		for _, c := range st.ByCopy {
			if c.Copy == "syndicated" {
				syn = fmt.Sprintf(", syndicated %d of %d (near %d)", c.Found, c.Expected, c.ByKind["near"])
			}
		}
		t.Logf("%-22s urls %-5v precision %s recall %s flagged %s; from a site's 3rd page precision %s flagged %s%s",
			name, urls, num(l.All.Precision()), num(l.All.Recall(l.Expected)), pct(st.Flagged, st.Unique),
			num(st.Third.Links.Precision()), pct(st.Third.Flagged, st.Third.Unique), syn)
	}
	for _, seed := range []uint64{1, 2, 3, 7, 8, 9, 11, 12} {
		g, err := generateChrome(dir, chromeConfig{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{setChrome, setChromeHTML} {
			for _, urls := range []bool{false, true} {
				line(fmt.Sprintf("%s seed %d", n, seed), urls, buildChrome(g, n))
			}
		}
	}
	for _, seed := range []uint64{5, 9, 13, 17, 21, 31, 41, 43} {
		g, err := GenerateSites(dir, SitesConfig{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range sitesVariants {
			for _, urls := range []bool{false, true} {
				line(fmt.Sprintf("%s seed %d", v.Name(), seed), urls, buildSites(g, v))
			}
		}
	}
}

func TestManPagesFigures(t *testing.T) { manPagesFigures(t) }
