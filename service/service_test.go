package service

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"
	"golang.org/x/sync/errgroup"

	"github.com/neardup/neardup/consumer"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/kafkatest"
	"github.com/neardup/neardup/internal/poll"
	"github.com/neardup/neardup/internal/synth"
	"github.com/neardup/neardup/pipeline"
)

// Scenario (a): planted duplicates over 6 partitions; every planted
// duplicate is reported with the right cluster and nothing else is; after
// a graceful stop every offset is committed.
func TestServePlantedDuplicates(t *testing.T) {
	t.Parallel()
	n := 10000
	if testing.Short() {
		n = 1500
	}
	cl := startKafka(t, 6)
	docs := synth.Corpus(synth.Config{Docs: n, Seed: 7, Contain: true})
	cl.Produce(t, inTopic, docMessages(t, docs)...)
	c := loadConfig(t, cl.Brokers)
	in := start(t, c, memoryStore(t, c))
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	t0 := time.Now()
	evs := waitEvents(t, cl, ids, 3*time.Minute)
	t.Logf("%d documents decided in %v", len(docs), time.Since(t0))
	checkPlanted(t, docs, firstVerdicts(t, evs))
	if err := in.stop(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	committed := cl.Committed(t, "neardup-test", inTopic)
	total := int64(0)
	for _, off := range committed {
		total += off
	}
	if total != int64(len(docs)) {
		t.Errorf("committed offsets sum to %d, want %d (%v)", total, len(docs), committed)
	}
}

// Scenario (a), second half: on a one-partition topic the service's events
// equal scan's (the same consumer.Files → pipeline path) on the same
// input, field for field except the time stamp and the source.
func TestServeEqualsScan(t *testing.T) {
	t.Parallel()
	n := 3000
	if testing.Short() {
		n = 600
	}
	docs := synth.Corpus(synth.Config{Docs: n, Seed: 11, Contain: true})
	msgs := docMessages(t, docs)
	cl := startKafka(t, 1)
	cl.Produce(t, inTopic, msgs...)
	c := loadConfig(t, cl.Brokers)
	in := start(t, c, memoryStore(t, c))
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	waitEvents(t, cl, ids, 3*time.Minute)
	if err := in.stop(t); err != nil {
		t.Fatal(err)
	}
	served := map[string]pipeline.Event{}
	for _, m := range cl.ReadAll(t, outTopic) {
		var ev pipeline.Event
		if err := json.Unmarshal(m.Value, &ev); err != nil {
			t.Fatal(err)
		}
		served[ev.ID] = ev
	}

	// scan: the same records as JSON lines through consumer.Files.
	path := filepath.Join(t.TempDir(), "docs.jsonl")
	var lines []byte
	for _, m := range msgs {
		lines = append(append(lines, m.Value...), '\n')
	}
	if err := os.WriteFile(path, lines, 0o600); err != nil {
		t.Fatal(err)
	}
	pc, err := pipeline.FromConfig(c, "test")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pipeline.New(pc, memoryStore(t, c))
	if err != nil {
		t.Fatal(err)
	}
	items := make(chan pipeline.Item, 64)
	outs := make(chan pipeline.Output, 64)
	g, ctx := errgroup.WithContext(context.Background())
	g.Go(func() error {
		defer close(items)
		return (&consumer.Files{Paths: []string{path}, MaxBytes: c.Sketch.MaxBytes}).Run(ctx, items)
	})
	g.Go(func() error {
		defer close(outs)
		return pl.Run(ctx, items, outs)
	})
	var scanned []*pipeline.Event
	g.Go(func() error {
		for o := range outs {
			scanned = append(scanned, o.Event)
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(scanned) != len(docs) || len(served) != len(docs) {
		t.Fatalf("scan %d events, serve %d, documents %d", len(scanned), len(served), len(docs))
	}
	norm := func(ev pipeline.Event) string {
		ev.At, ev.Source = time.Time{}, pipeline.EventSource{}
		b, _ := json.Marshal(ev)
		return string(b)
	}
	diff := 0
	for _, sc := range scanned {
		if a, b := norm(*sc), norm(served[sc.ID]); a != b {
			if diff < 3 {
				t.Errorf("%s:\n scan  %s\n serve %s", sc.ID, a, b)
			}
			diff++
		}
	}
	if diff > 0 {
		t.Errorf("%d of %d events differ", diff, len(docs))
	}
	// The service names the record each event came from.
	ev := served[docs[0].ID]
	if ev.Source.Topic != inTopic || ev.Source.Partition == nil || ev.Source.Offset == nil || *ev.Source.Offset != 0 {
		t.Errorf("source of the first event: %+v", ev.Source)
	}
}

// Scenario (d): rejected records go to the dead-letter topic with their
// original key and value bytes and the neardup.* headers, and the stream
// goes on.
func TestServeDeadLetters(t *testing.T) {
	t.Parallel()
	cl := startKafka(t, 3)
	big := `{"id":"big","text":"` + strings.Repeat("word ", 30000) + `"}` // 150 KB > sketch.max_bytes
	bad := []struct {
		key, value, reason string
	}{
		{"k-malformed", `{"id": "m", "text": `, "malformed_json"},
		{"", `{"text": "no id and no key"}`, "missing_id"},
		{"k-empty", `{"id": "e", "text": " ;; -- "}`, "empty_text"},
		{"k-both", `{"id": "b", "text": "t", "html": "<p>h</p>"}`, "both_text_and_html"},
		{"k-big", big, "too_large"},
		{"k-binary", "\xff\xfe\x00\x01 not json", "malformed_json"},
		{"k-ts", `{"id": "t", "text": "a fine text", "ts": "yesterday"}`, "bad_ts"},
		{"k-meta", `{"id": "x", "text": "a fine text", "meta": [1]}`, "bad_meta"},
	}
	docs := synth.Corpus(synth.Config{Docs: 200, Seed: 3, Contain: true})
	good := docMessages(t, docs)
	var msgs []kafka.Message
	for i, m := range good {
		msgs = append(msgs, m)
		if i%25 == 0 && i/25 < len(bad) {
			b := bad[i/25]
			msgs = append(msgs, kafka.Message{Key: []byte(b.key), Value: []byte(b.value),
				Headers: []kafka.Header{{Key: "origin", Value: []byte("test")}}})
		}
	}
	cl.Produce(t, inTopic, msgs...)
	c := loadConfig(t, cl.Brokers, "sketch.max_bytes", "65536")
	in := start(t, c, memoryStore(t, c))
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	waitEvents(t, cl, ids, time.Minute)
	dead := cl.WaitFor(t, deadTopic, len(bad), 30*time.Second, nil)
	if len(dead) != len(bad) {
		t.Fatalf("%d dead letters, want %d", len(dead), len(bad))
	}
	byValue := map[string]kafka.Message{}
	for _, m := range dead {
		byValue[string(m.Value)] = m
	}
	inputs := map[string]kafka.Message{}
	for _, m := range cl.ReadAll(t, inTopic) {
		inputs[string(m.Value)] = m
	}
	for _, b := range bad {
		m, ok := byValue[b.value]
		if !ok {
			t.Errorf("%s: no dead letter with the original value", b.reason)
			continue
		}
		src := inputs[b.value]
		if string(m.Key) != b.key {
			t.Errorf("%s: key %q, want %q", b.reason, m.Key, b.key)
		}
		for h, want := range map[string]string{
			"neardup.reason": b.reason, "neardup.source.topic": inTopic, "origin": "test",
			"neardup.source.partition": strconv.Itoa(src.Partition), "neardup.source.offset": strconv.FormatInt(src.Offset, 10),
		} {
			if got := kafkatest.Header(m, h); got != want {
				t.Errorf("%s: header %s = %q, want %q", b.reason, h, got, want)
			}
		}
		if kafkatest.Header(m, "neardup.error") == "" {
			t.Errorf("%s: no neardup.error header", b.reason)
		}
	}
	if err := in.stop(t); err != nil {
		t.Fatal(err)
	}
	checkCommittedCovered(t, cl, "neardup-test", offsetsOf(t, cl))
	total := int64(0)
	for _, off := range cl.Committed(t, "neardup-test", inTopic) {
		total += off
	}
	if total != int64(len(msgs)) {
		t.Errorf("committed %d of %d records", total, len(msgs))
	}
}

// maintained is an index that counts its maintenance runs.
type maintained struct {
	index.Store
	runs atomic.Int64
}

func (m *maintained) Maintain(context.Context) error { m.runs.Add(1); return nil }

// Issue 24, point 7: serve never ran the index's maintenance (the Redis
// index's Maintain, which expires closed generations of an idle
// namespace). A store that has it is now maintained periodically.
func TestServeMaintainsIndex(t *testing.T) {
	t.Parallel()
	cl := startKafka(t, 1)
	c := loadConfig(t, cl.Brokers)
	st := &maintained{Store: memoryStore(t, c)}
	pc, err := pipeline.FromConfig(c, "test")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	svc, err := New(context.Background(), Options{Config: c, Pipeline: pc, Store: st, Registerer: reg, Gatherer: reg,
		MaintainInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }() // owned: waited for below
	poll.Wait(30*time.Second, func() bool { return st.runs.Load() >= 3 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := st.runs.Load(); n < 3 {
		t.Errorf("maintenance ran %d times in 30s at a 50ms interval", n)
	}
	if v := counterValue(t, reg, "neardup_index_maintenance_total", ""); v < 3 {
		t.Errorf("neardup_index_maintenance_total = %v", v)
	}
}
