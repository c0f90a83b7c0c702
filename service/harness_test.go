package service

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"
	"go.uber.org/goleak"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/kafkatest"
	"github.com/neardup/neardup/internal/poll"
	"github.com/neardup/neardup/internal/synth"
	"github.com/neardup/neardup/pipeline"
)

// Most tests of this package wait (on kfake, redis-server, a member
// process) far more than they compute: those that assert no wall-clock
// bound call t.Parallel, each over a Kafka cluster and an index of its own.
// Those with a time bound (TestServeIndexFrozen, TestServeShutdownBrokerFrozen,
// TestServeStalledPartitionNotReady, TestServeMemberKilledReassignedWithin30s)
// stay serial: they run first, alone.
func TestMain(m *testing.M) {
	if os.Getenv(memberEnv) != "" {
		os.Exit(runMember())
	}
	goleak.VerifyTestMain(m,
		// go-redis and franz-go close their pools asynchronously.
		goleak.IgnoreTopFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).reaper"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreAnyFunction("github.com/twmb/franz-go/pkg/kfake.(*Cluster).run"),
	)
}

// Topic names of the tests.
const (
	inTopic     = "docs"
	outTopic    = "events"
	deadTopic   = "dead"
	uniqueTopic = "unique"
)

// startKafka starts kfake with the input topic (partitions) and the output
// topics.
func startKafka(t testing.TB, partitions int32, opts ...kafkatest.Option) *kafkatest.Cluster {
	t.Helper()
	opts = append([]kafkatest.Option{
		kafkatest.Topic(inTopic, partitions), kafkatest.Topic(outTopic, 3), kafkatest.Topic(deadTopic, 1), kafkatest.Topic(uniqueTopic, 3),
	}, opts...)
	return startCluster(t, opts...)
}

var startCluster = kafkatest.Start

// loadConfig is the configuration of a test service: the web profile,
// unique events on, the given overrides.
func loadConfig(t testing.TB, brokers string, kv ...string) *config.Config {
	t.Helper()
	o := &config.Overrides{}
	for _, p := range [][2]string{
		{"kafka.brokers", brokers}, {"kafka.input_topic", inTopic}, {"kafka.output_topic", outTopic},
		{"kafka.dead_letter_topic", deadTopic}, {"kafka.group", "neardup-test"}, {"pipeline.emit", "all"},
		{"http.addr", "127.0.0.1:0"}, {"http.admin_addr", "127.0.0.1:0"}, {"kafka.commit_interval", "100ms"}, {"kafka.shutdown_timeout", "10s"},
	} {
		o.Add(p[0], p[1])
	}
	for i := 0; i+1 < len(kv); i += 2 {
		o.Add(kv[i], kv[i+1])
	}
	c, err := config.Load("", nil, o)
	if err != nil {
		t.Fatal(err)
	}
	return &c
}

