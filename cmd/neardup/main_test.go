package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/buildinfo"
	"github.com/neardup/neardup/internal/dataset"
	"github.com/neardup/neardup/internal/poll"
	"github.com/neardup/neardup/internal/schematest"
)

// neardup runs the command in-process and returns its exit code and output.
func neardup(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

// copyTexts copies the named texts of the gutenberg-editions dataset into dir.
func copyTexts(t *testing.T, dir string, names ...string) {
	t.Helper()
	texts := filepath.Join(dataset.Dir(t, "gutenberg-editions"), "texts")
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(texts, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

type event struct {
	ID          string         `json:"id"`
	Kind        string         `json:"kind"`
	DuplicateOf string         `json:"duplicate_of"`
	Cluster     string         `json:"cluster"`
	Method      string         `json:"method"`
	Scores      map[string]any `json:"scores"`
	Replay      bool           `json:"replay"`
}

func events(t *testing.T, out string) []event {
	t.Helper()
	var evs []event
	schema := schematest.Load(t, "event.schema.json")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		schema.Validate(t, []byte(line))
		var ev event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("bad event %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// TestScanGutenberg: over the ten Gutenberg texts, scan reports exactly the
// five edition pairs (the later file in scan order a duplicate of the
// earlier) and the other five unique, with the memory index and with a
// real redis-server, identically.
func TestScanGutenberg(t *testing.T) {
	dir := filepath.Join(dataset.Dir(t, "gutenberg-editions"), "texts")
	want := map[string]string{ // duplicate → original, in sorted scan order
		"pg2701.txt":  "pg15.txt",
		"pg28885.txt": "pg11.txt",
		"pg42671.txt": "pg1342.txt",
		"pg48320.txt": "pg1661.txt",
		"pg84.txt":    "pg42324.txt",
	}
	addr := redistest.StartServer(t)
	var runs [][]event
	for _, ix := range []string{"memory", "redis://" + addr + "/0?namespace=gutenberg"} {
		code, out, errOut := neardup(t, "scan", "--emit", "all", "--index", ix, dir)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", ix, code, errOut)
		}
		evs := events(t, out)
		if len(evs) != 10 {
			t.Fatalf("%s: %d events, want 10", ix, len(evs))
		}
		for _, ev := range evs {
			base := filepath.Base(ev.ID)
			if orig, dup := want[base]; dup {
				if ev.Kind == "unique" || filepath.Base(ev.DuplicateOf) != orig || filepath.Base(ev.Cluster) != orig {
					t.Errorf("%s: %s is %s of %q (cluster %q), want a duplicate of %s", ix, base, ev.Kind, ev.DuplicateOf, ev.Cluster, orig)
				}
			} else if ev.Kind != "unique" {
				t.Errorf("%s: %s is %s of %s, want unique", ix, base, ev.Kind, ev.DuplicateOf)
			}
		}
		if !strings.Contains(errOut, "10 documents, 5 duplicates") {
			t.Errorf("summary: %q", errOut)
		}
		runs = append(runs, evs)
	}
	for i := range runs[0] {
		a, b := runs[0][i], runs[1][i]
		a.Scores, b.Scores = nil, nil
		if a.ID != b.ID || a.Kind != b.Kind || a.DuplicateOf != b.DuplicateOf || a.Cluster != b.Cluster || a.Method != b.Method {
			t.Errorf("memory and redis differ: %+v vs %+v", a, b)
		}
	}
}

func TestScanExamples(t *testing.T) {
	code, out, errOut := neardup(t, "scan", "--emit", "all", filepath.Join("..", "..", "examples", "docs"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := map[string]string{}
	for _, ev := range events(t, out) {
		got[filepath.Base(ev.ID)] = ev.Kind + " " + filepath.Base(ev.DuplicateOf)
	}
	want := map[string]string{
		"01-harbour-bridge.txt":            "unique .",
		"02-harbour-bridge-syndicated.txt": "near 01-harbour-bridge.txt",
		"03-orchard-study.txt":             "unique .",
		"04-orchard-study-in-digest.txt":   "near 03-orchard-study.txt",
		"05-library-hours.txt":             "unique .",
		"06-library-hours-copy.txt":        "exact 05-library-hours.txt",
		"07-marathon.txt":                  "unique .",
		"08-orchard-essay.txt":             "partial 03-orchard-study.txt",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}

// Bad input through scan: each bad document is dead-lettered with its
// reason, the run goes on and exits 0, and nothing panics.
func TestScanBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	big := `{"id":"big","text":"` + strings.Repeat("lorem ipsum ", 50<<20/12) + `"}`
	lines := []string{
		`{"id":"good","text":"a perfectly ordinary document with a handful of words in it"}`,
		`{"id":"malformed","text":`,
		`{"text":"missing id"}`,
		`{"id":"both","text":"x","html":"<p>x</p>"}`,
		`{"id":"neither"}`,
		`{"id":"empty","text":""}`,
		big,
		"{\"id\":\"latin1\",\"text\":\"caf\xe9 cr\xe8me br\xfbl\xe9e for everyone at the table\"}",
		`{"id":"good-copy","text":"a perfectly ordinary document with a handful of words in it"}`,
	}
	write("a.jsonl", []byte(strings.Join(lines, "\n")+"\n"))
	write("b-binary.txt", []byte("\x7fELF\x02\x01\x01\x00\x00\x00binary"))
	write("c-invalid-utf8.txt", []byte("plain text file with invalid \xff\xfe bytes and enough words"))
	deadFile := filepath.Join(dir, "dead.jsonl")
	code, out, errOut := neardup(t, "scan", "--quiet", "--dead-letter", deadFile, "--sketch.max_bytes", "16MiB", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	dead, err := os.ReadFile(deadFile)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	schema := schematest.Load(t, "dead-letter.schema.json")
	for _, line := range strings.Split(strings.TrimSpace(string(dead)), "\n") {
		schema.Validate(t, []byte(line))
		var d struct {
			ID     string `json:"id"`
			Reason string `json:"reason"`
			Source struct {
				File string `json:"file"`
				Line int    `json:"line"`
			} `json:"source"`
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		key := d.ID
		if key == "" {
			key = filepath.Base(d.Source.File) + ":" + string(rune('0'+d.Source.Line))
		}
		reasons[key] = d.Reason
	}
	want := map[string]string{
		"a.jsonl:2": "malformed_json",
		"a.jsonl:3": "missing_id",
		"both":      "both_text_and_html",
		"neither":   "no_content",
		"empty":     "empty_text",
		"a.jsonl:7": "too_large",
		filepath.ToSlash(filepath.Join(dir, "b-binary.txt")): "binary",
	}
	for k, v := range want {
		if reasons[k] != v {
			t.Errorf("%s: reason %q, want %q (all: %v)", k, reasons[k], v, reasons)
		}
	}
	evs := events(t, out)
	var gotCopy, gotLatin, gotInvalid bool
	for _, ev := range evs {
		switch filepath.Base(ev.ID) {
		case "good-copy":
			gotCopy = ev.Kind == "exact" && ev.DuplicateOf == "good"
		}
	}
	code, out, _ = neardup(t, "scan", "--quiet", "--emit", "all", "--dead-letter", filepath.Join(dir, "dead2.jsonl"), dir)
	for _, ev := range events(t, out) {
		switch filepath.Base(ev.ID) {
		case "latin1":
			gotLatin = true
		case "c-invalid-utf8.txt":
			gotInvalid = true
		}
	}
	if !gotCopy || !gotLatin || !gotInvalid || code != 0 {
		t.Errorf("run did not continue past bad input: copy %v, latin1 %v, invalid-utf8 file %v, exit %d", gotCopy, gotLatin, gotInvalid, code)
	}
}

func TestScanUsage(t *testing.T) {
	if code, _, _ := neardup(t, "scan", "--sketch.k=3", "x"); code != exitUsage {
		t.Errorf("invalid config: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := neardup(t, "nope"); code != exitUsage {
		t.Errorf("unknown command: exit %d", code)
	}
	// A path that does not exist is bad usage, reported before anything
	// runs (no summary of 0 documents).
	if code, _, errOut := neardup(t, "scan", filepath.Join(t.TempDir(), "missing")); code != exitUsage || !strings.Contains(errOut, "no such file") || strings.Contains(errOut, "0 documents") {
		t.Errorf("missing path: exit %d, %q", code, errOut)
	}
}

// The exit-code contract of README "Exit codes", command by command: 2 for
// anything the user typed or configured wrong, 0 for -h.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(bad, []byte("sketch:\n  k: [oops\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(good, []byte("sketch:\n  k: 64\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	tests := []struct {
		name        string
		env         []string
		args        []string
		code        int
		out, errOut string // substrings wanted
	}{
		{"config check FILE", nil, []string{"config", "check", good}, exitOK, "configuration is valid: " + good, ""},
		{"config check FILE reads FILE", nil, []string{"config", "check", good}, exitOK, "sketch.k=64\n", ""},
		{"config check bad FILE", nil, []string{"config", "check", bad}, exitUsage, "", "yaml: line 2: "},
		{"config check missing FILE", nil, []string{"config", "check", missing}, exitUsage, "", "no such file"},
		{"config check --config bad", nil, []string{"config", "check", "--config", bad}, exitUsage, "", "yaml: line 2: "},
		{"config check FILE then flags", nil, []string{"config", "check", good, "--sketch.k=32"}, exitOK, "sketch.k=32\n", ""},
		{"config check two files", nil, []string{"config", "check", "--config", bad, good}, exitUsage, "", "two configuration files"},
		{"config check bad value", nil, []string{"config", "check", "--pipeline.emit=some"}, exitUsage, "", "pipeline.emit"},
		{"config check unknown env key", []string{"NEARDUP_SKETCH_KK", "12"}, []string{"config", "check"}, exitUsage, "", "$NEARDUP_SKETCH_KK"},
		{"scan unknown env key", []string{"NEARDUP_SKETCH_KK", "12"}, []string{"scan", "--quiet", good}, exitUsage, "", "did you mean sketch.k"},
		{"config example bad profile", nil, []string{"config", "example", "--profile", "news"}, exitUsage, "", "news"},
		{"scan --config bad", nil, []string{"scan", "--config", bad, good}, exitUsage, "", "yaml: line 2: "},
		{"scan bad index scheme", nil, []string{"scan", "--quiet", "--index", "foo://x", good}, exitUsage, "", `scheme "foo"`},
		{"bench -h", nil, []string{"bench", "-h"}, exitOK, "neardup bench serve", ""},
		{"bench unknown", nil, []string{"bench", "nope"}, exitUsage, "", "unknown 'bench nope'"},
		{"scan -h", nil, []string{"scan", "-h"}, exitOK, "", "Exit codes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := 0; i < len(tt.env); i += 2 {
				t.Setenv(tt.env[i], tt.env[i+1])
			}
			code, out, errOut := neardup(t, tt.args...)
			if code != tt.code || !strings.Contains(out, tt.out) || !strings.Contains(errOut, tt.errOut) {
				t.Errorf("neardup %s: exit %d (want %d)\nstdout %q (want %q)\nstderr %q (want %q)",
					strings.Join(tt.args, " "), code, tt.code, out, tt.out, errOut, tt.errOut)
			}
		})
	}
}

func TestScanStdin(t *testing.T) {
	w := pipeStdin(t)
	go func() {
		defer w.Close()
		w.WriteString(`{"id":"1","text":"the same short story about a lighthouse keeper and his cat"}` + "\n\n")
		w.WriteString(`{"id":"2","text":"The same short story about a lighthouse keeper and his cat!"}` + "\n")
	}()
	code, out, errOut := neardup(t, "scan", "--quiet", "-")
	evs := events(t, out)
	if code != 0 || len(evs) != 1 || evs[0].ID != "2" || evs[0].DuplicateOf != "1" {
		t.Errorf("exit %d, events %+v, stderr %s", code, evs, errOut)
	}
}

// The first interrupt stops reading, finishes the documents in flight,
// flushes their events and exits 130.
func TestScanInterrupt(t *testing.T) {
	w := pipeStdin(t)
	written := make(chan struct{})
	go func() {
		// Write documents and keep the pipe open, like a producer that is
		// still going when the operator presses Ctrl-C.
		for i := range 500 {
			fmt.Fprintf(w, `{"id":"d%d","text":"document number %d says something about topic %d and more"}`+"\n", i, i, i%7)
		}
		close(written)
	}()
	ctx, cancel := context.WithCancel(context.Background())
	var o, e bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"scan", "--emit", "all", "-"}, &o, &e) }()
	<-written
	// Interrupt once scan has read what was written: the pipe holds no
	// unread byte.
	stdin := os.Stdin
	poll.Until(t, 20*time.Second, func() error {
		if n := unread(t, stdin); n > 0 {
			return fmt.Errorf("%d bytes written to scan's stdin not read", n)
		}
		return nil
	})
	cancel()
	var code int
	select {
	case code = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("scan did not stop after the interrupt")
	}
	w.Close()
	if code != exitIntr {
		t.Errorf("exit %d, want %d; stderr %s", code, exitIntr, e.String())
	}
	evs := events(t, o.String())
	if len(evs) == 0 || !strings.Contains(e.String(), fmt.Sprintf("%d documents", len(evs))) {
		t.Errorf("%d events flushed; summary %q", len(evs), e.String())
	}
	for i, ev := range evs {
		if ev.ID != fmt.Sprintf("d%d", i) {
			t.Fatalf("event %d is %s: lost or reordered", i, ev.ID)
		}
	}
}

// pipeStdin replaces os.Stdin with a pipe for the test and returns its
// write end.
func pipeStdin(t *testing.T) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdin
	os.Stdin = r
	t.Cleanup(func() {
		os.Stdin = old
		r.Close()
		w.Close()
	})
	return w
}

// unread returns the number of bytes in the pipe r not yet read
// (ioctl FIONREAD, Linux's TIOCINQ).
func unread(t *testing.T, r *os.File) int {
	t.Helper()
	rc, err := r.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	}); err != nil {
		t.Fatal(err)
	}
	if errno != 0 {
		t.Fatalf("ioctl FIONREAD: %v", errno)
	}
	return n
}

