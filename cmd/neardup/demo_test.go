package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index/redistest"
)

// The demo decides its planted crawl end to end: every planted kind is
// found with recall 1 and precision 1, and the malformed records are all
// dead-lettered.
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
	if !strings.Contains(s, "dead letters: 5 of 5") || !strings.Contains(s, "0 reported pairs were not planted") {
		t.Errorf("demo output:\n%s", s)
	}
}

// Against Redis the demo writes its synthetic crawl into a namespace of its
// own, new for each run, never into the service's default namespace
// (index.namespace "neardup"), unless --namespace names one.
func TestDemoRedisNamespace(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo against redis-server")
	}
	addr := redistest.StartServer(t)
	rc := redis.NewClient(&redis.Options{Addr: addr})
	defer rc.Close()
	ctx := context.Background()
	var out, errb bytes.Buffer
	if err := runDemo(ctx, []string{"--docs", "60", "--index", "redis://" + addr}, &out, &errb); err != nil {
		t.Fatalf("demo: %v\n%s\n%s", err, out.String(), errb.String())
	}
	ns := regexp.MustCompile(`namespace "(neardup-demo-[^"]+)" \(remove it afterwards: redis-cli --scan --pattern '(neardup-demo-[^']+):\*' \| xargs redis-cli unlink\)`).FindStringSubmatch(out.String())
	if ns == nil || ns[1] != ns[2] {
		t.Fatalf("demo does not name its namespace:\n%s", out.String())
	}
	keys, err := rc.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Fatal("the demo wrote no keys")
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, ns[1]+":") {
			t.Fatalf("key %q outside the demo's namespace %s", k, ns[1])
		}
	}

	// Named explicitly, the namespace is used as given.
	out.Reset()
	if err := runDemo(ctx, []string{"--docs", "20", "--index", "redis://" + addr, "--namespace", "mine"}, &out, &errb); err != nil {
		t.Fatalf("demo --namespace: %v\n%s", err, errb.String())
	}
	if n, err := rc.Keys(ctx, "mine:*").Result(); err != nil || len(n) == 0 {
		t.Errorf("--namespace mine: %d keys, %v", len(n), err)
	}
}
