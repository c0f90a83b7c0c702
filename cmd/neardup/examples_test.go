package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/pipeline"
)

// -update (generated_test.go) rewrites the examples instead of comparing them:
//
//	go test ./cmd/neardup -run TestDocsExamplesGenerated -update

// exampleAt is the time stamp the examples show: the program's is the
// time of the run.
const exampleAt = "2026-11-23T14:14:32Z"

// TestDocsExamplesGenerated: docs/examples/event-*.json and the event
// example in README.md are what the program writes for the example
// documents (examples/docs, examples/sentences), all but the time stamp;
// a change of the program that changes them fails here until they are
// regenerated (-update). The README's prose about the example (the
// quoted sentence's words, its shares) is checked against the event.
func TestDocsExamplesGenerated(t *testing.T) {
	root := filepath.Join("..", "..")
	t.Chdir(root) // the events name the files as the docs do: examples/docs/…
	scan := func(args ...string) map[string]json.RawMessage {
		t.Helper()
		code, out, errOut := neardup(t, append([]string{"scan", "--quiet", "--emit", "all"}, args...)...)
		if code != 0 {
			t.Fatalf("scan %v: exit %d: %s", args, code, errOut)
		}
		evs := map[string]json.RawMessage{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var ev struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal([]byte(l), &ev); err != nil {
				t.Fatal(err)
			}
			evs[ev.ID] = json.RawMessage(l)
		}
		return evs
	}
	docs := scan("examples/docs")
	sentences := scan("--pipeline.granularity=sentence", "examples/sentences")
	files := map[string]json.RawMessage{
		"event-unique.json":    docs["examples/docs/01-harbour-bridge.txt"],
		"event-near.json":      docs["examples/docs/02-harbour-bridge-syndicated.txt"],
		"event-exact.json":     docs["examples/docs/06-library-hours-copy.txt"],
		"event-partial.json":   docs["examples/docs/08-orchard-essay.txt"],
		"event-sentences.json": sentences["examples/sentences/02-town-guide.txt"],
		"event-deleted.json":   deletedExample(t),
	}
	for name, ev := range files {
		if ev == nil {
			t.Fatalf("%s: no such event", name)
		}
		got := exampleJSON(t, ev)
		path := filepath.Join("docs", "examples", name)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what the program writes now (go test ./cmd/neardup -run TestDocsExamplesGenerated -update):\n%s", path, got)
		}
	}

	checkSentenceModeExample(t, files["event-sentences.json"])

	// README: the partial example, abridged, and what the prose says of it.
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := readmeEvent(t, files["event-partial.json"])
	re := regexp.MustCompile("(?s)(Each verdict is one event \\(`docs/event.schema.json`\\):\n\n```json\n)(.*?)(```\n)")
	m := re.FindSubmatchIndex(readme)
	if m == nil {
		t.Fatal("README.md: no event example after \"Each verdict is one event\"")
	}
	if *update {
		readme = append(append(append([]byte(nil), readme[:m[4]]...), block...), readme[m[5]:]...)
		if err := os.WriteFile("README.md", readme, 0o644); err != nil {
			t.Fatal(err)
		}
	} else if cur := string(readme[m[4]:m[5]]); cur != block {
		t.Errorf("README.md's event example is not what the program writes now (-update):\n%s", block)
	}
	var ev struct {
		Source struct {
			File string `json:"file"`
		} `json:"source"`
		Matches []struct {
			Passages []struct {
				Offset, Length int
			} `json:"passages"`
			Share      float64 `json:"share"`
			MatchShare float64 `json:"match_share"`
		} `json:"matches"`
	}
	if err := json.Unmarshal(files["event-partial.json"], &ev); err != nil || len(ev.Matches) == 0 || len(ev.Matches[0].Passages) == 0 {
		t.Fatalf("the partial example has no passage: %v", err)
	}
	text, err := os.ReadFile(ev.Source.File)
	if err != nil {
		t.Fatal(err)
	}
	p := ev.Matches[0].Passages[0]
	quoted := string([]rune(string(text))[p.Offset : p.Offset+p.Length])
	for _, want := range []string{
		fmt.Sprintf("here the %d-word sentence the essay quotes from the study", len(strings.Fields(quoted))),
		fmt.Sprintf("%.1f%% of the essay's words (`share`)", 100*ev.Matches[0].Share),
		fmt.Sprintf("%.1f%% of the study's (`match_share`)", 100*ev.Matches[0].MatchShare),
	} {
		if !strings.Contains(strings.Join(strings.Fields(string(readme)), " "), want) {
			t.Errorf("README.md does not say %q of its event example", want)
		}
	}
}

// checkSentenceModeExample checks the two sentence matches
// docs/sentence-mode.md quotes from event-sentences.json.
func checkSentenceModeExample(t *testing.T, ev json.RawMessage) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("docs", "sentence-mode.md"))
	if err != nil {
		t.Fatal(err)
	}
	var e pipeline.Event
	if err := json.Unmarshal(ev, &e); err != nil || len(e.Sentences) < 2 {
		t.Fatalf("the sentence example has %d sentence matches: %v", len(e.Sentences), err)
	}
	flat := strings.Join(strings.Fields(string(doc)), " ")
	for _, s := range e.Sentences[:2] {
		want := fmt.Sprintf(`{"offset": %d, "length": %d, "match_id": `, s.Offset, s.Length)
		tail := fmt.Sprintf(`"match_offset": %d, "match_length": %d, "similarity": %s, "edit": %q}`, s.MatchOffset, s.MatchLength,
			strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", s.Similarity), "0"), "."), s.Edit)
		if !strings.Contains(flat, want) || !strings.Contains(flat, tail) {
			t.Errorf("docs/sentence-mode.md does not quote the sentence match %s … %s of event-sentences.json", want, tail)
		}
	}
}