// deadLetters reads a dead-letter file into id → reason (the source line
// for letters without an id).
func deadLetters(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	schema := schematest.Load(t, "dead-letter.schema.json")
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		schema.Validate(t, []byte(line))
		var d struct {
			ID     string `json:"id"`
			Reason string `json:"reason"`
			Source struct {
				Line int `json:"line"`
			} `json:"source"`
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("%d:%s", d.Source.Line, d.ID)] = d.Reason
	}
	return out
}

// A timestamp beyond what the event encoding holds is a dead letter
// (bad_ts) and the scan goes on, with the memory index and with Redis,
// where a second run over the same input goes past the record too. On
// today's main scan exited 1 at that record, every time.
func TestScanBadTimestamp(t *testing.T) {
	dir := t.TempDir()
	text := "a perfectly ordinary document with a handful of words in it for the index"
	lines := []string{
		`{"id":"a","text":"` + text + `"}`,
		`{"id":"b","ts":9223372036854775807,"text":"` + text + ` and more"}`,
		`{"id":"c","ts":1700000000000,"text":"` + text + `"}`,
		`{"id":"d","text":"something else entirely, about the weather on the coast this week"}`,
	}
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := redistest.StartServer(t)
	for _, ix := range []string{"memory", "redis://" + addr + "/0?namespace=ts", "redis://" + addr + "/0?namespace=ts"} {
		dead := filepath.Join(t.TempDir(), "dead.jsonl")
		code, out, errOut := neardup(t, "scan", "--emit", "all", "--quiet", "--index", ix, "--dead-letter", dead, in)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", ix, code, errOut)
		}
		got := map[string]string{}
		for _, ev := range events(t, out) {
			got[ev.ID] = ev.Kind + " " + ev.DuplicateOf
		}
		want := map[string]string{"a": "unique ", "c": "exact a", "d": "unique "}
		for id, w := range want {
			if got[id] != w {
				t.Errorf("%s: %s is %q, want %q", ix, id, got[id], w)
			}
		}
		if d := deadLetters(t, dead); len(d) != 1 || d["2:b"] != "bad_ts" {
			t.Errorf("%s: dead letters %v, want b with bad_ts", ix, d)
		}
	}
}

