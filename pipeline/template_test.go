package pipeline

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/neardup/neardup/index"
)

func TestHostOf(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://www.Example.org/a", "http://example.org:8080/b?x=1", true},
		{"https://example.org/a", "https://news.example.org/a", false},
		{"https://example.org/a", "https://example.com/a", false},
	} {
		if got := hostOf(tc.a) == hostOf(tc.b); got != tc.same || hostOf(tc.a) == 0 {
			t.Errorf("hostOf(%q) == hostOf(%q): %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
	for _, u := range []string{"", "not a url", "/relative/path", "mailto:"} {
		if h := hostOf(u); h != 0 {
			t.Errorf("hostOf(%q) = %#x, want 0", u, h)
		}
	}
}

// Pages of one site share its template (here 120 words, with a page's
// 150-word article): a site's second page is not a copy of its first,
// though a page republished on the site, an article syndicated to another
// site and a paragraph quoted by a page of a third site are found. Without
// urls the template of the first two pages is a shared passage.
func TestSiteTemplates(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 1))
	words := func(n int) []string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = fmt.Sprintf("w%d", r.IntN(50000))
		}
		return ws
	}
	join := func(parts ...[]string) []byte {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		return []byte(strings.Join(all, " "))
	}
	header, footer := words(60), words(60)
	other := words(120)
	a1, a2, b := words(150), words(150), words(150)
	republished := append([]string{}, a1...)
	republished[40], republished[90] = "edited", "again"
	type page struct {
		id, url string
		text    []byte
	}
	pages := []page{
		{"a1", "https://a.example/1", join(header, a1, footer)},
		{"a2", "https://a.example/2", join(header, a2, footer)},
		{"a3", "https://a.example/3", join(header, republished, footer)},
		{"g1", "https://g.example/1", join(other[:60], a1, other[60:])},
		{"q1", "https://q.example/1", join(b[:70], a2[30:90], b[70:])},
	}
	for _, tc := range []struct {
		name string
		urls bool
		want map[string]string // id → kind, duplicate_of
	}{
		{"urls", true, map[string]string{"a1": "unique", "a2": "unique", "a3": "near a1", "g1": "near a1", "q1": "partial a2"}},
		{"no urls", false, map[string]string{"a2": "partial a1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var items []Item
			for _, p := range pages {
				d := Document{ID: p.id, Text: p.text}
				if tc.urls {
					d.URL = p.url
				}
				items = append(items, Item{Doc: d})
			}
			outs := run(t, testConfig(t, "web"), func(pl *Pipeline) index.Store { return memoryIndex(t, pl) }, items)
			for _, o := range outs {
				if o.Event == nil {
					t.Fatalf("no event: %+v", o.Dead)
				}
				want, ok := tc.want[o.Event.ID]
				if !ok {
					continue
				}
				got := o.Event.Kind
				if o.Event.DuplicateOf != "" {
					got += " " + o.Event.DuplicateOf
				}
				if got != want {
					t.Errorf("%s: %s, want %s", o.Event.ID, got, want)
				}
			}
		})
	}
}
