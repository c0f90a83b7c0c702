package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Revisions as a user of scan sees them: two sites' first pages share a
// comment policy inside their frames and are linked; when the first
// site's second page shows the policy to be that site's template, a
// revision event for the first page follows the second page's event,
// withdrawing the link, and a page quoting the other site's article keeps
// its link. Every line is valid against the event schema. The same holds
// when the pages are keyed by their urls and carry no url field, and for
// HTML pages that name their site only by their canonical link or by their
// title's end.
func TestScanRevisions(t *testing.T) {
	words, join := wordSource(44)
	policy := words(50)
	head := map[string][]string{"a": words(30), "b": words(30), "c": words(30)}
	foot := map[string][]string{"a": words(40), "b": words(40), "c": words(40)}
	artB, artC := words(150), words(150)
	page := func(site string, article []string) string { return join(head[site], article, policy, foot[site]) }
	docs := []struct{ id, url, text string }{
		{"b1", "https://b.example/1", page("b", artB)},
		{"a1", "https://a.example/1", page("a", words(150))},
		{"c1", "https://c.example/1", join(head["c"], artC[:70], artB[20:90], artC[70:], foot["c"])},
		{"a2", "https://a.example/2", page("a", words(150))},
		{"c2", "https://c.example/2", join(head["c"], words(150), foot["c"])},
	}
	// As the crawler sends them (url fields), keyed by their url alone
	// (an id that is an absolute URL stands for the url), as HTML pages
	// that give their address only in their canonical link, and as HTML
	// pages that give only their site's name, at their title's end.
	for _, how := range []string{"url", "id", "canonical", "title"} {
		byURL := how == "id"
		name := func(id, url string) string {
			if byURL {
				return url
			}
			return id
		}
		var recs []map[string]string
		for _, d := range docs {
			rec := map[string]string{"id": d.id, "url": d.url, "text": d.text}
			switch how {
			case "id":
				rec = map[string]string{"id": d.url, "text": d.text}
			case "canonical":
				rec = map[string]string{"id": d.id, "html": fmt.Sprintf(`<!DOCTYPE html><html><head><title>%s</title><link rel="canonical" href="%s"></head><body><article><p>%s</p></article></body></html>`, d.id, d.url, d.text)}
			case "title":
				site := strings.ToUpper(d.url[len("https://") : len("https://")+1]) // a.example: "The A Ledger"
				rec = map[string]string{"id": d.id, "html": fmt.Sprintf(`<!DOCTYPE html><html><head><title>%s — The %s Ledger</title></head><body><article><p>%s</p></article></body></html>`, d.id, site, d.text)}
			}
			recs = append(recs, rec)
		}
		file := writeRecords(t, recs)
		code, out, errOut := neardup(t, "scan", "--quiet", file)
		if code != 0 {
			t.Fatalf("scan: exit %d: %s", code, errOut)
		}
		events(t, out) // every line valid against the event schema
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var e struct {
				ID          string   `json:"id"`
				Kind        string   `json:"kind"`
				DuplicateOf string   `json:"duplicate_of"`
				Revised     bool     `json:"revised"`
				Withdrawn   []string `json:"withdrawn"`
				RevisedBy   string   `json:"revised_by"`
			}
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatal(err)
			}
			s := e.ID + " " + e.Kind + " " + e.DuplicateOf
			if e.Revised {
				s = fmt.Sprintf("revised %s %s withdrawn %v by %s", e.ID, e.Kind, e.Withdrawn, e.RevisedBy)
			}
			got = append(got, strings.TrimSpace(s))
		}
		a1, b1, a2 := name("a1", docs[1].url), name("b1", docs[0].url), name("a2", docs[3].url)
		c1 := name("c1", docs[2].url)
		want := []string{a1 + " partial " + b1, c1 + " partial " + b1, fmt.Sprintf("revised %s unique withdrawn [%s] by %s", a1, b1, a2)}
		if !slices.Equal(got, want) {
			t.Errorf("site given by %s: scan printed\n%s\nwant\n%s", how, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
