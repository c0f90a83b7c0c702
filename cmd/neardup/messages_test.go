package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index/redistest"
)

// A namespace that does not exist is not data loss: neardup delete (and
// check) says there is nothing to delete there, which namespaces the
// server holds and the one most likely meant, exits 2, and writes nothing.
// On main delete read "the stored documents are gone … the server lost
// its data" and exited 1.
func TestMissingNamespace(t *testing.T) {
	contractTest(t)
	addr := redistest.StartServer(t)
	dir := filepath.Join("..", "..", "examples", "docs")
	if code, _, errOut := neardup(t, "scan", "--quiet", "--index", "redis://"+addr, "--index.namespace", "crawl", dir); code != exitOK {
		t.Fatalf("scan: exit %d: %s", code, errOut)
	}
	rc := redis.NewClient(&redis.Options{Addr: addr})
	defer rc.Close()
	ctx := context.Background()
	before, err := rc.DBSize(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args       []string
		want, more string
	}{
		{[]string{"delete", "--index", "redis://" + addr, "--index.namespace", "crwal", "x"},
			`namespace "crwal" does not exist on redis://` + addr + `: nothing to delete`, "did you mean --index.namespace crawl?"},
		{[]string{"delete", "--index", "redis://" + addr + "/3", "--index.namespace", "crawl", "x"},
			`namespace "crawl" does not exist on redis://` + addr + `/3, nor does any other index: nothing to delete`, "never written to by neardup"},
		// check is read-only: on main it created the namespace it was
		// pointed at (its clock key) and found nothing.
		{[]string{"check", "--index", "redis://" + addr, "--index.namespace", "crwal", filepath.Join(dir, "01-harbour-bridge.txt")},
			`namespace "crwal" does not exist on redis://` + addr + `: nothing to check against`, "did you mean --index.namespace crawl?"},
	} {
		code, out, errOut := neardup(t, tt.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tt.want) || !strings.Contains(errOut, tt.more) ||
			strings.Contains(errOut, "gone") || strings.Contains(errOut, "lost its data") {
			t.Errorf("delete %v: exit %d, stdout %q\nstderr %s", tt.args, code, out, errOut)
		}
	}
	if after, _ := rc.DBSize(ctx).Result(); after != before {
		t.Errorf("the server held %d keys, %d after the deletes", before, after)
	}
}

// A binary file among the inputs puts one line on a terminal, not its
// 64 KiB as base64 (~87 KB on main); written elsewhere (a pipe, a file)
// the dead letter keeps its input, so nothing is lost.
func TestScanDeadLettersOnTerminal(t *testing.T) {
	contractTest(t)
	script, err := exec.LookPath("script") // util-linux: runs a command on a pseudo-terminal
	if err != nil {
		t.Fatalf("script (util-linux) is needed to give scan a terminal: %v", err)
	}
	dir := t.TempDir()
	bin := make([]byte, 100<<10)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	if err := os.WriteFile(filepath.Join(dir, "photo.png"), bin, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("a short note about the harbour bridge and its repairs"), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, "-qfec", exe+" scan "+dir, "/dev/null")
	cmd.Env = append(os.Environ(), "NEARDUP_TEST_AS_COMMAND=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scan on a terminal: %v\n%.2000s", err, out)
	}
	if len(out) > 4<<10 || !strings.Contains(string(out), "dead letter: "+filepath.Join(dir, "photo.png")+": binary") ||
		!strings.Contains(string(out), "1 documents, 0 duplicates") || !strings.Contains(string(out), "--dead-letter FILE") {
		t.Errorf("scan on a terminal wrote %d bytes:\n%.2000s", len(out), out)
	}
	_, _, errOut := neardup(t, "scan", dir)
	if !strings.Contains(errOut, `"input_base64":`) {
		t.Errorf("off a terminal the dead letter lacks its input:\n%.300s", errOut)
	}
}

// A file that is not WARC, read with --input-format warc, is one clear
// error before anything runs (exit 2); on main it was a malformed_warc
// dead letter and two summaries that disagreed ("1 documents" and "0
// documents").
func TestScanWARCOnText(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(file, []byte("hello world, this is plain text\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := neardup(t, "scan", "--input-format", "warc", file)
	want := "neardup scan: " + file + ` is not a WARC file: it starts with "hello world, thi", not a WARC record ("WARC/1.x") or a gzip member; without --input-format warc it is read by its name (.warc, .warc.gz, .jsonl, else text)` + "\n"
	if code != exitUsage || out != "" || errOut != want {
		t.Errorf("exit %d, stdout %q\nstderr %q\nwant   %q", code, out, errOut, want)
	}
}