// Ids that are not valid UTF-8 are dead letters (bad_id), each with its
// own input: on today's main "x\xff", "x\xfe" and "x\ud800" all decoded to
// "x\ufffd", three documents under one id, two of them never indexed.
func TestScanInvalidIDs(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		"{\"id\":\"x\xff\",\"text\":\"the first text about harbours and ships\"}",
		"{\"id\":\"x\xfe\",\"text\":\"the second text about orchards and apples\"}",
		`{"id":"x\ud800","text":"the third text about libraries and books"}`,
		`{"id":"x\ufffd","text":"a fourth text, whose id is the replacement character itself"}`,
	}
	in := filepath.Join(dir, "ids.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(t.TempDir(), "dead.jsonl")
	code, out, errOut := neardup(t, "scan", "--emit", "all", "--quiet", "--dead-letter", dead, in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := events(t, out)
	if len(evs) != 1 || evs[0].ID != "x\ufffd" || evs[0].Kind != "unique" {
		t.Errorf("events %+v, want only the fourth document, unique", evs)
	}
	d := deadLetters(t, dead)
	n := 0
	for k, reason := range d {
		if reason != "bad_id" {
			t.Errorf("dead letter %s: %s, want bad_id", k, reason)
		}
		n++
	}
	if n != 3 {
		t.Errorf("%d dead letters %v, want the three invalid ids", n, d)
	}
}

// A mistyped flag gets a short answer: what was wrong, the flag most
// likely meant, and where the flags are listed, not every flag the
// command has (scan printed 204 lines); an unknown command likewise. Error
// messages carry no "usage:" prefix.
func TestUsageMessages(t *testing.T) {
	contractTest(t)
	missing := filepath.Join(t.TempDir(), "missing.txt")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"scan", "--sketch.kk=3", "x"}, "neardup scan: unknown flag -sketch.kk; did you mean --sketch.k? (run 'neardup scan -h' for its flags)\n"},
		{[]string{"check", "--indx", "memory", "x"}, "neardup check: unknown flag -indx; did you mean --index? (run 'neardup check -h' for its flags)\n"},
		{[]string{"compare", "--jsn", "a", "b"}, "neardup compare: unknown flag -jsn; did you mean --json? (run 'neardup compare -h' for its flags)\n"},
		{[]string{"delete", "--form", "ids.txt"}, "neardup delete: unknown flag -form; did you mean --from? (run 'neardup delete -h' for its flags)\n"},
		{[]string{"serve", "--kafka.broker=x:1"}, "neardup serve: unknown flag -kafka.broker; did you mean --kafka.brokers? (run 'neardup serve -h' for its flags)\n"},
		{[]string{"demo", "--doc", "10"}, "neardup demo: unknown flag -doc; did you mean --docs? (run 'neardup demo -h' for its flags)\n"},
		{[]string{"eval", "--set", "pan13"}, "neardup eval: unknown flag -set; did you mean --sets? (run 'neardup eval -h' for its flags)\n"},
		{[]string{"config", "check", "--verify.jacard=0.6"}, "neardup config: unknown flag -verify.jacard; did you mean --verify.jaccard? (run 'neardup config check -h' for its flags)\n"},
		{[]string{"scan", "--nothing-like-it"}, "neardup scan: unknown flag -nothing-like-it (run 'neardup scan -h' for its flags)\n"},
		{[]string{"scan", "--index"}, "neardup scan: flag needs an argument: -index (run 'neardup scan -h' for its flags)\n"},
		{[]string{"scna", "x"}, "neardup: unknown command \"scna\"; did you mean \"scan\"? (run 'neardup help' for the commands)\n"},
		{[]string{"scan", "--quiet", missing}, "neardup scan: stat " + missing + ": no such file or directory\n"},
		{[]string{"compare", missing, missing}, "neardup compare: stat " + missing + ": no such file or directory\n"},
	} {
		code, out, errOut := neardup(t, tt.args...)
		if code != exitUsage || out != "" || errOut != tt.want {
			t.Errorf("neardup %s: exit %d, stdout %q\nstderr %q\nwant   %q", strings.Join(tt.args, " "), code, out, errOut, tt.want)
		}
	}
	// A configuration file's unknown key gets its "did you mean" too.
	file := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(file, []byte("sketch:\n  shingel: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := neardup(t, "config", "check", file); code != exitUsage || !strings.Contains(errOut, `line 2: unknown key "sketch.shingel"; did you mean sketch.shingle?`) {
		t.Errorf("config check with a mistyped key: exit %d, %q", code, errOut)
	}
}

