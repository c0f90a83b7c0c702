package eval

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/dataset"
)

// The site pages (text, whose templates make most keys common) give the
// same events on the memory index, a Redis node and a three-master Redis
// Cluster: common keys, their exemplars and the discount of common
// passages, and the site templates of pages with a url and of pages
// placed by their edges (another draw of the chrome pages, sent without
// their urls), do not depend on the backend.
func TestSitesIndexesAgree(t *testing.T) {
	s, err := GenerateSites(dataset.Dir(t, SetGutenberg), SitesConfig{Pages: 160})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := generateChrome(dataset.Dir(t, SetGutenberg), chromeConfig{Sites: 16})
	if err != nil {
		t.Fatal(err)
	}
	bare, err := generateChrome(dataset.Dir(t, SetGutenberg), chromeConfig{Sites: 16, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	// The site pages, then the chrome pages (their site templates are
	// learnt from the candidates the backend returns), then other chrome
	// pages without their urls.
	docs := append(s.Docs(SitesText), ch.Docs(SitesText)...)
	for _, d := range bare.Docs(SitesText) {
		d.ID, d.URL = "bare:"+d.ID, ""
		docs = append(docs, d)
	}
	cfg, err := StreamConfig(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var want []Event
	for _, url := range []string{"memory", "redis://" + redistest.StartServer(t), "redis+cluster://" + strings.Join(redistest.StartCluster(t), ",")} {
		c := cfg
		c.Index.URL = url
		c.Index.Namespace = "sites-agree"
		got, err := stream(ctx, c, docs, nil)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		dups := 0
		for _, ev := range got {
			if ev.Kind != "unique" {
				dups++
			}
		}
		if dups == 0 {
			t.Fatalf("%s: no duplicates among %d site pages", url, len(got))
		}
		if want == nil {
			want = got
			continue
		}
		for i := range want {
			if !reflect.DeepEqual(want[i], got[i]) {
				t.Errorf("%s: event %d (%s) differs from memory's:\n  memory %+v\n  %s %+v", url, i, want[i].ID, want[i], url, got[i])
			}
		}
	}
}
