package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// The demo decides its planted crawl end to end: every planted kind is
// found with recall 1 and precision 1, and the malformed records are all
// dead-lettered.
func TestDemo(t *testing.T) {
	var out, errb bytes.Buffer
	if err := runDemo(context.Background(), []string{"--docs", "1500"}, &out, &errb); err != nil {
		t.Fatalf("demo: %v\n%s\n%s", err, out.String(), errb.String())
	}
	s := out.String()
	for _, kind := range []string{"exact", "near", "partial"} {
		row := regexp.MustCompile(`(?m)^\s*` + kind + `\s+(\d+)\s+(\d+)\s+(\d+)\s+1\.000\s+1\.000$`).FindStringSubmatch(s)
		if row == nil || row[1] != row[3] || row[1] == "0" {
			t.Errorf("%s: not every planted duplicate found with precision 1:\n%s", kind, s)
		}
	}
	if !strings.Contains(s, "dead letters: 5 of 5") || !strings.Contains(s, "0 reported pairs were not planted") {
		t.Errorf("demo output:\n%s", s)
	}
}
