package service

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/poll"
	"github.com/neardup/neardup/internal/synth"
	"github.com/neardup/neardup/pipeline"
)

// Issue 24, point 5: Redis restarted without persistence mid-stream. The
// member notices that the index it wrote to is gone and stops deciding:
// no event for the documents that arrive meanwhile (a planted copy of an
// earlier document is not reported unique), nothing committed past them,
// /readyz 503 naming the loss, neardup_index_lost 1. It resumes only when
// told (POST /admin/accept-empty-index), and then decides against the
// empty index.
func TestServeIndexLost(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{}) // --save "" --appendonly no
	cl := startKafka(t, 3)
	c := loadConfig(t, cl.Brokers, "index.url", "redis://"+srv.Addr+"/0?namespace=lost", "index.timeout", "500ms")
	in := start(t, c, openStore(t, c))
	in.waitReady(t, http.StatusOK, 30*time.Second)
	if v := counterValue(t, in.reg, "neardup_index_lost", ""); v != 0 {
		t.Errorf("neardup_index_lost %v before any loss", v)
	}
	if code, _ := in.post(t, AcceptEmptyPath); code != http.StatusConflict {
		t.Errorf("POST %s with the index in place: %d, want 409", AcceptEmptyPath, code)
	}

	docs := synth.Corpus(synth.Config{Docs: 300, Seed: 31, Contain: true})
	cl.Produce(t, inTopic, docMessages(t, docs)...)
	waitEvents(t, cl, idsOf(docs), time.Minute)

	srv.Restart() // empty: the server had no persistence
	// New documents, among them exact copies of earlier originals: against
	// the recreated (empty) namespace they would read as unique.
	later := synth.Corpus(synth.Config{Docs: 100, Seed: 32, Contain: true})
	for i := range later {
		later[i].ID = "later-" + later[i].ID
		if later[i].Source != "" {
			later[i].Source = "later-" + later[i].Source
		}
	}
	var copies []string
	for _, d := range docs {
		if d.Kind == synth.Original && len(copies) < 5 {
			later = append(later, synth.Doc{ID: "again-" + d.ID, Text: d.Text, Kind: synth.Exact, Source: d.ID})
			copies = append(copies, "again-"+d.ID)
		}
	}
	cl.Produce(t, inTopic, docMessages(t, later)...)

	waitLost(t, in, 30*time.Second)
	waitGauge(t, in, "neardup_index_lost", 1, 10*time.Second)
	if v := counterValue(t, in.reg, "neardup_ready", ""); v != 0 {
		t.Errorf("neardup_ready %v while the index is lost", v)
	}
	// The sleep is the scenario: no condition marks "nothing was decided",
	// so a wrong decision is given two seconds to show.
	time.Sleep(2 * time.Second)
	isLater := map[string]bool{}
	for _, id := range idsOf(later) {
		isLater[id] = true
	}
	for _, ev := range decodeEvents(t, cl.ReadAll(t, outTopic)) {
		if isLater[ev.ID] {
			t.Errorf("%s decided (%s) while the index was lost", ev.ID, ev.Kind)
		}
	}
	offsets := offsetsOf(t, cl)
	checkCommittedCovered(t, cl, "neardup-test", offsets)
	if code, body := in.httpGet(t, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "index lost") {
		t.Errorf("/readyz %d %q 2s later: the loss is forgotten", code, body)
	}
	if code, _ := httpDo(t, http.MethodGet, in.AdminAddr(), AcceptEmptyPath, nil); code != http.StatusMethodNotAllowed {
		t.Errorf("GET %s: %d, want 405", AcceptEmptyPath, code)
	}

	if code, body := in.post(t, AcceptEmptyPath); code != http.StatusOK {
		t.Fatalf("POST %s while lost: %d %q", AcceptEmptyPath, code, body)
	}
	in.waitReady(t, http.StatusOK, 30*time.Second)
	if v := counterValue(t, in.reg, "neardup_index_lost", ""); v != 0 {
		t.Errorf("neardup_index_lost %v after the loss was accepted", v)
	}
	evs := waitEvents(t, cl, idsOf(later), time.Minute)
	first := firstVerdicts(t, evs)
	// Accepted: decided against the empty index, so the copies of the
	// documents stored before are new; the later corpus's own duplicates
	// are found.
	for _, id := range copies {
		if first[id].Kind != pipeline.KindUnique {
			t.Errorf("%s after accepting the empty index: %+v, want unique", id, first[id])
		}
	}
	checkPlanted(t, later[:len(later)-len(copies)], first)

	// Lost again with no document arriving: the health check finds it.
	srv.Restart()
	waitLost(t, in, 30*time.Second)
	waitGauge(t, in, "neardup_index_lost", 1, 10*time.Second)
	if code, body := in.post(t, AcceptEmptyPath); code != http.StatusOK {
		t.Fatalf("POST %s while lost: %d %q", AcceptEmptyPath, code, body)
	}
	in.waitReady(t, http.StatusOK, 30*time.Second)
	if err := in.stop(t); err != nil {
		t.Fatal(err)
	}
	checkCommittedCovered(t, cl, "neardup-test", offsetsOf(t, cl))
}

