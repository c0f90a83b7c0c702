package eval

import (
	"testing"

	"github.com/neardup/neardup/internal/dataset"
)

func TestLicenseFamilyAndKey(t *testing.T) {
	for _, tt := range []struct{ id, family, key string }{
		{"GPL-2.0-or-later", "gpl", "gpl-2.0"},
		{"GPL-2.0+", "gpl", "gpl-2.0"},
		{"GPL-2.0-only", "gpl", "gpl-2.0"},
		{"LGPL-2.1", "lgpl", "lgpl-2.1"},
		{"BSD-3-Clause-Clear", "bsd", "bsd-3-clause-clear"},
		{"CC-BY-NC-SA-4.0", "cc-by", "cc-by-nc-sa-4.0"},
		{"CC-SA-1.0", "cc-sa", "cc-sa-1.0"},
		{"CC0-1.0", "cc0", "cc0-1.0"},
		{"MIT", "mit", "mit"},
		{"zlib-acknowledgement", "zlib", "zlib-acknowledgement"},
	} {
		if f, k := licenseFamily(tt.id), licenseKey(tt.id); f != tt.family || k != tt.key {
			t.Errorf("%s: family %q key %q, want %q %q", tt.id, f, k, tt.family, tt.key)
		}
	}
}

func TestParseLicenseTest(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		cov      float64
		matches  []licenseMatch
	}{
		{"plain", "100%\nMIT 0,$\n\nCopyright\n", 100, []licenseMatch{{"MIT", 0, 10, false}}},
		{"comments and percent", "# reflowed\n# Example: x\n96.3%\nApache-2.0 96.3% 5,7\nMS-PL 8,$\n\n0123456789", 96.3, []licenseMatch{{"Apache-2.0", 5, 7, false}, {"MS-PL", 8, 10, false}}},
		{"scan stanza ignored", "100%\nBSD 0,$\nscan\n100%\nBSD 0,$\n\nabc", 100, []licenseMatch{{"BSD", 0, 3, false}}},
		{"cover+scan", "cover+scan\n100%\nISC 0,$ URL\n\nabcd", 100, []licenseMatch{{"ISC", 0, 4, true}}},
		{"no license", "0%\n\nabc", 0, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, err := parseLicenseTest([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if v.Coverage != tt.cov || len(v.Matches) != len(tt.matches) {
				t.Fatalf("coverage %v matches %v, want %v %v", v.Coverage, v.Matches, tt.cov, tt.matches)
			}
			for i, m := range tt.matches {
				if v.Matches[i] != m {
					t.Errorf("match %d: %+v, want %+v", i, v.Matches[i], m)
				}
			}
		})
	}
	if _, err := parseLicenseTest([]byte("MIT 0,$\n\ntext")); err == nil {
		t.Error("a header without coverage parsed")
	}
}

func TestLoadLicenseSets(t *testing.T) {
	lc, err := loadLicensecheck(dataset.Dir(t, setLicensecheck))
	if err != nil {
		t.Fatal(err)
	}
	mit, none := 0, 0
	for _, v := range lc.Variants {
		if v.Kind == "MIT" {
			mit++
		}
		if len(v.Matches) == 0 {
			none++
		}
		for _, m := range v.Matches {
			if m.Start < 0 || m.End > len(v.Text) || m.Start > m.End {
				t.Errorf("%s: match %+v outside its %d bytes", v.File, m, len(v.Text))
			}
		}
	}
	// The data's README: 672 files, MIT 44.
	if len(lc.Variants) != 672 || mit != 44 || none == 0 {
		t.Errorf("licensecheck: %d files, %d MIT, %d without a license", len(lc.Variants), mit, none)
	}
	spdx, err := loadSPDX(dataset.Dir(t, setSPDX))
	if err != nil {
		t.Fatal(err)
	}
	keys := spdxKeys(spdx)
	if len(spdx) != 727 || keys["GPL-2.0-only"] != keys["GPL-2.0+"] || keys["SMLNJ"] != keys["StandardML-NJ"] || keys["GPL-2.0"] == keys["GPL-3.0"] {
		t.Errorf("spdx: %d texts; keys GPL-2.0-only %q GPL-2.0+ %q SMLNJ %q StandardML-NJ %q GPL-3.0 %q",
			len(spdx), keys["GPL-2.0-only"], keys["GPL-2.0+"], keys["SMLNJ"], keys["StandardML-NJ"], keys["GPL-3.0"])
	}
}
