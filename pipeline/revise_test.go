package pipeline

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/index/redistest"
)

// Two sites' first pages share a comment policy in the middle of their
// frames: nothing tells it from a quote when the second arrives, so it is
// linked. When its site's next page shows the policy to be the site's
// template, the link is withdrawn: a revision event replaces the first
// page's, and its recorded verdict (what a replay answers) is unique. A
// quote of the same article on a third site survives its own site's
// next page: the quote is not that site's template; so does a quote that
// ends a first page's article, next to the policy its site's next page
// shows to be template. Memory, a Redis node
// and a Redis Cluster revise the same way.
func TestRevisions(t *testing.T) {
	words, join := wordSource(44)
	policy := words(50)
	head := map[string][]string{"a": words(30), "b": words(30), "c": words(30), "d": words(30)}
	foot := map[string][]string{"a": words(40), "b": words(40), "c": words(40), "d": words(40)}
	artB, artC, artD := words(150), words(150), words(100)
	page := func(site string, article []string) []byte {
		return join(head[site], article, policy, foot[site])
	}
	items := []Item{
		{Doc: Document{ID: "b1", URL: "https://b.example/1", Text: page("b", artB)}},
		{Doc: Document{ID: "a1", URL: "https://a.example/1", Text: page("a", words(150))}},
		{Doc: Document{ID: "c1", URL: "https://c.example/1", Text: join(head["c"], artC[:70], artB[20:90], artC[70:], foot["c"])}},
		{Doc: Document{ID: "a2", URL: "https://a.example/2", Text: page("a", words(150))}},
		{Doc: Document{ID: "c2", URL: "https://c.example/2", Text: join(head["c"], words(150), foot["c"])}},
		// A quote that ends the article, right before the frame.
		{Doc: Document{ID: "d1", URL: "https://d.example/1", Text: page("d", slices.Concat(artD, artB[60:105]))}},
		{Doc: Document{ID: "d2", URL: "https://d.example/2", Text: page("d", words(150))}},
	}
	replay := []Item{items[1]}
	cfg := testConfig(t, "web")
	for _, tc := range []struct {
		name string
		ix   func(*Pipeline) index.Store
	}{
		{"memory", func(pl *Pipeline) index.Store { return memoryIndex(t, pl) }},
		{"redis", redisIndex(t, redistest.StartServer(t))},
		{"cluster", clusterIndex(t, redistest.StartCluster(t))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st index.Store
			outs := run(t, cfg, func(pl *Pipeline) index.Store { st = tc.ix(pl); return st }, items)
			if len(outs) != len(items) {
				t.Fatalf("%d outputs for %d inputs", len(outs), len(items))
			}
			kind := func(i int) string {
				ev := outs[i].Event
				if ev == nil {
					return "none"
				}
				return ev.Kind + " " + ev.DuplicateOf
			}
			for i, want := range []string{"unique ", "partial b1", "partial b1", "unique ", "unique ", "partial b1", "unique "} {
				if got := kind(i); got != want {
					t.Errorf("%s: %s, want %s", items[i].Doc.ID, got, want)
				}
			}
			var revs []string
			for i, o := range outs {
				for _, r := range o.Revisions {
					revs = append(revs, items[i].Doc.ID+": "+r.ID+" "+r.Kind+" cluster "+r.Cluster+" by "+r.RevisedBy)
					if !r.Revised || !slices.Equal(r.Withdrawn, []string{"b1"}) || len(r.Matches) != 0 {
						t.Errorf("revision of %s: revised %v, withdrawn %v, matches %d", r.ID, r.Revised, r.Withdrawn, len(r.Matches))
					}
				}
			}
			if want := []string{"a2: a1 unique cluster a1 by a2"}; !slices.Equal(revs, want) {
				t.Errorf("revisions %q, want %q", revs, want)
			}
			// A later run over the same index answers a1's id with the
			// revised verdict.
			pl, err := New(cfg, st)
			if err != nil {
				t.Fatal(err)
			}
			again := runThrough(t, pl, replay, make(chan Item), make(chan Output, 1))
			if ev := again[0].Event; ev == nil || !ev.Replay || ev.Kind != "unique" || ev.Cluster != "a1" {
				t.Errorf("replay of a1: %+v, want the revised verdict (unique, its own cluster)", ev)
			}
		})
	}
}