// memoryStore opens a memory index for c's pipeline.
func memoryStore(t testing.TB, c *config.Config) index.Store {
	t.Helper()
	pc, err := pipeline.FromConfig(c, "test")
	if err != nil {
		t.Fatal(err)
	}
	probe, err := pipeline.New(pc, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := index.NewMemory(index.MemoryConfig{Params: probe.IndexParams()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// instance is a service running in the background.
type instance struct {
	*Service
	reg    *prometheus.Registry
	cancel context.CancelFunc
	done   chan error
}

// start creates and runs a service over store; mods change its options.
func start(t testing.TB, c *config.Config, store index.Store, mods ...func(*Options)) *instance {
	t.Helper()
	w := newTestWriter(t)
	return startLogged(t, c, store, slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo})), mods...)
}

// startLogged is start with the given logger.
func startLogged(t testing.TB, c *config.Config, store index.Store, log *slog.Logger, mods ...func(*Options)) *instance {
	t.Helper()
	pc, err := pipeline.FromConfig(c, "test")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	o := Options{Config: c, Pipeline: pc, Store: store, Registerer: reg, Gatherer: reg, Logger: log, Version: "test"}
	for _, mod := range mods {
		mod(&o)
	}
	svc, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	in := &instance{Service: svc, reg: reg, cancel: cancel, done: make(chan error, 1)}
	go func() { in.done <- svc.Run(ctx) }() // owned: stop waits for it
	t.Cleanup(func() {
		cancel()
		select {
		case <-in.done:
		case <-time.After(30 * time.Second):
			t.Error("service did not stop")
		}
	})
	return in
}

// stop shuts the instance down gracefully and returns Run's error.
func (in *instance) stop(t testing.TB) error {
	t.Helper()
	in.cancel()
	select {
	case err := <-in.done:
		in.done <- err // for the cleanup
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("service did not stop within 30s")
		return nil
	}
}

// testWriter sends the service's logs to stderr with -v; without, it
// keeps the last logTail lines and gives them to t.Log if the test fails,
// after the service stopped, so that a failure in CI says what the
// service was doing.
type testWriter struct {
	mu    sync.Mutex
	lines []string
}

// logTail is how many log lines a failed test shows.
const logTail = 300

// newTestWriter returns a testWriter for t; create it before the service
// it logs for, so its cleanup runs after the service's.
func newTestWriter(t testing.TB) *testWriter {
	w := &testWriter{}
	t.Cleanup(func() {
		if !t.Failed() || testing.Verbose() {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		t.Logf("the service's last %d log lines:\n%s", len(w.lines), strings.Join(w.lines, ""))
	})
	return w
}

func (w *testWriter) Write(b []byte) (int, error) {
	if testing.Verbose() {
		fmt.Fprint(os.Stderr, string(b))
		return len(b), nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.lines) == logTail {
		w.lines = append(w.lines[:0], w.lines[1:]...)
	}
	w.lines = append(w.lines, string(b))
	return len(b), nil
}

// docMessages turns synthetic documents into input records keyed by their
// source (an original and its copies share a key, hence a partition and
// its order).
func docMessages(t testing.TB, docs []synth.Doc) []kafka.Message {
	t.Helper()
	msgs := make([]kafka.Message, len(docs))
	for i, d := range docs {
		v, err := json.Marshal(map[string]string{"id": d.ID, "text": d.Text})
		if err != nil {
			t.Fatal(err)
		}
		key := d.ID
		if d.Source != "" {
			key = d.Source
		}
		msgs[i] = kafka.Message{Key: []byte(key), Value: v, Time: time.Now()}
	}
	return msgs
}

// event is the part of an event the tests compare.
type event struct {
	ID          string `json:"id"`
	Kind        string `json:"kind"`
	DuplicateOf string `json:"duplicate_of"`
	Cluster     string `json:"cluster"`
	Replay      bool   `json:"replay"`
	Correction  bool   `json:"correction"`
}

func decodeEvents(t testing.TB, msgs []kafka.Message) []event {
	t.Helper()
	out := make([]event, 0, len(msgs))
	for _, m := range msgs {
		var ev event
		if err := json.Unmarshal(m.Value, &ev); err != nil {
			t.Fatalf("event %s: %v: %s", kafkatest.Source(m), err, m.Value)
		}
		if string(m.Key) != ev.ID {
			t.Errorf("event key %q, id %q", m.Key, ev.ID)
		}
		out = append(out, ev)
	}
	return out
}

// firstVerdicts maps each id to its first event and checks that every
// other event of the id repeats it with replay set. The first event of an
// id may itself be a replay: an instance that died after recording a
// verdict but before producing its event leaves the replay as the only
// event, and it carries the first verdict.
func firstVerdicts(t testing.TB, evs []event) map[string]event {
	t.Helper()
	first := map[string]event{}
	for _, ev := range evs {
		if ev.Correction {
			continue
		}
		f, ok := first[ev.ID]
		if !ok {
			first[ev.ID] = ev
			continue
		}
		if !ev.Replay {
			t.Errorf("second event of %s without replay: %+v after %+v", ev.ID, ev, f)
		}
		if ev.Kind != f.Kind || ev.DuplicateOf != f.DuplicateOf || ev.Cluster != f.Cluster {
			t.Errorf("replay of %s changed its verdict: %+v, first %+v", ev.ID, ev, f)
		}
	}
	return first
}

// checkPlanted checks events against the planted truth: every planted
// duplicate names its source (directly or through the source's cluster)
// with the planted kind, and no unplanted pair is reported.
func checkPlanted(t testing.TB, docs []synth.Doc, first map[string]event) {
	t.Helper()
	truth := map[string]synth.Doc{}
	for _, d := range docs {
		truth[d.ID] = d
	}
	var missing, wrong []string
	for _, d := range docs {
		ev, ok := first[d.ID]
		if !ok {
			missing = append(missing, d.ID)
			continue
		}
		switch {
		case d.Kind == synth.Original && ev.Kind != pipeline.KindUnique:
			wrong = append(wrong, fmt.Sprintf("%s original reported %s of %s", d.ID, ev.Kind, ev.DuplicateOf))
		case d.Kind != synth.Original && ev.DuplicateOf != d.Source:
			wrong = append(wrong, fmt.Sprintf("%s (%s of %s) reported %s of %q", d.ID, d.Kind, d.Source, ev.Kind, ev.DuplicateOf))
		case d.Kind != synth.Original && ev.Cluster != d.Source:
			wrong = append(wrong, fmt.Sprintf("%s cluster %s, want %s", d.ID, ev.Cluster, d.Source))
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d documents without an event, e.g. %v", len(missing), missing[:min(5, len(missing))])
	}
	if len(wrong) > 0 {
		t.Errorf("%d wrong verdicts, e.g. %v", len(wrong), wrong[:min(10, len(wrong))])
	}
}

// waitEvents waits until every id in ids has an event on the output topic.
func waitEvents(t testing.TB, cl *kafkatest.Cluster, ids []string, timeout time.Duration) []event {
	t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var evs []event
	// Every check reads the whole output topic: at most 5 reads a second.
	poll.UntilEvery(t, timeout, 200*time.Millisecond, func() error {
		evs = decodeEvents(t, cl.ReadAll(t, outTopic))
		seen := map[string]bool{}
		for _, ev := range evs {
			if want[ev.ID] {
				seen[ev.ID] = true
			}
		}
		if len(seen) < len(want) {
			return fmt.Errorf("%d of %d documents decided", len(seen), len(want))
		}
		return nil
	})
	return evs
}

// checkCommittedCovered checks that every record below a committed offset
// has its outcome on the output or dead-letter topic: nothing is committed
// before its effect. It reads the committed offsets first, so outcomes
// produced later cannot hide an early commit.
func checkCommittedCovered(t testing.TB, cl *kafkatest.Cluster, group string, docsByOffset map[string]string) {
	t.Helper()
	committed := cl.Committed(t, group, inTopic)
	evs := decodeEvents(t, cl.ReadAll(t, outTopic))
	decided := map[string]bool{}
	for _, ev := range evs {
		decided[ev.ID] = true
	}
	for _, m := range cl.ReadAll(t, deadTopic) {
		decided["dead:"+kafkatest.Header(m, "neardup.source.partition")+"/"+kafkatest.Header(m, "neardup.source.offset")] = true
	}
	for p, off := range committed {
		for o := int64(0); o < off; o++ {
			src := fmt.Sprintf("%d/%d", p, o)
			id, ok := docsByOffset[src]
			if !ok {
				continue
			}
			if !decided[id] && !decided["dead:"+src] {
				t.Errorf("offset %s committed (committed %d) before %s was decided", src, off, id)
				return
			}
		}
	}
}

// offsetsOf maps "partition/offset" to document id for the input topic.
func offsetsOf(t testing.TB, cl *kafkatest.Cluster) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range cl.ReadAll(t, inTopic) {
		var d struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(m.Value, &d)
		out[kafkatest.Source(m)] = d.ID
	}
	return out
}

func slogTo(w *strings.Builder) *slog.Logger { return slog.New(slog.NewJSONHandler(w, nil)) }

// openStore opens the index c names (a Redis URL in the tests that share
// one index between instances).
func openStore(t testing.TB, c *config.Config) index.Store {
	t.Helper()
	_, st, err := pipeline.OpenStore(context.Background(), c, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// idsOf returns the ids of docs.
func idsOf(docs []synth.Doc) []string {
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	return ids
}

// httpGet returns the status and body of an endpoint of in.
func (in *instance) httpGet(t testing.TB, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + in.Addr() + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitReady waits until /readyz answers want.
func (in *instance) waitReady(t testing.TB, want int, timeout time.Duration) string {
	t.Helper()
	var body string
	poll.Until(t, timeout, func() error {
		var code int
		if code, body = in.httpGet(t, "/readyz"); code != want {
			return fmt.Errorf("/readyz %d %q, want %d", code, body, want)
		}
		return nil
	})
	return body
}

// counterValue returns the value of a counter (or gauge) of reg whose
// first label value is label ("" for none), summed over other labels.
func counterValue(t testing.TB, reg prometheus.Gatherer, name, label string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label != "" && (len(m.GetLabel()) == 0 || m.GetLabel()[0].GetValue() != label) {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				sum += m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}

// committedTotal is the sum of the test group's committed offsets on the
// input topic.
func committedTotal(t testing.TB, cl *kafkatest.Cluster) int64 {
	t.Helper()
	total := int64(0)
	for _, off := range cl.Committed(t, "neardup-test", inTopic) {
		total += off
	}
	return total
}

// checkRunning fails the test when the instance's Run has returned.
func (in *instance) checkRunning(t testing.TB) {
	t.Helper()
	select {
	case err := <-in.done:
		in.done <- err // for the cleanup
		t.Fatalf("the member stopped: %v", err)
	default:
	}
}
