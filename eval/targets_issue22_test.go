//go:build issue22

package eval

import (
	"context"
	"testing"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/internal/dataset"
)

// The targets of common keys (issue 22) on the site sets, under the
// default web profile with the pages in crawl order: in every rendering,
// link precision at least 0.98 with recall at least 0.95, and at most 2%
// of the unique pages flagged. They do not all hold yet, so this file
// builds only with -tags issue22:
//
//	go test -tags issue22 ./eval/ -run TestIssue22 -v
//
// Measured 2026-11-26 (docs/boilerplate.md, main c2592c0 → the sources
// of widely copied texts and the window for a known template's scraps):
// sites precision 0.894 → 0.945, recall 0.975, flagged 7.9% → 4.2%;
// sites-html 1.000, 0.961, 0% (its targets met); sites-html-boiler
// 0.925, 0.966, 6.2%. Recall holds everywhere; precision and flagged
// pages fail on a site's first pages (the warm-up: from a site's 4th
// page on, sites-html-boiler is at precision 1.000 and 0% flagged, sites
// at 0.990 and 0.9%).
func TestIssue22Sites(t *testing.T) {
	for _, name := range []string{SetSites, SetSitesHTML, SetSitesBoiler} {
		t.Run(name, func(t *testing.T) {
			r := evaluate(t, name)
			l, s := r.Links, r.Sites
			if p, rc := l.All.Precision(), l.All.Recall(l.Expected); !(p >= 0.98) || !(rc >= 0.95) {
				t.Errorf("links: precision %s (%d wrong), recall %s (%d of %d), want precision ≥ 0.98 and recall ≥ 0.95",
					num(p), l.All.FP, num(rc), l.All.Found, l.Expected)
			}
			if s.FlaggedShare() > 0.02 {
				t.Errorf("unique pages flagged: %d of %d (%.1f%%), want at most 2%%", s.Flagged, s.Unique, 100*s.FlaggedShare())
			}
			w := s.Warmed
			t.Logf("from a site's page %d on: precision %s (%d wrong), flagged %d of %d (%s)",
				s.Warm+1, num(w.Links.Precision()), w.Links.FP, w.Flagged, w.Unique, pct(w.Flagged, w.Unique))
			for _, b := range s.ByRank {
				t.Logf("rank %-12s %3d unique, %3d flagged (%s)", b.label(), b.Unique, b.Flagged, pct(b.Flagged, b.Unique))
			}
		})
	}
}

// The other targets of issue 22: licensecheck link precision at least
// 0.80 at recall at least 0.95 (measured 0.722 at 0.962: not met), PAN13
// every labelled pair linked with plagdet at least 0.92 (500/500, 0.924),
// the Gutenberg editions exactly their 5 pairs, Clough no worse than cut
// 17/19 and non 0/38.
func TestIssue22Others(t *testing.T) {
	t.Run(SetLicensecheck, func(t *testing.T) {
		l := evaluate(t, SetLicensecheck).Links
		if p, rc := l.All.Precision(), l.All.Recall(l.Expected); !(p >= 0.80) || !(rc >= 0.95) {
			t.Errorf("links: precision %s, recall %s, want precision ≥ 0.80 at recall ≥ 0.95", num(p), num(rc))
		}
	})
	t.Run(SetPAN13, func(t *testing.T) {
		r := evaluate(t, SetPAN13)
		if l := r.Links; l.All.Found != l.Expected {
			t.Errorf("%d of %d labelled pairs linked, want all", l.All.Found, l.Expected)
		}
		if pd := r.PAN.PAN.PlagDet; !(pd >= 0.92) {
			t.Errorf("plagdet %.3f, want at least 0.92", pd)
		}
	})
	t.Run(SetGutenberg, func(t *testing.T) {
		l := evaluate(t, SetGutenberg).Links
		if l.All.Found != 5 || l.All.FP != 0 || l.All.TP != 5 {
			t.Errorf("%d right, %d wrong links, %d of 5 editions found; want exactly the 5", l.All.TP, l.All.FP, l.All.Found)
		}
	})
	t.Run(SetClough, func(t *testing.T) {
		c := evaluate(t, SetClough).Clough
		if cut, non := c.Row("cut"), c.Row("non"); cut.Linked < 17 || non.Linked > 0 {
			t.Errorf("cut %d of %d linked, non %d of %d; want at least 17 and 0", cut.Linked, cut.Answers, non.Linked, non.Answers)
		}
	})
}

// The site sets of other draws of the generator (other site mixes,
// templates and copies): the figures the default draw's are checked
// against, logged (the targets are the same).
//
//	go test -tags issue22 ./eval/ -run TestIssue22SitesDraws -v
func TestIssue22SitesDraws(t *testing.T) {
	dir := dataset.Dir(t, SetGutenberg)
	cfg, err := config.Load("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{5, 9} {
		g, err := GenerateSites(dir, SitesConfig{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range SitesVariants {
			r, err := Evaluate(context.Background(), cfg, buildSites(g, v), nil)
			if err != nil {
				t.Fatal(err)
			}
			l, s := r.Links, r.Sites
			w := s.Warmed
			t.Logf("seed %d %-17s precision %s (%d wrong) recall %s (%d of %d), flagged %d of %d (%s); from page %d on: precision %s (%d wrong), flagged %d of %d (%s)",
				seed, v.Name(), num(l.All.Precision()), l.All.FP, num(l.All.Recall(l.Expected)), l.All.Found, l.Expected,
				s.Flagged, s.Unique, pct(s.Flagged, s.Unique), s.Warm+1, num(w.Links.Precision()), w.Links.FP, w.Flagged, w.Unique, pct(w.Flagged, w.Unique))
		}
	}
}
