package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/dataset"
	"github.com/neardup/neardup/internal/schematest"
	"github.com/neardup/neardup/internal/warctest"
)

// gutenbergCrawl is a crawl of the Gutenberg editions with planted
// duplicates: every text once (two editions each of five books), an exact
// copy of one, and a copy of another with a chapter cut out. Even ones are
// served as HTML, odd ones as plain text.
type crawlDoc struct {
	uri  string
	html bool
	body []byte
}

func gutenbergCrawl(t *testing.T) []crawlDoc {
	t.Helper()
	dir := filepath.Join(dataset.Dir(t, "gutenberg-editions"), "texts")
	names, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(names) < 10 {
		t.Fatalf("gutenberg texts: %v (%d)", err, len(names))
	}
	slices.Sort(names)
	var docs []crawlDoc
	text := map[string]string{}
	for i, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		text[filepath.Base(n)] = string(b)
		docs = append(docs, crawlDoc{uri: "https://books.example/" + filepath.Base(n), html: i%2 == 0, body: b})
	}
	alice := text["pg11.txt"]
	moby := text["pg2701.txt"]
	cut := moby[:len(moby)/3] + moby[len(moby)/3+40000:]
	docs = append(docs,
		crawlDoc{uri: "https://mirror.example/alice", html: true, body: []byte(alice)},
		crawlDoc{uri: "https://mirror.example/moby-abridged", body: []byte(cut)},
	)
	for i := range docs {
		if docs[i].html {
			docs[i].body = htmlPage(docs[i].uri, string(docs[i].body))
		}
	}
	return docs
}

