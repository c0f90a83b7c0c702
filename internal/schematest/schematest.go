// Package schematest validates neardup's JSON outputs against the schemas
// in docs/ (the published contracts), for tests.
package schematest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a compiled contract.
type Schema struct{ s *jsonschema.Schema }

// Load compiles docs/<name> (e.g. "event.schema.json") from the
// repository root, found by walking up from the working directory.
func Load(t testing.TB, name string) *Schema {
	t.Helper()
	return LoadRef(t, name, "")
}

// LoadRef compiles the subschema of docs/<name> at the JSON pointer ref
// (e.g. "/$defs/kafka_headers"); "" is the whole schema.
func LoadRef(t testing.TB, name, ref string) *Schema {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("schematest: repository root not found")
		}
		dir = parent
	}
	path := filepath.Join(dir, "docs", name)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	loc := path
	if ref != "" {
		loc += "#" + ref
	}
	s, err := c.Compile(loc)
	if err != nil {
		t.Fatalf("schematest: compile %s: %v", loc, err)
	}
	return &Schema{s}
}

// Validate fails the test when the JSON document b does not satisfy the
// schema.
func (s *Schema) Validate(t testing.TB, b []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("schematest: not JSON: %v: %s", err, b)
	}
	if err := s.s.Validate(v); err != nil {
		t.Errorf("schematest: %s does not satisfy the schema: %v", b, err)
	}
}
