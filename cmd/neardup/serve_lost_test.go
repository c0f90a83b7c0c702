package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/kafkatest"
	"github.com/neardup/neardup/internal/poll"
	"github.com/neardup/neardup/internal/synth"
)

// Issue 24, point 5, at start: Redis restarted without its data while no
// member ran. A member started while the consumer group has committed
// offsets knows the index existed: it does not recreate it and decides
// nothing (/readyz 503 naming the loss, neardup_index_lost 1 on
// /metrics, no event) until told: POST /admin/accept-empty-index, or
// index.accept_empty=true at start.
func TestServeCommandIndexLostAtStart(t *testing.T) {
	redis := redistest.Start(t, redistest.Options{}) // no persistence
	cl := kafkatest.Start(t, kafkatest.Topic("crawl", 3), kafkatest.Topic("neardup.events", 3), kafkatest.Topic("neardup.dead-letters", 1))
	// A fixed address: the start-up endpoint is bound again at each attempt.
	addr, admin := freeAddr(t), freeAddr(t)
	env := []string{
		"NEARDUP_KAFKA_BROKERS=" + cl.Brokers, "NEARDUP_KAFKA_INPUT_TOPIC=crawl", "NEARDUP_HTTP_ADDR=" + addr, "NEARDUP_HTTP_ADMIN_ADDR=" + admin,
		"NEARDUP_PIPELINE_EMIT=all", "NEARDUP_INDEX_URL=redis://" + redis.Addr + "/0", "NEARDUP_INDEX_TIMEOUT=500ms",
		"NEARDUP_KAFKA_COMMIT_INTERVAL=100ms",
	}
	produce := func(prefix string, seed uint64, again []synth.Doc) []synth.Doc {
		docs := synth.Corpus(synth.Config{Docs: 40, Seed: seed})
		for i := range docs {
			docs[i].ID = prefix + docs[i].ID
		}
		for _, d := range again { // exact copies of earlier documents
			docs = append(docs, synth.Doc{ID: prefix + "again-" + d.ID, Text: d.Text})
		}
		produceDocs(t, cl, "crawl", docs)
		return docs
	}
	events := func() int { return len(cl.ReadAll(t, "neardup.events")) }

	// A first run decides and commits.
	first := produce("a-", 41, nil)
	p := startServe(t, env)
	p.waitLog("neardup serve starting")
	cl.WaitFor(t, "neardup.events", len(first), time.Minute, nil)
	p.stop()
	if len(cl.Committed(t, "neardup", "crawl")) == 0 {
		t.Fatal("no committed offsets after the first run")
	}

	// Redis loses everything; a member starts: nothing is decided.
	redis.Restart()
	second := produce("b-", 42, first[:3])
	p = startServe(t, env)
	p.waitLog("neardup serve waiting for its dependencies")
	rec := p.waitLog("index lost at start")
	if code, body := httpDo(t, "GET", addr, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "index lost") {
		t.Errorf("/readyz %d %q with the index lost, want 503 naming the loss", code, body)
	}
	if _, body := httpDo(t, "GET", addr, "/metrics"); !strings.Contains(body, "\nneardup_index_lost 1\n") {
		t.Errorf("/metrics with the index lost has no neardup_index_lost 1:\n%s", body)
	}
	if msg, _ := rec["err"].(string); !strings.Contains(msg, "stored documents are gone") {
		t.Errorf("log of the loss: %v", rec)
	}
	// The sleep is the scenario: no condition marks "nothing was decided",
	// so a wrong decision is given two seconds to show.
	time.Sleep(2 * time.Second)
	if n := events(); n != len(first) {
		t.Errorf("%d events with the index lost, want the first run's %d", n, len(first))
	}
	// Restarting does not forget it.
	p.stop()
	p = startServe(t, env)
	p.waitLog("index lost at start")
	if n := events(); n != len(first) {
		t.Errorf("%d events after a restart with the index lost, want %d", n, len(first))
	}
	// Accepted on the member: it starts with an empty index and decides.
	if code, _ := httpDo(t, "POST", addr, "/admin/accept-empty-index"); code == http.StatusOK {
		t.Errorf("POST /admin/accept-empty-index on http.addr accepted")
	}
	if code, body := httpDo(t, "POST", admin, "/admin/accept-empty-index"); code != http.StatusOK {
		t.Fatalf("POST /admin/accept-empty-index: %d %q", code, body)
	}
	p.waitLog("neardup serve starting")
	cl.WaitFor(t, "neardup.events", len(first)+len(second), time.Minute, nil)
	p.stop()

	// Lost again; index.accept_empty=true starts at once on an empty index.
	redis.Restart()
	third := produce("c-", 43, second[:3])
	p = startServe(t, append(env, "NEARDUP_INDEX_ACCEPT_EMPTY=true"))
	p.waitLog("neardup serve starting")
	cl.WaitFor(t, "neardup.events", len(first)+len(second)+len(third), time.Minute, nil)
	p.stop()
	for _, l := range p.lines {
		if strings.Contains(l, "index lost at start") {
			t.Errorf("index.accept_empty=true: %s", l)
		}
	}
}

// serveProc is a neardup serve process whose JSON log is read line by
// line.
type serveProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	recs  chan map[string]any // closed when stderr closes
	lines []string            // every line, once recs is closed
}

// startServe starts neardup serve with env.
func startServe(t *testing.T, env []string) *serveProc {
	t.Helper()
	p := &serveProc{t: t, cmd: asCommand(t, env, "serve"), recs: make(chan map[string]any, 1000)}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	go func() { // owned: ends when the process closes stderr
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var rec map[string]any
			_ = json.Unmarshal(sc.Bytes(), &rec)
			p.lines = append(p.lines, sc.Text())
			p.recs <- rec
		}
		close(p.recs)
	}()
	return p
}

// waitLog returns the next log record whose msg starts with prefix.
func (p *serveProc) waitLog(prefix string) map[string]any {
	p.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case rec, ok := <-p.recs:
			if !ok {
				p.t.Fatalf("serve exited while waiting for %q", prefix)
			}
			if m, _ := rec["msg"].(string); strings.HasPrefix(m, prefix) {
				return rec
			}
		case <-timeout:
			p.t.Fatalf("no log %q in 30s", prefix)
		}
	}
}

// stop sends SIGTERM and expects exit 0.
func (p *serveProc) stop() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatal(err)
	}
	for range p.recs {
	}
	if err := p.cmd.Wait(); err != nil {
		p.t.Errorf("exit after SIGTERM: %v\n%s", err, strings.Join(p.lines, "\n"))
	}
}

// freeAddr returns a local address no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// httpDo sends a request without a body to addr and returns the status
// and body. A refused connection is tried again for 5 s: between start-up
// attempts the address is briefly unbound.
func httpDo(t *testing.T, method, addr, path string) (int, string) {
	t.Helper()
	var resp *http.Response
	poll.Until(t, 5*time.Second, func() error {
		req, err := http.NewRequest(method, fmt.Sprintf("http://%s%s", addr, path), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err = http.DefaultClient.Do(req)
		if err != nil && !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		return nil
	})
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
