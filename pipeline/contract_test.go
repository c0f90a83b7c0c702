package pipeline

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/internal/schematest"
)

// The examples in docs/ are part of the contract: they must satisfy the
// schemas, and the example input must decode.
func TestDocsExamples(t *testing.T) {
	dir := filepath.Join("..", "docs", "examples")
	events, err := filepath.Glob(filepath.Join(dir, "event-*.json"))
	if err != nil || len(events) < 4 {
		t.Fatalf("event examples: %v, %v", events, err)
	}
	schema := schematest.Load(t, "event.schema.json")
	for _, p := range events {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		schema.Validate(t, b)
	}
	b, err := os.ReadFile(filepath.Join(dir, "dead-letter.json"))
	if err != nil {
		t.Fatal(err)
	}
	schematest.Load(t, "dead-letter.schema.json").Validate(t, b)

	f, err := os.Open(filepath.Join(dir, "input.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := NewDecoder(1 << 20)
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		if _, err := d.DecodeJSON(sc.Bytes(), ""); err != nil {
			t.Errorf("example input line %d: %v", n+1, err)
		}
		n++
	}
	if n < 2 {
		t.Errorf("%d example input lines", n)
	}
}

// The schemas reject what the contract forbids.
func TestSchemaRejects(t *testing.T) {
	schema := schematest.Load(t, "event.schema.json")
	for _, bad := range []string{
		`{"id":"a","kind":"near","cluster":"a","source":{},"params":{},"at":"2026-01-01T00:00:00Z"}`,
		`{"id":"a","kind":"maybe","cluster":"a","source":{},"params":{"profile":"web","shingle":5,"k":128,"minhash":"oph","bands":9,"rows":13,"seed":1,"simhash_k":3,"index":"memory","version":"x"},"at":"2026-01-01T00:00:00Z"}`,
	} {
		ft := &fakeT{TB: t}
		schema.Validate(ft, []byte(bad))
		if !ft.failed {
			t.Errorf("schema accepted %s", bad)
		}
	}
}

// fakeT records a failure instead of failing the test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Helper()               {}
