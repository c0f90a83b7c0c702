package main

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

// pipeline.generated_hosts as a user sets it: pages of a documentation
// host that share a generated section (the same inherited description)
// around content of their own are linked partial by default, and not
// with the host named; a second version of one of its pages stays near
// to the first; a page of another host quoting that section stays a
// partial link; a value that is not a host name exits 2 naming the key.
func TestScanGeneratedHosts(t *testing.T) {
	words, join := wordSource(45)
	section := words(80) // the description both classes inherit
	a, b := words(200), words(200)
	edited := slices.Clone(a)
	edited[50], edited[120] = "changed", "words"
	docs := []struct{ id, url, text string }{
		{"a", "https://docs.example.org/api/A.html", join(a[:100], section, a[100:])},
		{"b", "https://docs.example.org/api/B.html", join(b[:100], section, b[100:])},
		{"a2", "https://docs.example.org/v2/api/A.html", join(edited[:100], section, edited[100:])},
		{"blog0", "https://blog.example.net/first", join(words(150), words(150))},
		{"blog", "https://blog.example.net/post", join(words(150), section, words(150))},
	}
	var recs []map[string]string
	for _, d := range docs {
		recs = append(recs, map[string]string{"id": d.id, "url": d.url, "text": d.text})
	}
	file := writeRecords(t, recs)
	scan := func(args ...string) map[string]string {
		t.Helper()
		code, out, errOut := neardup(t, append(append([]string{"scan", "--quiet", "--emit", "all"}, args...), file)...)
		if code != 0 {
			t.Fatalf("scan %v: exit %d: %s", args, code, errOut)
		}
		events(t, out) // every line valid against the event schema
		got := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var e struct {
				ID, Kind    string
				DuplicateOf string `json:"duplicate_of"`
			}
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatal(err)
			}
			got[e.ID] = strings.TrimSpace(e.Kind + " " + e.DuplicateOf)
		}
		return got
	}
	for _, tc := range []struct {
		args []string
		want map[string]string
	}{
		{nil, map[string]string{"a": "unique", "b": "partial a", "a2": "near a", "blog0": "unique", "blog": "partial a"}},
		{[]string{"--pipeline.generated_hosts", "Docs.Example.org, other.example.com"}, map[string]string{"a": "unique", "b": "unique", "a2": "near a", "blog0": "unique", "blog": "partial a"}},
	} {
		if got := scan(tc.args...); !maps.Equal(got, tc.want) {
			t.Errorf("scan %v: %v, want %v", tc.args, got, tc.want)
		}
	}
	for _, bad := range []string{"https://docs.example.org", "docs.example.org/api", "localhost"} {
		code, _, errOut := neardup(t, "scan", "--pipeline.generated_hosts="+bad, file)
		if code != 2 || !strings.Contains(errOut, "pipeline.generated_hosts") {
			t.Errorf("generated_hosts %q: exit %d, %q; want exit 2 naming the key", bad, code, errOut)
		}
	}
}
