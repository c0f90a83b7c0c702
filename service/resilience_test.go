package service

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/poll"
	"github.com/neardup/neardup/internal/synth"
)

// Scenario (c): Redis frozen mid-stream. While it is away nothing is
// decided (no event, nothing reported unique), no offset is committed past
// undecided work, /readyz answers 503; when it returns, processing resumes
// and every planted duplicate is found. A shutdown while it is frozen
// gives up at the deadline without committing undecided records.
func TestServeIndexFrozen(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	cl := startKafka(t, 3)
	c := loadConfig(t, cl.Brokers, "index.url", "redis://"+srv.Addr+"/0?namespace=frozen", "index.timeout", "500ms")
	in := start(t, c, openStore(t, c))
	in.waitReady(t, http.StatusOK, 30*time.Second)

	docs := synth.Corpus(synth.Config{Docs: 1200, Seed: 21, Contain: true})
	half := len(docs) / 2
	cl.Produce(t, inTopic, docMessages(t, docs[:half])...)
	waitEvents(t, cl, idsOf(docs[:half]), time.Minute)

	srv.Freeze()
	cl.Produce(t, inTopic, docMessages(t, docs[half:])...)
	body := in.waitReady(t, http.StatusServiceUnavailable, 30*time.Second)
	if !strings.Contains(body, "index unavailable") {
		t.Errorf("/readyz body %q does not say why", body)
	}
	// The sleep is the scenario: no condition marks "nothing was decided",
	// so the test gives a wrong decision a second to show.
	time.Sleep(time.Second)
	later := map[string]bool{}
	for _, id := range idsOf(docs[half:]) {
		later[id] = true
	}
	for _, ev := range decodeEvents(t, cl.ReadAll(t, outTopic)) {
		if later[ev.ID] {
			t.Errorf("%s decided (%s) while the index was frozen", ev.ID, ev.Kind)
		}
	}
	offsets := offsetsOf(t, cl)
	checkCommittedCovered(t, cl, "neardup-test", offsets)

	srv.Thaw()
	in.waitReady(t, http.StatusOK, 30*time.Second)
	evs := waitEvents(t, cl, idsOf(docs), 2*time.Minute)
	checkPlanted(t, docs, firstVerdicts(t, evs))
	if err := in.stop(t); err != nil {
		t.Fatal(err)
	}
	checkCommittedCovered(t, cl, "neardup-test", offsets)

	// Shutdown while frozen: the deadline passes, nothing undecided is
	// committed, and the next run decides the rest.
	more := synth.Corpus(synth.Config{Docs: 200, Seed: 22, Contain: true})
	for i := range more {
		more[i].ID = "more-" + more[i].ID
		if more[i].Source != "" {
			more[i].Source = "more-" + more[i].Source
		}
	}
	c2 := loadConfig(t, cl.Brokers, "index.url", "redis://"+srv.Addr+"/0?namespace=frozen", "index.timeout", "500ms",
		"kafka.shutdown_timeout", "1s")
	in2 := start(t, c2, openStore(t, c2))
	in2.waitReady(t, http.StatusOK, 30*time.Second)
	srv.Freeze()
	cl.Produce(t, inTopic, docMessages(t, more)...)
	// Stop once the member holds records it cannot decide.
	poll.Until(t, 30*time.Second, func() error {
		if v := counterValue(t, in2.reg, "neardup_inflight_records", ""); v == 0 {
			return errors.New("no record in flight with the index frozen")
		}
		return nil
	})
	t0 := time.Now()
	err := in2.stop(t)
	if !errors.Is(err, ErrShutdownDeadline) {
		t.Errorf("stop while frozen: %v, want ErrShutdownDeadline", err)
	}
	if d := time.Since(t0); d > 8*time.Second {
		t.Errorf("stop took %v with a 1s deadline", d)
	}
	checkCommittedCovered(t, cl, "neardup-test", offsetsOf(t, cl))
	srv.Thaw()
	in3 := start(t, c, openStore(t, c))
	evs = waitEvents(t, cl, append(idsOf(docs), idsOf(more)...), 2*time.Minute)
	checkPlanted(t, append(docs, more...), firstVerdicts(t, evs))
	if err := in3.stop(t); err != nil {
		t.Fatal(err)
	}
}

