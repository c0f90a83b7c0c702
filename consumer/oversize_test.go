package consumer

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/neardup/neardup/internal/kafkatest"
	"github.com/neardup/neardup/stream"
)

// A partition whose very first batch is over the read limit is moved on
// by leaving and re-joining the group (oversize.go). franz-go may hand
// the partition back with or without revoking it: without when the topic
// is added back before the group session ends, which slow heartbeats make
// likely. Without a revocation nothing committed the records just read,
// so the new cursor restarted at the batch while the member believed it
// was past it: every later rescue probed the offset behind the batch,
// found nothing too large, and the partition stayed stuck for good (the
// flaky TestServeStalledPartitionNotReady of the service). Now the rescue
// commits past the batch before it rejoins, and a partition handed back
// forgets its position; the records behind the batch are fed either way.
func TestOversizedFirstBatchMovesOn(t *testing.T) {
	tests := []struct {
		name    string
		brokers int
		// slowHeartbeat delays every heartbeat at the group
		// coordinator: the member sees the rejoin only after the
		// metadata that adds the topic back (when that metadata goes
		// to another broker), and the group hands the partition back
		// unrevoked.
		slowHeartbeat time.Duration
		rounds        int
	}{
		{name: "revoked", brokers: 1, rounds: 1},
		{name: "slow-heartbeats", brokers: 3, slowHeartbeat: 2 * time.Second, rounds: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for round := range tt.rounds {
				oversizedFirstBatch(t, round, tt.brokers, tt.slowHeartbeat)
				if t.Failed() {
					return
				}
			}
		})
	}
}

// oversizedFirstBatch runs one consumer over a partition holding a 3 MB
// record (over its 2 MiB read limit) then 20 small ones, decides each
// record (the 3 MB one after 1s, as its dead letter takes a while) and
// commits every 100ms, as the service does, and checks that every record
// is fed and committed.
func oversizedFirstBatch(t *testing.T, round, brokers int, slowHeartbeat time.Duration) {
	cl := kafkatest.Start(t, kafkatest.Brokers(brokers), kafkatest.Topic("in", 1),
		kafkatest.KfakeOpts(kfake.BrokerConfigs(map[string]string{"message.max.bytes": strconv.Itoa(16 << 20)})))
	if slowHeartbeat > 0 {
		cl.ControlKey(kmsg.Heartbeat.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
			cl.KeepControl()
			cl.SleepControl(func() { time.Sleep(slowHeartbeat) }) // the scenario: a slow broker
			return nil, nil, false
		})
	}
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{Transport: tr, Addr: kafka.TCP(strings.Split(cl.Brokers, ",")...), Topic: "in",
		RequiredAcks: kafka.RequireAll, BatchSize: 1, BatchBytes: 128 << 20, WriteTimeout: time.Minute}
	err := w.WriteMessages(context.Background(), kafka.Message{Key: []byte("k"), Value: bytes.Repeat([]byte("y"), 3_000_000)})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	const small = 20
	var msgs []kafka.Message
	for i := range small {
		msgs = append(msgs, kafka.Message{Key: []byte("k"), Value: fmt.Appendf(nil, `{"id":"d%d","text":"t"}`, i)})
	}
	cl.Produce(t, "in", msgs...)

	var logs syncBuffer
	rejoins := 0
	// At the moment the member rejoins (the log line is written on
	// Run's goroutine just before), the group must have committed past
	// the batch: the partition may come back unrevoked, and its new
	// cursor starts at the committed offset.
	onRejoin := func() {
		rejoins++
		// Not cl.Committed: this is not the test's goroutine.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := (&kafka.Client{Addr: kafka.TCP(strings.Split(cl.Brokers, ",")[0])}).OffsetFetch(ctx,
			&kafka.OffsetFetchRequest{GroupID: "g", Topics: map[string][]int{"in": {0}}})
		switch {
		case err != nil:
			t.Errorf("round %d: committed offsets at the rejoin: %v", round, err)
		case len(resp.Topics["in"]) != 1:
			t.Errorf("round %d: committed offsets at the rejoin: %+v", round, resp.Topics)
		case resp.Topics["in"][0].CommittedOffset < 1:
			t.Errorf("round %d: the member rejoins with committed offset %d, not past the oversized batch (offset 0)",
				round, resp.Topics["in"][0].CommittedOffset)
		}
	}
	k, err := NewKafka(KafkaConfig{
		Client: []kgo.Opt{kgo.SeedBrokers(strings.Split(cl.Brokers, ",")...)},
		Topic:  "in", Group: "g", MaxBytes: 1 << 20, MaxInflightRecords: 100, MaxInflightBytes: 4 << 20,
		DrainTimeout: 10 * time.Second,
		Logger: slog.New(onMessage{Handler: slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}),
			prefix: "rejoining the group", fn: onRejoin}),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan stream.Item, 100)
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = k.Run(ctx, out) })
	wg.Go(func() { // the service's periodic commit
		for ctx.Err() == nil {
			_ = k.Commit(ctx)
			time.Sleep(100 * time.Millisecond) // the scenario: a commit every 100 ms
		}
	})
	var pending sync.WaitGroup
	fed := map[int64]bool{}
	deadline := time.After(45 * time.Second)
	for len(fed) < small+1 && !t.Failed() {
		select {
		case it := <-out:
			r := it.Tag.(*Record)
			fed[r.Offset] = true
			pending.Go(func() { // the pipeline and the sink
				if len(r.Value) > 1<<20 {
					time.Sleep(time.Second) // the scenario: a slow dead letter
				}
				r.Done()
			})
		case <-deadline:
			t.Errorf("round %d: %d of %d records fed after 45s", round, len(fed), small+1)
		}
	}
	pending.Wait()
	if !t.Failed() {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := k.Commit(cctx); err != nil {
			t.Errorf("round %d: commit: %v", round, err)
		}
		ccancel()
		if got := cl.Committed(t, "g", "in")[0]; got != small+1 {
			t.Errorf("round %d: committed offset %d, want %d", round, got, small+1)
		}
	}
	cancel()
	wg.Wait()
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	_ = k.Close(cctx)
	if runErr != nil {
		t.Errorf("round %d: Run: %v", round, runErr)
	}
	if rejoins == 0 {
		t.Errorf("round %d: the member never rejoined to move past the batch", round)
	}
	revoked, assigned := strings.Count(logs.String(), `msg="partitions revoked"`), strings.Count(logs.String(), `msg="partitions assigned"`)
	t.Logf("round %d: %d rejoins, %d assignments, %d revocations (the last at Close)", round, rejoins, assigned, revoked)
	if t.Failed() {
		t.Logf("round %d: consumer logs:\n%s", round, logs.String())
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// onMessage is a slog.Handler that calls fn, on the logging goroutine,
// before handling a record whose message starts with prefix.
type onMessage struct {
	slog.Handler
	prefix string
	fn     func()
}

func (h onMessage) Handle(ctx context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, h.prefix) {
		h.fn()
	}
	return h.Handler.Handle(ctx, r)
}
