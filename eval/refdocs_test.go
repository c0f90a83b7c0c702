package eval

import (
	"context"
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/internal/dataset"
)

// The reference-documentation set is real javadoc output of the
// machine's JDK in three versions: every page of a later version is
// expected to link to an earlier version of itself, a link between two
// versions of one page is right, and so is one between two pages whose
// main texts are near duplicates as texts; nothing of it lives in the
// repository.
func TestRefDocs(t *testing.T) {
	if _, err := findJDK(); err != nil {
		dataset.Missing(t, "refdocs: "+err.Error())
	}
	r, err := jdkRefDocs(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	byVersion := map[int]map[string]bool{}
	for _, p := range r.Pages {
		if byVersion[p.Version] == nil {
			byVersion[p.Version] = map[string]bool{}
		}
		byVersion[p.Version][p.Path] = true
		if !strings.HasPrefix(p.URL, "https://"+refDocsHost+"/") || !strings.HasSuffix(p.Path, ".html") {
			t.Fatalf("page %s at %s", p.Path, p.URL)
		}
	}
	if len(byVersion) != len(refDocsVariants) {
		t.Fatalf("%d versions, want %d", len(byVersion), len(refDocsVariants))
	}
	for v, pages := range byVersion {
		if len(pages) < 250 {
			t.Errorf("version %d: %d pages, want the four packages' (several hundred)", v, len(pages))
		}
	}
	s := buildRefDocs(r)
	if len(s.Docs) != len(r.Pages) || len(s.Expected) < 2*len(byVersion[1])*9/10 {
		t.Fatalf("%d documents, %d expected links for %d pages a version", len(s.Docs), len(s.Expected), len(byVersion[1]))
	}
	for _, x := range s.Expected[:5] {
		for _, e := range x.Earlier {
			if s.Label(x.Later, e) != Positive || path.Base(x.Later) != path.Base(e) {
				t.Errorf("%s → %s: %v, want a positive link between versions of one page", x.Later, e, s.Label(x.Later, e))
			}
		}
	}
	// Two unrelated classes of the first version.
	if l := s.Label("v1/java.base/java/util/ArrayList.html", "v1/java.base/java/io/File.html"); l != Negative {
		t.Errorf("ArrayList → File: %v, want negative", l)
	}
	if testing.Short() {
		return
	}
	// The figures docs/boilerplate.md gives ("Where it stands"; neardup
	// eval --sets refdocs), with javadoc 25.0.3's pages.
	got := refFigures(t, s)
	if want := "precision 0.855 recall 0.992, first versions linked wrongly 105 of 329, hubs 4 (most 7)"; !strings.Contains(string(r.version), "25.0.3") {
		t.Logf("javadoc %s: the documented figures are javadoc 25.0.3's", r.version)
	} else if got != want {
		t.Errorf("%s, docs/boilerplate.md says %s", got, want)
	}
	// Named as generated documentation (pipeline.generated_hosts), the
	// host's shared sections are its template (docs/boilerplate.md,
	// "Generated documentation").
	got = refFigures(t, s, "pipeline.generated_hosts", refDocsHost)
	if want := "precision 0.954 recall 0.991, first versions linked wrongly 33 of 329, hubs 0 (most 4)"; !strings.Contains(string(r.version), "25.0.3") {
		t.Logf("javadoc %s: the documented figures are javadoc 25.0.3's", r.version)
	} else if got != want {
		t.Errorf("generated host: %s, docs/boilerplate.md says %s", got, want)
	}
}

// refFigures streams a documentation set under the default configuration
// and returns the figures docs/boilerplate.md gives for it.
func refFigures(t *testing.T, s *Set, keyValues ...string) string {
	t.Helper()
	o := &config.Overrides{}
	for i := 0; i+1 < len(keyValues); i += 2 {
		o.Add(keyValues[i], keyValues[i+1])
	}
	cfg, err := config.Load("", nil, o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Evaluate(context.Background(), cfg, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	l, rd := res.Links.All, res.RefDocs
	got := fmt.Sprintf("precision %s recall %s, first versions linked wrongly %d of %d, hubs %d (most %d)",
		num(l.Precision()), num(l.Recall(res.Links.Expected)), rd.FirstWrong, rd.Texts, len(rd.Hubs), rd.MostWrong)
	t.Log(got)
	return got
}