// post sends an empty POST to an endpoint of in.
func (in *instance) post(t testing.TB, path string) (int, string) {
	t.Helper()
	resp, err := http.Post("http://"+in.AdminAddr()+path, "text/plain", nil)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitLost waits until /readyz answers 503 naming the loss of the index
// (it may name the index unavailable first, while the server restarts).
func waitLost(t testing.TB, in *instance, timeout time.Duration) {
	t.Helper()
	poll.Until(t, timeout, func() error {
		code, body := in.httpGet(t, "/readyz")
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "not ready: index lost: ") {
			return fmt.Errorf("/readyz %d %q, want 503 naming the lost index", code, body)
		}
		return nil
	})
}

// waitGauge waits until the gauge name of in is want.
func waitGauge(t testing.TB, in *instance, name string, want float64, timeout time.Duration) {
	t.Helper()
	poll.Until(t, timeout, func() error {
		if v := counterValue(t, in.reg, name, ""); v != want {
			return fmt.Errorf("%s %v, want %v", name, v, want)
		}
		return nil
	})
}

// Two members over one index, both finding it lost: the loss accepted on
// one, the other finds the namespace again and resumes by itself. With
// index.accept_empty a member accepts a loss at once and never stops.
func TestServeIndexLostMembers(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	cl := startKafka(t, 4)
	url := "redis://" + srv.Addr + "/0?namespace=members"
	c := loadConfig(t, cl.Brokers, "index.url", url, "index.timeout", "500ms")
	a := start(t, c, openStore(t, c))
	b := start(t, c, openStore(t, c))
	a.waitReady(t, http.StatusOK, 30*time.Second)
	b.waitReady(t, http.StatusOK, 30*time.Second)
	docs := synth.Corpus(synth.Config{Docs: 100, Seed: 33})
	cl.Produce(t, inTopic, docMessages(t, docs)...)
	waitEvents(t, cl, idsOf(docs), time.Minute)

	srv.Restart()
	waitLost(t, a, 30*time.Second)
	waitLost(t, b, 30*time.Second)
	if code, body := a.post(t, AcceptEmptyPath); code != http.StatusOK {
		t.Fatalf("POST %s on a: %d %q", AcceptEmptyPath, code, body)
	}
	a.waitReady(t, http.StatusOK, 30*time.Second)
	b.waitReady(t, http.StatusOK, 30*time.Second)
	waitGauge(t, b, "neardup_index_lost", 0, 10*time.Second)
	later := synth.Corpus(synth.Config{Docs: 100, Seed: 34})
	for i := range later {
		later[i].ID = "later-" + later[i].ID
	}
	cl.Produce(t, inTopic, docMessages(t, later)...)
	waitEvents(t, cl, idsOf(later), time.Minute)
	for _, in := range []*instance{a, b} {
		if err := in.stop(t); err != nil {
			t.Fatal(err)
		}
	}

	// index.accept_empty: the loss is accepted at once.
	ca := loadConfig(t, cl.Brokers, "index.url", url, "index.timeout", "500ms", "index.accept_empty", "true")
	d := start(t, ca, openStore(t, ca))
	d.waitReady(t, http.StatusOK, 30*time.Second)
	srv.Restart()
	last := synth.Corpus(synth.Config{Docs: 50, Seed: 35})
	for i := range last {
		last[i].ID = "last-" + last[i].ID
	}
	cl.Produce(t, inTopic, docMessages(t, last)...)
	waitEvents(t, cl, idsOf(last), time.Minute)
	if v := counterValue(t, d.reg, "neardup_index_lost", ""); v != 0 {
		t.Errorf("neardup_index_lost %v with index.accept_empty", v)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}
