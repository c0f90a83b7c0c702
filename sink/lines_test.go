package sink

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

func TestLinesConcurrent(t *testing.T) {
	var buf bytes.Buffer
	l := NewLines(&buf)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 100 {
				if err := l.Write(map[string]int{"w": i, "j": j}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	for _, ln := range lines {
		var m map[string]int
		if err := json.Unmarshal([]byte(ln), &m); err != nil {
			t.Fatalf("interleaved line %q: %v", ln, err)
		}
	}
	if err := NewLines(&buf).Write(func() {}); err == nil {
		t.Error("unencodable value accepted")
	}
	var html bytes.Buffer
	h := NewLines(&html)
	_ = h.Write("<p>&")
	_ = h.Flush()
	if html.String() != "\"<p>&\"\n" {
		t.Errorf("HTML escaped: %q", html.String())
	}
}