func htmlPage(title, text string) []byte {
	var sb strings.Builder
	fmt.Fprintf(&sb, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>%s</title></head><body><main>\n", html.EscapeString(title))
	for _, p := range strings.Split(text, "\n\n") {
		fmt.Fprintf(&sb, "<p>%s</p>\n", html.EscapeString(p))
	}
	sb.WriteString("</main></body></html>\n")
	return []byte(sb.String())
}

// verdicts is the comparable part of scan's events.
func verdicts(t *testing.T, out string) []string {
	t.Helper()
	var vs []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev struct {
			ID, Kind, Cluster, Method string
			DuplicateOf               string         `json:"duplicate_of"`
			Scores                    map[string]any `json:"scores"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		sc, _ := json.Marshal(ev.Scores)
		vs = append(vs, fmt.Sprintf("%s %s of=%s cluster=%s by=%s %s", ev.ID, ev.Kind, ev.DuplicateOf, ev.Cluster, ev.Method, sc))
	}
	return vs
}

// scan gives the same verdicts over a WARC of the Gutenberg crawl, plain
// or gzip member-per-record, as over the same documents as JSON lines.
func TestScanWARCMatchesJSONLines(t *testing.T) {
	skipShort(t)
	docs := gutenbergCrawl(t)
	dir := t.TempDir()
	var recs []warctest.Record
	var lines strings.Builder
	enc := json.NewEncoder(&lines)
	for i, d := range docs {
		ts := time.Date(2026, 10, 1, 12, 0, i, 0, time.UTC)
		if d.html {
			recs = append(recs, warctest.Response(d.uri, "text/html; charset=utf-8", d.body))
			_ = enc.Encode(map[string]any{"id": d.uri, "url": d.uri, "html": string(d.body), "ts": ts})
		} else {
			recs = append(recs, warctest.Resource(d.uri, "text/plain", d.body))
			_ = enc.Encode(map[string]any{"id": d.uri, "url": d.uri, "text": string(d.body), "ts": ts})
		}
		recs[len(recs)-1].Date = ts
	}
	jsonl := filepath.Join(dir, "crawl.jsonl")
	if err := writeFile(jsonl, lines.String()); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := neardup(t, "scan", "--emit", "all", "--quiet", jsonl)
	if code != 0 {
		t.Fatalf("scan jsonl: exit %d: %s", code, errOut)
	}
	want := verdicts(t, out)
	if len(want) != len(docs) {
		t.Fatalf("jsonl: %d events for %d documents", len(want), len(docs))
	}
	kinds := map[string]string{}
	for _, ev := range events(t, out) {
		kinds[ev.ID] = ev.Kind + " " + ev.DuplicateOf
	}
	if kinds["https://mirror.example/alice"] != "exact https://books.example/pg11.txt" || !strings.HasPrefix(kinds["https://mirror.example/moby-abridged"], "near https://books.example/pg2701.txt") &&
		!strings.HasPrefix(kinds["https://mirror.example/moby-abridged"], "partial https://books.example/pg2701.txt") {
		t.Errorf("planted duplicates not found: %v", kinds)
	}
	for _, name := range []string{"crawl.warc", "crawl.warc.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			warctest.Write(t, path, recs...)
			code, out, errOut := neardup(t, "scan", "--emit", "all", path)
			if code != 0 {
				t.Fatalf("scan %s: exit %d: %s", name, code, errOut)
			}
			got := verdicts(t, out)
			if !slices.Equal(got, want) {
				t.Errorf("WARC verdicts differ from JSON lines:\n got %q\nwant %q", got, want)
			}
			if !strings.Contains(errOut, fmt.Sprintf("warc: %d records, %d documents", len(docs), len(docs))) {
				t.Errorf("summary: %s", errOut)
			}
			events(t, out) // validates every event against the schema
		})
	}
	t.Logf("verdicts: %q", want)
}

// A truncated .warc.gz ends in a dead letter; the records before it get
// their verdicts and scan exits 0. Standard input works the same with
// --input-format warc.
func TestScanTruncatedWARC(t *testing.T) {
	docs := gutenbergCrawl(t)[:4]
	var recs []warctest.Record
	for _, d := range docs {
		recs = append(recs, warctest.Response(d.uri, "text/html", htmlPage(d.uri, string(d.body[:min(len(d.body), 60000)]))))
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "cut.warc.gz")
	offsets := warctest.Write(t, path, recs...)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := b[:offsets[3]+(int64(len(b))-offsets[3])/2]
	if err := os.WriteFile(path, cut, 0o600); err != nil {
		t.Fatal(err)
	}
	deadFile := filepath.Join(dir, "dead.jsonl")
	check := func(t *testing.T, code int, out, errOut string) {
		t.Helper()
		if code != 0 {
			t.Fatalf("exit %d, want 0: %s", code, errOut)
		}
		evs := events(t, out)
		if len(evs) != 3 {
			t.Errorf("%d events, want 3 (the records before the cut)", len(evs))
		}
		dl, err := os.ReadFile(deadFile)
		if err != nil {
			t.Fatal(err)
		}
		schematest.Load(t, "dead-letter.schema.json").Validate(t, bytes.TrimSpace(dl))
		var d struct {
			Reason string
			Error  string
			Source struct {
				File   string
				Offset int64
			}
		}
		if err := json.Unmarshal(dl, &d); err != nil || d.Reason != "malformed_warc" || d.Source.Offset != offsets[3] {
			t.Errorf("dead letter %s (%v), want malformed_warc at %d", dl, err, offsets[3])
		}
	}
	t.Run("file", func(t *testing.T) {
		code, out, errOut := neardup(t, "scan", "--emit", "all", "--dead-letter", deadFile, path)
		check(t, code, out, errOut)
	})
	t.Run("stdin", func(t *testing.T) {
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		old := os.Stdin
		os.Stdin = fh
		defer func() { os.Stdin = old }()
		code, out, errOut := neardup(t, "scan", "--emit", "all", "--input-format", "warc", "--dead-letter", deadFile, "-")
		check(t, code, out, errOut)
	})
	if code, _, _ := neardup(t, "scan", "--input-format", "csv", path); code != exitUsage {
		t.Errorf("--input-format csv: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := neardup(t, "scan", "--warc-id", "url", path); code != exitUsage {
		t.Errorf("--warc-id url: exit %d, want %d", code, exitUsage)
	}
}

// A revisit record comes out as an exact duplicate of its original (with
// record ids, the two captures are two documents); requests and images
// are skipped and counted on the summary line.
func TestScanWARCRevisit(t *testing.T) {
	docs := gutenbergCrawl(t)
	page := htmlPage("Alice", string(docs[0].body[:min(len(docs[0].body), 40000)]))
	path := filepath.Join(t.TempDir(), "revisit.warc.gz")
	warctest.Write(t, path,
		warctest.Request("https://books.example/alice"),
		warctest.Response("https://books.example/alice", "text/html", page),
		warctest.Response("https://books.example/cover.png", "image/png", []byte("\x89PNG\r\n\x1a\n")),
		warctest.Revisit("https://books.example/alice", 1))
	code, out, errOut := neardup(t, "scan", "--emit", "all", "--warc-id", "record-id", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := events(t, out)
	if len(evs) != 2 || evs[0].Kind != "unique" || evs[1].Kind != "exact" || evs[1].DuplicateOf != evs[0].ID || !strings.HasPrefix(evs[0].ID, "urn:uuid:") {
		t.Errorf("events %+v, want the response unique and the revisit its exact duplicate", evs)
	}
	var meta struct {
		Source struct {
			Meta map[string]string `json:"meta"`
		} `json:"source"`
	}
	if err := json.Unmarshal([]byte(strings.Split(strings.TrimSpace(out), "\n")[1]), &meta); err != nil || meta.Source.Meta["refers_to"] != evs[0].ID {
		t.Errorf("revisit event meta %v (%v), want refers_to %s", meta.Source.Meta, err, evs[0].ID)
	}
	if !strings.Contains(errOut, "warc: 4 records, 2 documents (1 revisits), 2 skipped (non_text 1, request 1), 0 malformed") {
		t.Errorf("summary: %s", errOut)
	}
}
