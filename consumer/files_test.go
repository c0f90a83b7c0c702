package consumer

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/stream"
)

func TestReadLine(t *testing.T) {
	in := "short\r\n" + strings.Repeat("x", 100) + "\n\nlast"
	br := bufio.NewReaderSize(strings.NewReader(in), 16)
	type line struct {
		text string
		over bool
	}
	var got []line
	for {
		b, _, over, err := readLine(br, 50)
		if len(b) > 0 || over {
			got = append(got, line{string(b), over})
		}
		if err != nil {
			break
		}
	}
	if len(got) != 3 || got[0].text != "short" || !got[1].over || len(got[1].text) > MaxKeep || got[2].text != "last" {
		t.Errorf("lines %+v", got)
	}
}

// Files walks directories in lexical order, skips hidden entries and the
// excluded file, and turns per-document problems into rejected items.
func TestFilesOrderAndRejects(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("b.txt", "bee")
	write("a.html", "<p>ay</p>")
	write("sub/c.txt", "sea")
	write(".hidden/d.txt", "never")
	write(".e.txt", "never")
	write("big.txt", strings.Repeat("x", 200))
	write("docs.jsonl", `{"id":"j1","text":"one"}`+"\n"+`{"id":`+"\n")
	write("out.jsonl", `{"id":"mine","text":"own output"}`)
	f := &Files{Paths: []string{dir}, MaxBytes: 100, Exclude: []string{filepath.Join(dir, "out.jsonl")}}
	out := make(chan stream.Item, 100)
	if err := f.Run(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	close(out)
	var got []string
	for it := range out {
		it.Decode()
		name := filepath.Base(it.Source.File)
		var inv *stream.InvalidError
		switch {
		case errors.As(it.Err, &inv):
			got = append(got, name+":"+string(inv.Reason))
		case it.Err != nil:
			t.Fatalf("%s: %v", name, it.Err)
		case it.Doc.IsHTML:
			got = append(got, name+":html")
		default:
			got = append(got, name+":"+it.Doc.ID[strings.LastIndex(it.Doc.ID, "/")+1:])
		}
	}
	want := "a.html:html b.txt:b.txt big.txt:too_large docs.jsonl:j1 docs.jsonl:malformed_json c.txt:c.txt"
	if strings.Join(got, " ") != want {
		t.Errorf("items\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	total, err := f.Total()
	if err != nil || total == 0 {
		t.Errorf("Total = %d, %v", total, err)
	}
}

func TestFilesMissingPath(t *testing.T) {
	f := &Files{Paths: []string{filepath.Join(t.TempDir(), "nope")}, MaxBytes: 100}
	if err := f.Run(context.Background(), make(chan stream.Item, 1)); err == nil {
		t.Error("missing path accepted")
	}
}
