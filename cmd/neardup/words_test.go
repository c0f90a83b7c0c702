package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/synth"
)

// wordSource returns a source of random words drawn from seed ("w" and a
// number under 50,000) and a joiner of word lists into a page's text:
// pages whose shared text a test decides word for word.
func wordSource(seed uint64) (words func(n int) []string, join func(parts ...[]string) string) {
	join = func(parts ...[]string) string { return strings.Join(slices.Concat(parts...), " ") }
	return synth.Words(seed), join
}

// writeRecords writes recs as JSON lines to a file of a temporary folder
// and returns its path: the input a scan test gives neardup.
func writeRecords(t *testing.T, recs []map[string]string) string {
	t.Helper()
	var in strings.Builder
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		in.Write(line)
		in.WriteByte('\n')
	}
	file := filepath.Join(t.TempDir(), "pages.jsonl")
	if err := os.WriteFile(file, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}
