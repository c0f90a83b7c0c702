//go:build !nodev

package main

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/dataset"
)

// The demo decides its planted crawl end to end: every planted kind is
// found with recall 1 and precision 1 (a copy keyed as its original, so
// no original is decided after a copy: docs/operations.md, "Keying
// records"), and the malformed records are all dead-lettered.
func TestDemo(t *testing.T) {
	// The race run (-short, make race) decides a smaller crawl through the
	// same pipeline; make unit the 1500 documents.
	docs := "1500"
	if testing.Short() {
		docs = "500"
	}
	var out, errb bytes.Buffer
	if err := runDemo(context.Background(), []string{"--docs", docs}, &out, &errb); err != nil {
		t.Fatalf("demo: %v\n%s\n%s", err, out.String(), errb.String())
	}
	s := out.String()
	for _, kind := range []string{"exact", "near", "partial"} {
		row := regexp.MustCompile(`(?m)^\s*` + kind + `\s+(\d+)\s+(\d+)\s+(\d+)\s+1\.000\s+1\.000$`).FindStringSubmatch(s)
		if row == nil || row[1] != row[3] || row[1] == "0" {
			t.Errorf("%s: not every planted duplicate found with precision 1:\n%s", kind, s)
		}
	}
	if !strings.Contains(s, "dead letters: 5 of 5") || !strings.Contains(s, "0 reported pairs were not planted") ||
		!strings.Contains(s, "originals decided after a copy of theirs (first seen is first decided): 0\n") {
		t.Errorf("demo output:\n%s", s)
	}
}

// Against Redis the demo writes its synthetic crawl into a namespace of its
// own, new for each run, never into the service's default namespace
// (index.namespace "neardup"), unless --namespace names one; and the
// clean-up command it prints removes that namespace from that server (a
// non-default port and database here), run as printed, and nothing else.
// On main the command named no server, so it ran against localhost:6379.
func TestDemoRedisNamespace(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo against redis-server")
	}
	if _, err := exec.LookPath("redis-cli"); err != nil {
		dataset.Missing(t, "redis-cli (Debian's redis-tools, make deps) runs the printed clean-up command")
	}
	addr := redistest.StartServer(t)
	rc := redis.NewClient(&redis.Options{Addr: addr, DB: 2})
	defer rc.Close()
	ctx := context.Background()
	if err := rc.Set(ctx, "someone-else:key", "kept", 0).Err(); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := runDemo(ctx, []string{"--docs", "60", "--index", "redis://" + addr + "/2"}, &out, &errb); err != nil {
		t.Fatalf("demo: %v\n%s\n%s", err, out.String(), errb.String())
	}
	m := regexp.MustCompile(`(?m)namespace "(neardup-demo-[^"]+)" \(remove it afterwards: (.+)\)$`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("demo does not name its namespace and its clean-up:\n%s", out.String())
	}
	ns, cleanup := m[1], m[2]
	keys, err := rc.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) < 2 {
		t.Fatal("the demo wrote no keys")
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, ns+":") && k != "someone-else:key" {
			t.Fatalf("key %q outside the demo's namespace %s", k, ns)
		}
	}
	if out, err := exec.Command("sh", "-c", cleanup).CombinedOutput(); err != nil {
		t.Fatalf("the printed clean-up %q: %v\n%s", cleanup, err, out)
	}
	if keys, err = rc.Keys(ctx, "*").Result(); err != nil || len(keys) != 1 || keys[0] != "someone-else:key" {
		t.Errorf("after the printed clean-up %q the server holds %d keys (%.5q), want only someone-else:key", cleanup, len(keys), keys)
	}

	// Named explicitly, the namespace is used as given.
	out.Reset()
	if err := runDemo(ctx, []string{"--docs", "20", "--index", "redis://" + addr, "--namespace", "mine"}, &out, &errb); err != nil {
		t.Fatalf("demo --namespace: %v\n%s", err, errb.String())
	}
	rc0 := redis.NewClient(&redis.Options{Addr: addr})
	defer rc0.Close()
	if n, err := rc0.Keys(ctx, "mine:*").Result(); err != nil || len(n) == 0 {
		t.Errorf("--namespace mine: %d keys, %v", len(n), err)
	}
}

// The clean-up command names the server of every form of index URL, and
// never a password.
func TestCleanupCommand(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"redis://10.0.0.5:6380", "redis-cli -h 10.0.0.5 -p 6380 --scan --pattern 'ns:*' | xargs -r redis-cli -h 10.0.0.5 -p 6380 unlink"},
		{"redis://cache/3", "redis-cli -h cache -p 6379 -n 3 --scan --pattern 'ns:*' | xargs -r redis-cli -h cache -p 6379 -n 3 unlink"},
		{"rediss://app:s3cret@cache:6390", "REDISCLI_AUTH=PASSWORD redis-cli -h cache -p 6390 --tls --user app --scan --pattern 'ns:*' | REDISCLI_AUTH=PASSWORD xargs -r redis-cli -h cache -p 6390 --tls --user app unlink"},
		{"redis://:s3cret@cache:6390", "REDISCLI_AUTH=PASSWORD redis-cli -h cache -p 6390 --scan"},
		{"redis+cluster://a:7000,b:7001", "on every master of the cluster: redis-cli -h a -p 7000 --scan --pattern 'ns:*' | xargs -r redis-cli -c -h a -p 7000 unlink"},
	} {
		got := cleanupCommand(tt.url, "ns")
		if !strings.HasPrefix(got, tt.want) || strings.Contains(got, "s3cret") {
			t.Errorf("%s: %q, want %q", tt.url, got, tt.want)
		}
	}
}
