package consumer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/neardup/neardup/internal/kafkatest"
	"github.com/neardup/neardup/stream"
)

// Issue 24, point 7: a commit whose request failed as a whole was
// recorded as done, so its offsets were never committed again although
// the log said "retried at the next interval". Now the next commit sends
// them again.
func TestCommitFailedIsRetried(t *testing.T) {
	cl := kafkatest.Start(t, kafkatest.Topic("in", 2))
	var failing atomic.Bool
	cl.ControlKey(kmsg.OffsetCommit.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		cl.KeepControl()
		if failing.Load() {
			return nil, errors.New("commit refused"), true
		}
		return nil, nil, false
	})
	k, err := NewKafka(KafkaConfig{
		// A short retry timeout: the commit request fails after 1s of
		// refusals instead of franz-go's 30s.
		Client: []kgo.Opt{kgo.SeedBrokers(cl.Brokers), kgo.RetryTimeout(time.Second)},
		Topic:  "in", Group: "g", MaxBytes: 1 << 20, MaxInflightRecords: 100, MaxInflightBytes: 1 << 20,
		DrainTimeout: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan stream.Item, 100)
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx, out) }() // owned: stopped below
	defer func() {
		cancel()
		<-done
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ccancel()
		_ = k.Close(cctx)
	}()
	const n = 50
	var msgs []kafka.Message
	for i := range n {
		msgs = append(msgs, kafka.Message{Key: []byte(fmt.Sprint(i)), Value: []byte(`{"id":"x","text":"t"}`)})
	}
	cl.Produce(t, "in", msgs...)
	for range n {
		select {
		case it := <-out:
			it.Tag.(*Record).Done()
		case <-time.After(30 * time.Second):
			t.Fatal("records not fed")
		}
	}

	failing.Store(true)
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	if err := k.Commit(cctx); err == nil {
		t.Fatal("commit succeeded while the broker refused commits")
	}
	failing.Store(false)
	if err := k.Commit(cctx); err != nil {
		t.Fatalf("commit after the broker accepts commits again: %v", err)
	}
	total := int64(0)
	for _, off := range cl.Committed(t, "g", "in") {
		total += max(off, 0)
	}
	if total != n {
		t.Errorf("committed %d of %d records after the failed commit was retried", total, n)
	}
}

// Issue 24, "Nothing silent": the revoked and lost partitions were logged
// as fmt.Sprint of a map, Go syntax inside JSON logs
// ("map[crawl.documents:[0 1 2]]"). They are a JSON list of
// "topic/partition" strings, by topic, then partition number.
func TestRebalanceLogsPartitionsAsJSON(t *testing.T) {
	cl := kafkatest.Start(t, kafkatest.Topic("crawl.documents", 12))
	var logs syncBuffer // the client's group goroutine logs too
	k, err := NewKafka(KafkaConfig{
		Client: []kgo.Opt{kgo.SeedBrokers(cl.Brokers)},
		Topic:  "crawl.documents", Group: "g", MaxBytes: 1 << 20, MaxInflightRecords: 10, MaxInflightBytes: 1 << 20,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Abort()
	ctx := context.Background()
	parts := map[string][]int32{"crawl.documents": {10, 0, 2}, "a.topic": {1}}
	k.assigned(ctx, nil, parts)
	k.closing.Store(true) // revoked gives the partitions up without waiting or committing
	k.revoked(ctx, nil, parts)
	k.lost(ctx, nil, map[string][]int32{"crawl.documents": {3, 1}})

	want := map[string][]string{
		"partitions revoked": {"a.topic/1", "crawl.documents/0", "crawl.documents/2", "crawl.documents/10"},
		"partitions lost (session expired or fenced); their records in flight will be read again by their next owner": {"crawl.documents/1", "crawl.documents/3"},
	}
	seen := 0
	for _, line := range bytes.Split(bytes.TrimSpace([]byte(logs.String())), []byte("\n")) {
		var rec struct {
			Msg        string          `json:"msg"`
			Partitions json.RawMessage `json:"partitions"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, line)
		}
		w, ok := want[rec.Msg]
		if !ok {
			continue
		}
		seen++
		var got []string
		if err := json.Unmarshal(rec.Partitions, &got); err != nil {
			t.Errorf("%q: partitions %s are not a list of strings: %v", rec.Msg, rec.Partitions, err)
			continue
		}
		if !slices.Equal(got, w) {
			t.Errorf("%q: partitions %q, want %q", rec.Msg, got, w)
		}
	}
	if seen != len(want) {
		t.Errorf("%d of the %d rebalance lines logged:\n%s", seen, len(want), logs.String())
	}
}
