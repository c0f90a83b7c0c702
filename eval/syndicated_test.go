package eval

import (
	"slices"
	"testing"
)

// A page quoting an article that pages of other sites republished whole
// (near copies, lightly edited, each in its site's frame) is linked to the
// article: by then more pages hold the quoted text than hold any site's
// template, and the count rule takes it for a template unless a copy has
// made the article a source. On the site sets, eveningledger's 40th page
// quotes marginaliaweekly's first, which six near copies (of it or of each
// other, on its own site and three others) republished before it; none of
// them is mostly common text, and before pages with a url looked for their source whatever their
// common share (pipeline.findsSources) the quote was unique in every
// rendering. The HTML rendering without the boilerplate paragraph still
// misses it: there no copy shares more than two thirds of its anchors with
// the article.
func TestSitesQuoteOfSyndicated(t *testing.T) {
	const (
		quote   = "eveningledger.example/science/but-may-it-not-be-that-while-221"
		article = "marginaliaweekly.example/criticism/at-that-preluding-moment-ere-the-boat-5"
	)
	for _, name := range []string{setSites, setSitesBoiler} {
		t.Run(name, func(t *testing.T) {
			r := evaluate(t, name)
			g := r.Set.sites
			p := g.Page(quote)
			if p == nil || p.Copy != "partial-1" || len(p.accept) != 1 || !slices.Contains(p.accept[0], article) {
				t.Fatalf("the generator no longer makes %s a quote of %s", quote, article)
			}
			near := 0
			for _, id := range p.accept[0] {
				if g.Page(id).Role == RoleNear {
					near++
				}
			}
			if near < 4 {
				t.Fatalf("%s: %d near copies of the article before the quote, want at least 4", quote, near)
			}
			for _, ev := range r.Events {
				if ev.ID != quote {
					continue
				}
				if !slices.ContainsFunc(ev.Matches, func(m Match) bool { return m.ID == article }) {
					t.Errorf("%s: %s %v, want a link to %s", quote, ev.Kind, ev.Matches, article)
				}
				return
			}
			t.Fatalf("no event for %s", quote)
		})
	}
}