// exampleJSON is an event as docs/examples shows it: the program's
// encoding, indented, with the examples' time stamp.
func exampleJSON(t *testing.T, ev json.RawMessage) []byte {
	t.Helper()
	var e pipeline.Event
	if err := json.Unmarshal(ev, &e); err != nil {
		t.Fatal(err)
	}
	at, err := time.Parse(time.RFC3339, exampleAt)
	if err != nil {
		t.Fatal(err)
	}
	e.At = at
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&e); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// deletedExample is the event a member gives a tombstone for
// 01-harbour-bridge.txt read at offset 42 of partition 0 of topic docs.
func deletedExample(t *testing.T) json.RawMessage {
	t.Helper()
	o := &config.Overrides{}
	o.Add("pipeline.emit", "all")
	c, err := config.Load("", nil, o)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := pipeline.FromConfig(&c, version)
	if err != nil {
		t.Fatal(err)
	}
	probe, err := pipeline.New(pc, nil)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.NewMemory(index.MemoryConfig{Params: probe.IndexParams()})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pipeline.New(pc, ix)
	if err != nil {
		t.Fatal(err)
	}
	id := "examples/docs/01-harbour-bridge.txt"
	text, err := os.ReadFile(id)
	if err != nil {
		t.Fatal(err)
	}
	part, off := int32(0), int64(42)
	in, out := make(chan pipeline.Item, 2), make(chan pipeline.Output, 2)
	in <- pipeline.Item{Doc: pipeline.Document{ID: id, Text: text}}
	in <- pipeline.Item{Doc: pipeline.Document{ID: id}, Delete: true, Source: pipeline.Source{Topic: "docs", Partition: &part, Offset: &off}}
	close(in)
	if err := pl.Run(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	close(out)
	var last pipeline.Output
	for o := range out {
		last = o
	}
	b, err := json.Marshal(last.Event)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readmeEvent renders the README's abridged form of an event: its
// verdict, its first match with its passages and shares (the others
// elided), its source, and the params and time stamp elided.
func readmeEvent(t *testing.T, ev json.RawMessage) string {
	t.Helper()
	var e pipeline.Event
	if err := json.Unmarshal(ev, &e); err != nil {
		t.Fatal(err)
	}
	js := func(v any) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(b.String())
	}
	scores := func(s any) string {
		var m map[string]float64
		if err := json.Unmarshal([]byte(js(s)), &m); err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, k := range []string{"aligned", "aligned_ab", "aligned_ba", "jaccard", "containment_ab", "containment_ba"} {
			if v, ok := m[k]; ok {
				parts = append(parts, fmt.Sprintf("%q:%s", k, strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")))
			}
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	m := e.Matches[0]
	more := ""
	if len(e.Matches) > 1 {
		more = ", …"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "{\"id\":%s,\"kind\":%s,\"duplicate_of\":%s,\n", js(e.ID), js(e.Kind), js(e.DuplicateOf))
	fmt.Fprintf(&b, " \"cluster\":%s,\"method\":%s,\n", js(e.Cluster), js(e.Method))
	fmt.Fprintf(&b, " \"scores\":%s,\n", scores(e.Scores))
	fmt.Fprintf(&b, " \"matches\":[{\"id\":%s,\"kind\":%s,\"method\":%s,\n", js(m.ID), js(m.Kind), js(m.Method))
	fmt.Fprintf(&b, "   \"scores\":%s,\n", scores(m.Scores))
	fmt.Fprintf(&b, "   \"passages\":%s,\n", js(m.Passages))
	fmt.Fprintf(&b, "   \"share\":%s,\"match_share\":%s}%s],\n", js(m.Share), js(m.MatchShare), more)
	fmt.Fprintf(&b, " \"source\":%s, \"params\":{…}, \"at\":\"…\"}\n", js(e.Source))
	return b.String()
}

// TestScanEventsGolden pins the event JSON of a fixed corpus, the example
// documents and the input contract's example records, scanned with the
// web profile and with sentence matching: every line of scan's output but
// the time stamp must be that of testdata/scan-events.golden (-update
// writes it). A change of the event format, or of a verdict, fails here.
func TestScanEventsGolden(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	var out bytes.Buffer
	for _, args := range [][]string{
		{"examples/docs", "docs/examples/input.jsonl"},
		{"--pipeline.granularity=sentence", "examples/sentences"},
	} {
		code, stdout, errOut := neardup(t, append([]string{"scan", "--quiet", "--emit", "all"}, args...)...)
		if code != 0 {
			t.Fatalf("scan %v: exit %d: %s", args, code, errOut)
		}
		fmt.Fprintf(&out, "# neardup scan --emit all %s\n", strings.Join(args, " "))
		at := regexp.MustCompile(`"at":"[^"]*"`)
		for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
			out.WriteString(at.ReplaceAllString(l, `"at":"`+exampleAt+`"`) + "\n")
		}
	}
	path := filepath.Join("cmd", "neardup", "testdata", "scan-events.golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/neardup -run TestScanEventsGolden -update writes it)", err)
	}
	gl, wl := strings.Split(out.String(), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] {
			t.Fatalf("%s differs from what scan writes now, first at line %d:\nwrites: %s\ngolden: %s", path, i+1, gl[i], wl[i])
		}
	}
	if len(gl) != len(wl) {
		t.Fatalf("%s: scan writes %d lines, golden %d", path, len(gl), len(wl))
	}
}
