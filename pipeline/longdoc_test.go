package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/dataset"
	"github.com/neardup/neardup/sketch"
)

// TestLongDocumentVerdicts: documents over sketch.MaxSketchBytes are
// sketched from their head; a byte-for-byte copy is still exact, a copy
// differing after the cut is a near duplicate (not exact), and a text
// that differs is not a duplicate at all.
func TestLongDocumentVerdicts(t *testing.T) {
	dir := filepath.Join(dataset.Dir(t, "gutenberg-editions"), "texts")
	var books, other []byte
	for _, f := range []string{"pg2701.txt", "pg1342.txt", "pg84.txt", "pg11.txt"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		books = append(books, b...)
	}
	for len(books) < sketch.MaxSketchBytes+(1<<20) {
		books = append(books, books...)
	}
	long := books[:sketch.MaxSketchBytes+(1<<20)]
	tail := bytes.Clone(long)
	i := len(tail) - 100 // one letter changed, after the cut
	for tail[i] < 'a' || tail[i] > 'y' {
		i--
	}
	tail[i]++
	b, err := os.ReadFile(filepath.Join(dir, "pg1661.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for len(other) < len(long) {
		other = append(other, b...)
	}
	other = other[:len(long)]

	cfg := testConfig(t, "web", "sketch.max_bytes", "8MiB")
	items := []Item{
		{Doc: Document{ID: "long", Text: long}},
		{Doc: Document{ID: "copy", Text: bytes.Clone(long)}},
		{Doc: Document{ID: "tail", Text: tail}},
		{Doc: Document{ID: "other", Text: other}},
	}
	outs := run(t, cfg, func(p *Pipeline) index.Store { return memoryIndex(t, p) }, items)
	want := map[string]string{"long": KindUnique, "copy": KindExact, "tail": KindNear, "other": KindUnique}
	for _, o := range outs {
		if o.Event == nil {
			t.Errorf("no event: %+v", o)
			continue
		}
		if o.Event.Kind != want[o.Event.ID] {
			t.Errorf("%s: %s (of %q), want %s", o.Event.ID, o.Event.Kind, o.Event.DuplicateOf, want[o.Event.ID])
		}
	}
}