// The version comes from the build information (internal/buildinfo), and
// version, every event's params.version and neardup_build_info say the
// same. A test binary records no commit, so here it is "devel" and the
// command says why; the newcomer check (TestNewcomerPath) builds from a
// clone and finds the commit.
func TestVersion(t *testing.T) {
	code, out, _ := neardup(t, "version")
	want := buildinfo.Read(version).Version
	if code != exitOK || !strings.HasPrefix(out, "neardup "+want+"\n") {
		t.Fatalf("version: exit %d, %q, want the build's version %s", code, out, want)
	}
	if want == buildinfo.Devel && !strings.Contains(out, "no commit recorded") {
		t.Errorf("a devel build does not say why it has no commit: %q", out)
	}
	_, out, _ = neardup(t, "scan", "--quiet", filepath.Join("..", "..", "examples", "docs"))
	var ev struct {
		Params struct {
			Version string `json:"version"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &ev); err != nil || ev.Params.Version != want {
		t.Errorf("event params.version %q (%v), want %s", ev.Params.Version, err, want)
	}
	// A failing standard output is a failed run (exit 1), not a silent 0.
	if code := run(context.Background(), []string{"version"}, failWriter{}, &bytes.Buffer{}); code != exitError {
		t.Errorf("version into a failing stdout: exit %d, want %d", code, exitError)
	}
}

// failWriter fails every write, as a closed pipe or a full disk does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("write failed") }