// Scenario (b): three instances in one group over one Redis index; one is
// killed mid-stream without having committed anything. Its partitions move
// to the others, every document is decided, and the records it had
// decided come back as replays repeating their first verdict.
func TestServeInstanceKilled(t *testing.T) {
	t.Parallel()
	addr := redistest.StartServer(t)
	cl := startKafka(t, 6)
	url := "redis://" + addr + "/0?namespace=killed"
	c := loadConfig(t, cl.Brokers, "index.url", url)
	victimCfg := loadConfig(t, cl.Brokers, "index.url", url, "kafka.commit_interval", "1h")
	a := start(t, c, openStore(t, c))
	victim := start(t, victimCfg, openStore(t, victimCfg))
	b := start(t, c, openStore(t, c))
	for _, in := range []*instance{a, victim, b} {
		in.waitReady(t, http.StatusOK, 30*time.Second)
	}
	n := 6000
	if testing.Short() {
		n = 1500
	}
	docs := synth.Corpus(synth.Config{Docs: n, Seed: 31, Contain: true})
	cl.Produce(t, inTopic, docMessages(t, docs)...)
	// Kill the victim once it has decided a good share of its records.
	poll.Until(t, time.Minute, func() error {
		if d := victim.docs.Load(); d < int64(n/10) {
			return fmt.Errorf("victim decided %d documents", d)
		}
		return nil
	})
	victim.Kill()
	if err := victim.stop(t); !errors.Is(err, ErrKilled) {
		t.Errorf("killed instance returned %v", err)
	}
	evs := waitEvents(t, cl, idsOf(docs), 3*time.Minute)
	first := firstVerdicts(t, evs)
	checkPlanted(t, docs, first)
	replays := 0
	for _, ev := range evs {
		if ev.Replay {
			replays++
		}
	}
	if replays == 0 {
		t.Error("no replays: the killed instance's decided records were not read again")
	}
	t.Logf("%d documents, %d events, %d replays", len(docs), len(evs), replays)
	for _, in := range []*instance{a, b} {
		if err := in.stop(t); err != nil {
			t.Fatal(err)
		}
	}
	committed := cl.Committed(t, "neardup-test", inTopic)
	total := int64(0)
	for _, off := range committed {
		total += off
	}
	if total != int64(n) {
		t.Errorf("committed %d of %d", total, n)
	}
}

// Scenario (f): an instance joins while documents are being produced and
// decided. The cooperative rebalance moves partitions without losing a
// record, and at no moment is an offset committed before its record was
// decided.
func TestServeRebalanceJoin(t *testing.T) {
	t.Parallel()
	addr := redistest.StartServer(t)
	cl := startKafka(t, 6)
	c := loadConfig(t, cl.Brokers, "index.url", "redis://"+addr+"/0?namespace=join", "kafka.max_inflight_records", "256")
	n := 6000
	if testing.Short() {
		n = 2000
	}
	docs := synth.Corpus(synth.Config{Docs: n, Seed: 41, Contain: true})
	msgs := docMessages(t, docs)
	cl.Produce(t, inTopic, msgs[:n/4]...)
	a := start(t, c, openStore(t, c))

	// The rest arrives in chunks while the group changes; "nothing
	// committed early" is checked all along.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	joined := make(chan struct{})
	go func() { // owned: waited for below
		defer wg.Done()
		for i := n / 4; i < n; i += 100 {
			if i == 3*n/4 {
				<-joined // the last quarter only once the second member is in
			}
			cl.Produce(t, inTopic, msgs[i:min(i+100, n)]...)
			time.Sleep(50 * time.Millisecond) // the scenario: records arrive over time
		}
	}()
	go func() { // owned: stopped and waited for below
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			checkCommittedCovered(t, cl, "neardup-test", offsetsOf(t, cl))
			time.Sleep(100 * time.Millisecond) // a sample every 100 ms, not a wait
		}
	}()
	poll.Until(t, time.Minute, func() error {
		if d := a.docs.Load(); d < int64(n/8) {
			return fmt.Errorf("first instance decided %d documents", d)
		}
		return nil
	})
	b := start(t, c, openStore(t, c))
	b.waitReady(t, http.StatusOK, time.Minute)
	close(joined)
	evs := waitEvents(t, cl, idsOf(docs), 3*time.Minute)
	checkPlanted(t, docs, firstVerdicts(t, evs))
	close(stop)
	wg.Wait()
	if b.docs.Load() == 0 {
		t.Error("the joining instance decided nothing: no partition moved")
	}
	if got := counterValue(t, a.reg, "neardup_rebalances_total", "revoked"); got < 1 {
		t.Errorf("the first instance had no partition revoked (%v)", got)
	}
	for _, in := range []*instance{a, b} {
		if err := in.stop(t); err != nil {
			t.Fatal(err)
		}
	}
	checkCommittedCovered(t, cl, "neardup-test", offsetsOf(t, cl))
	total := int64(0)
	for _, off := range cl.Committed(t, "neardup-test", inTopic) {
		total += off
	}
	if total != int64(n) {
		t.Errorf("committed %d of %d", total, n)
	}
	t.Logf("first instance decided %d, joining instance %d", a.docs.Load(), b.docs.Load())
}
