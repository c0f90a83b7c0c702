package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/kafkatest"
	"github.com/neardup/neardup/internal/synth"
)

// Issue 24, point 6: with Redis down at start, serve exited 1 at once,
// though index.retry says serve retries forever and reports not ready.
// Now it waits: /healthz 200, /readyz 503 naming what it waits for, and
// once Redis is back it starts, decides the documents, and exits 0 on
// SIGTERM. Every log line is JSON, go-redis's included.
func TestServeCommandWaitsForIndexAtStart(t *testing.T) {
	redis := redistest.Start(t, redistest.Options{})
	redis.Kill()
	cl := kafkatest.Start(t, kafkatest.Topic("crawl", 3), kafkatest.Topic("neardup.events", 3), kafkatest.Topic("neardup.dead-letters", 1))
	docs := synth.Corpus(synth.Config{Docs: 50, Seed: 9})
	produceDocs(t, cl, "crawl", docs)

	cmd := asCommand(t, []string{
		"NEARDUP_KAFKA_BROKERS=" + cl.Brokers, "NEARDUP_KAFKA_INPUT_TOPIC=crawl", "NEARDUP_HTTP_ADDR=127.0.0.1:0", "NEARDUP_HTTP_ADMIN_ADDR=127.0.0.1:0",
		"NEARDUP_PIPELINE_EMIT=all", "NEARDUP_INDEX_URL=redis://" + redis.Addr + "/0", "NEARDUP_INDEX_TIMEOUT=500ms",
	}, "serve")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan map[string]any, 1000)
	var all []string
	go func() { // owned: ends when the process closes stderr
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var rec map[string]any
			_ = json.Unmarshal(sc.Bytes(), &rec)
			all = append(all, sc.Text())
			lines <- rec
		}
		close(lines)
	}()
	// waitLog returns the first log record with msg starting with prefix.
	waitLog := func(prefix string) map[string]any {
		t.Helper()
		for {
			select {
			case rec, ok := <-lines:
				if !ok {
					t.Fatalf("serve exited while waiting for %q", prefix)
				}
				if m, _ := rec["msg"].(string); strings.HasPrefix(m, prefix) {
					return rec
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("no log %q in 30s", prefix)
			}
		}
	}
	rec := waitLog("neardup serve waiting for its dependencies")
	addr, _ := rec["http"].(string)
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz %d while waiting", code)
	}
	if code, body := get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "starting") {
		t.Errorf("/readyz %d %q while waiting, want 503 naming what it waits for", code, body)
	}

	redis.Restart()
	waitLog("neardup serve starting")
	if got := cl.WaitFor(t, "neardup.events", len(docs), time.Minute, nil); len(got) < len(docs) {
		t.Fatalf("%d events for %d documents", len(got), len(docs))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, strings.Join(all, "\n"))
	}
	// go-redis's own log lines (failed dials while Redis was away) go
	// through the service's JSON logger too.
	for _, l := range all {
		if !json.Valid([]byte(l)) {
			t.Errorf("log line is not JSON: %q", l)
		}
	}
}

// probe is one GET of /healthz.
type probe struct {
	at time.Time
	ok bool
}

// /healthz answers from the moment serve listens until it exits, without
// a gap: while it waits for a missing topic (kafka.create_topics off: the
// docs' promise is that serve retries, 1 s doubling, with /healthz 200
// and /readyz 503 "not ready: starting: …" naming what it waits for),
// across every retry, when the service takes over, and while it drains
// after SIGTERM. On main the start-up endpoint was closed during each
// attempt: 31 of 182 probes in 10 s were refused.
func TestServeHealthzWithoutGaps(t *testing.T) {
	cl := kafkatest.Start(t, kafkatest.Topic("crawl", 3), kafkatest.Topic("neardup.events", 3))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := asCommand(t, []string{
		"NEARDUP_KAFKA_BROKERS=" + cl.Brokers, "NEARDUP_KAFKA_INPUT_TOPIC=crawl", "NEARDUP_HTTP_ADDR=" + addr, "NEARDUP_HTTP_ADMIN_ADDR=",
		"NEARDUP_PIPELINE_EMIT=all",
	}, "serve")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: time.Second}
	get := func(path string) (int, string) {
		resp, err := client.Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var probes []probe
	stopProbes, probed := make(chan struct{}), make(chan struct{})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	go func() { // owned: ends when stopProbes closes
		defer close(probed)
		for {
			select {
			case <-stopProbes:
				return
			case <-time.After(5 * time.Millisecond):
			}
			code, _ := get("/healthz")
			probes = append(probes, probe{time.Now(), code == http.StatusOK})
		}
	}()
	lines := logLines(stderr)
	waitLog := func(prefix string) {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("serve exited while waiting for %q", prefix)
				}
				var rec struct{ Msg string }
				_ = json.Unmarshal([]byte(l), &rec)
				if strings.HasPrefix(rec.Msg, prefix) {
					return
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("no log %q in 30s", prefix)
			}
		}
	}
	waitLog("dependency unavailable at start; retrying")
	if code, body := get("/readyz"); code != http.StatusServiceUnavailable ||
		!strings.Contains(body, `not ready: starting: `) || !strings.Contains(body, `"neardup.dead-letters" does not exist`) {
		t.Errorf("/readyz while the topic is missing: %d %q, want 503 naming the topic", code, body)
	}
	waitLog("dependency unavailable at start; retrying") // a retry: the second attempt failed too
	cl.CreateTopic(t, "neardup.dead-letters", 1)
	waitLog("neardup serve starting")
	docs := synth.Corpus(synth.Config{Docs: 20, Seed: 3})
	produceDocs(t, cl, "crawl", docs)
	if got := cl.WaitFor(t, "neardup.events", len(docs), 30*time.Second, nil); len(got) < len(docs) {
		t.Fatalf("%d events for %d documents", len(got), len(docs))
	}
	if code, body := get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after start: %d %q", code, body)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
	close(stopProbes)
	<-probed
	// Refused only before serve first listened and after it exited.
	first, last := -1, -1
	for i, p := range probes {
		if p.ok {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		t.Fatal("/healthz never answered")
	}
	gaps := 0
	for _, p := range probes[first:last] {
		if !p.ok {
			gaps++
		}
	}
	if gaps > 0 || last-first < 100 {
		t.Errorf("/healthz failed %d of %d probes between its first and last answer (%v)", gaps, last-first+1, probes[last].at.Sub(probes[first].at).Round(time.Millisecond))
	}
}
