package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/kafkatest"
)

// TestExitCodeRows holds README "Exit codes" row by row for every command:
// 0 done (and -h), 1 the run failed, 2 bad usage or configuration
// reported before anything runs, 130 scan interrupted. Rows that need a
// long run are held by the tests named in want's comments: scan 130
// (TestScanInterrupt), serve 0 after SIGTERM (TestServeCommandEnvOnlyAndSIGTERM),
// demo 0 (TestDemo), eval 0 (TestEvalCommand); TestExitCodeRowsCovered
// checks that every command has a row of each code it can exit with.
func TestExitCodeRows(t *testing.T) {
	contractTest(t)
	redisAddr := redistest.StartServer(t)
	cl := kafkatest.Start(t, kafkatest.Topic("crawl", 1), kafkatest.Topic("neardup.events", 1), kafkatest.Topic("neardup.dead-letters", 1))
	dir := t.TempDir()
	docs := filepath.Join("..", "..", "examples", "docs")
	a, b := filepath.Join(docs, "03-orchard-study.txt"), filepath.Join(docs, "04-orchard-study-in-digest.txt")
	missing := filepath.Join(dir, "missing")
	empty := filepath.Join(dir, "empty.txt")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	noDir := filepath.Join(empty, "out") // under a file: no directory can be made there
	redisURL := "redis://" + redisAddr
	down := []string{"--index", "redis://127.0.0.1:1", "--index.timeout=200ms", "--index.retry=200ms"}
	// A namespace stored with other sketch parameters: serve cannot use it
	// and says why (exit 1, not retried).
	if code, _, errOut := neardup(t, "scan", "--quiet", "--index", redisURL, "--index.namespace", "k64", "--sketch.k=64", a); code != exitOK {
		t.Fatalf("scan into k64: exit %d: %s", code, errOut)
	}
	serveEnv := []string{"NEARDUP_KAFKA_BROKERS", cl.Brokers, "NEARDUP_KAFKA_INPUT_TOPIC", "crawl", "NEARDUP_HTTP_ADDR", "127.0.0.1:0", "NEARDUP_HTTP_ADMIN_ADDR", ""}
	rows := []struct {
		cmd  string
		code int
		env  []string
		args []string
		out  string // a substring of stdout+stderr
		w    *failWriter
	}{
		{"demo", exitOK, nil, []string{"-h"}, "Usage: neardup demo", nil},
		{"demo", exitError, nil, []string{"--docs", "20", "--index", "redis://127.0.0.1:1"}, "unavailable", nil},
		{"demo", exitUsage, nil, []string{"--docs", "5"}, "--docs >= 10", nil},
		{"serve", exitOK, nil, []string{"-h"}, "Usage: neardup serve", nil},
		{"serve", exitError, append(serveEnv, "NEARDUP_INDEX_URL", redisURL, "NEARDUP_INDEX_NAMESPACE", "k64"), nil, "parameters", nil},
		{"serve", exitUsage, nil, nil, "kafka.brokers is required", nil},
		{"scan", exitOK, nil, []string{"--quiet", docs}, `"kind":"exact"`, nil},
		{"scan", exitOK, nil, []string{"-h"}, "Usage: neardup scan", nil},
		{"scan", exitError, nil, append(down, a), "unavailable", nil},
		{"scan", exitUsage, nil, []string{missing}, "no such file", nil},
		{"check", exitOK, nil, []string{"--quiet", "--from", a, b}, `"not_stored":true`, nil},
		{"check", exitOK, nil, []string{"-h"}, "Usage: neardup check", nil},
		{"check", exitError, nil, append(down, a), "unavailable", nil},
		{"check", exitUsage, nil, []string{missing}, "no such file", nil},
		{"delete", exitOK, nil, []string{"--quiet", "--index", redisURL, "--index.namespace", "k64", "--sketch.k=64", "nothing-stored"}, `"not_found":true`, nil},
		{"delete", exitOK, nil, []string{"-h"}, "Usage: neardup delete", nil},
		{"delete", exitError, nil, append(down, "x"), "unavailable", nil},
		{"delete", exitUsage, nil, []string{"--index", "memory", "x"}, "names a Redis index", nil},
		{"compare", exitOK, nil, []string{a, b}, "verdict", nil},
		{"compare", exitOK, nil, []string{"-h"}, "Usage: neardup compare", nil},
		{"compare", exitError, nil, []string{"--html", noDir, a, b}, "not a directory", nil},
		{"compare", exitUsage, nil, []string{a, missing}, "no such file", nil},
		{"compare", exitUsage, nil, []string{empty, empty}, "compare needs text in both files", nil},
		{"lexicon", exitOK, nil, []string{"build", "-o", filepath.Join(dir, "lex.txt"), a, b}, "", nil},
		{"lexicon", exitOK, nil, []string{"build", "-h"}, "-min-df", nil},
		{"lexicon", exitError, nil, []string{"build", "-o", noDir, a}, "not a directory", nil},
		{"lexicon", exitUsage, nil, []string{"build", missing}, "no such file", nil},
		{"config", exitOK, nil, []string{"example"}, "verify:", nil},
		{"config", exitOK, nil, []string{"check", "-h"}, "Usage: neardup config check", nil},
		{"config", exitError, nil, []string{"example"}, "write failed", &failWriter{}},
		{"config", exitError, nil, []string{"check"}, "write failed", &failWriter{}},
		{"config", exitUsage, nil, []string{"check", missing}, "no such file", nil},
		{"bench", exitOK, nil, []string{"corpus", "--corpus", "generated", "--docs", "20", "--out", filepath.Join(dir, "c.jsonl")}, "c.truth.jsonl", nil},
		{"bench", exitOK, nil, []string{"serve", "-h"}, "Usage: neardup bench serve", nil},
		{"bench", exitError, nil, []string{"corpus", "--corpus", "generated", "--docs", "20", "--out", noDir + ".jsonl"}, "not a directory", nil},
		{"bench", exitUsage, nil, []string{"serve", "--corpus", "nonsense"}, "nonsense", nil},
		{"eval", exitOK, nil, []string{"-h"}, "Usage: neardup eval", nil},
		{"eval", exitError, nil, []string{"--data", dir}, "none of the evaluation sets", nil},
		{"eval", exitUsage, nil, []string{"--sets", "nosuchset"}, "unknown set", nil},
		{"version", exitOK, nil, nil, "neardup ", nil},
		{"version", exitError, nil, nil, "write failed", &failWriter{}},
		{"version", exitUsage, nil, []string{"extra"}, "unexpected arguments", nil},
	}
	// Every command has a row of each code README's table gives it; the
	// rows held by longer tests elsewhere are named here, and their tests
	// must exist.
	have := map[string]bool{}
	for _, r := range rows {
		have[fmt.Sprintf("%s %d", r.cmd, r.code)] = true
	}
	for row, test := range map[string]string{"scan 130": "TestScanInterrupt", "serve 0": "TestServeCommandEnvOnlyAndSIGTERM", "demo 0": "TestDemo", "eval 0": "TestEvalCommand"} {
		if !testExists(t, test) {
			t.Errorf("row %s: no test %s", row, test)
		}
		have[row+" (run)"] = true
	}
	for _, c := range commands() {
		for _, code := range []int{exitOK, exitError, exitUsage} {
			if !have[fmt.Sprintf("%s %d", c.name, code)] {
				t.Errorf("no row for neardup %s exiting %d", c.name, code)
			}
		}
	}
	if !have["scan 130 (run)"] {
		t.Error("no row for scan exiting 130")
	}
	for _, tt := range rows {
		name := fmt.Sprintf("%s %s exit %d", tt.cmd, strings.Join(tt.args, " "), tt.code)
		t.Run(name, func(t *testing.T) {
			for i := 0; i < len(tt.env); i += 2 {
				t.Setenv(tt.env[i], tt.env[i+1])
			}
			var o, e bytes.Buffer
			var stdout interface{ Write([]byte) (int, error) } = &o
			if tt.w != nil {
				stdout = tt.w
			}
			code := run(context.Background(), append([]string{tt.cmd}, tt.args...), stdout, &e)
			if code != tt.code || !strings.Contains(o.String()+e.String(), tt.out) {
				t.Errorf("neardup %s: exit %d (want %d), output lacks %q:\n%.1500s%.1500s", name, code, tt.code, tt.out, o.String(), e.String())
			}
		})
	}
}

// testExists reports whether a test function of this package is defined.
func testExists(t *testing.T, name string) bool {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "\nfunc "+name+"(t *testing.T) {") {
			return true
		}
	}
	return false
}
