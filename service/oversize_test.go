package service

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/neardup/neardup/internal/kafkatest"
	"github.com/neardup/neardup/internal/poll"
	"github.com/neardup/neardup/internal/synth"
)

// produceLarge writes msgs to topic with kafka-go, one batch each, with
// batch and message limits large enough for records of tens of MB.
func produceLarge(t testing.TB, cl *kafkatest.Cluster, topic string, msgs ...kafka.Message) {
	t.Helper()
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{Transport: tr,
		Addr: kafka.TCP(strings.Split(cl.Brokers, ",")...), Topic: topic, Balancer: &kafka.Hash{},
		RequiredAcks: kafka.RequireAll, BatchSize: 1, BatchBytes: 128 << 20, MaxAttempts: 3,
		WriteTimeout: time.Minute,
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
}

// Issue 24, point 1: a record over the fetch limit (the response the
// consumer may read) stopped its partition forever while /readyz said
// ready. Now it becomes a too_large dead letter — whole when it is at
// most kafka.max_record_bytes, unread (source headers and size) above
// that — the records behind it are decided, and every offset is
// committed.
func TestServeOversizedRecord(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		size  int // bytes of the oversized value
		kv    []string
		whole bool // the dead letter keeps key, headers and value
	}{
		// Default limits: fetch limit 32 MiB, kafka.max_record_bytes 64 MiB.
		{name: "40MB/read-whole", size: 40_000_000, whole: true},
		// A 3 MB record over a 2 MiB read limit and over
		// kafka.max_record_bytes: dead-lettered unread.
		{name: "3MB/unread", size: 3_000_000, kv: []string{"kafka.max_inflight_bytes", "4MiB",
			"sketch.max_bytes", "1MiB", "kafka.max_record_bytes", "1MiB"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := startKafka(t, 2, kafkatest.KfakeOpts(kfake.BrokerConfigs(map[string]string{"message.max.bytes": strconv.Itoa(100 << 20)})))
			const key = "k-huge"
			huge := kafka.Message{Key: []byte(key), Value: bytes.Repeat([]byte("x"), tt.size),
				Headers: []kafka.Header{{Key: "origin", Value: []byte("test")}, {Key: "content-type", Value: []byte("text/plain")}}}
			before := synth.Corpus(synth.Config{Docs: 100, Seed: 31, Contain: true})
			after := synth.Corpus(synth.Config{Docs: 40, Seed: 32})
			for i := range after {
				after[i].ID = "after-" + after[i].ID
				after[i].Source = ""
			}
			afterMsgs := docMessages(t, after)
			for i := range afterMsgs {
				afterMsgs[i].Key = []byte(key) // same partition, behind the huge record
			}
			cl.Produce(t, inTopic, docMessages(t, before)...)
			produceLarge(t, cl, inTopic, huge)
			cl.Produce(t, inTopic, afterMsgs...)
			total := len(before) + 1 + len(after)

			c := loadConfig(t, cl.Brokers, tt.kv...)
			in := start(t, c, memoryStore(t, c))
			waitEvents(t, cl, append(idsOf(before), idsOf(after)...), time.Minute)
			dead := cl.WaitFor(t, deadTopic, 1, 30*time.Second, nil)
			if len(dead) != 1 {
				t.Fatalf("%d dead letters, want 1", len(dead))
			}
			m := dead[0]
			var src kafka.Message
			for _, im := range cl.ReadAll(t, inTopic) {
				if string(im.Key) == key && len(im.Value) == tt.size {
					src = im
				}
			}
			want := map[string]string{
				"neardup.reason": "too_large", "neardup.source.topic": inTopic,
				"neardup.source.partition": strconv.Itoa(src.Partition), "neardup.source.offset": strconv.FormatInt(src.Offset, 10),
			}
			if tt.whole {
				want["origin"] = "test"
				want["neardup.source.size"] = strconv.Itoa(tt.size)
				if string(m.Key) != key || !bytes.Equal(m.Value, huge.Value) {
					t.Errorf("dead letter key %q, value of %d bytes; want %q and the whole %d bytes", m.Key, len(m.Value), key, tt.size)
				}
			} else {
				size, _ := strconv.Atoi(kafkatest.Header(m, "neardup.source.size"))
				if size < tt.size {
					t.Errorf("neardup.source.size %d, want at least the record's %d bytes", size, tt.size)
				}
			}
			for h, v := range want {
				if got := kafkatest.Header(m, h); got != v {
					t.Errorf("header %s = %q, want %q", h, got, v)
				}
			}
			if err := in.stop(t); err != nil {
				t.Fatal(err)
			}
			if committed := committedTotal(t, cl); committed != int64(total) {
				t.Errorf("committed %d of %d records", committed, total)
			}
		})
	}
}

// A partition whose oversized batch cannot be moved past (here: the
// broker refuses the fetches that would read it alone) is not ready and
// counted in neardup_consumer_stalled_partitions; once the look-ups work
// again it goes on.
func TestServeStalledPartitionNotReady(t *testing.T) {
	cl := startKafka(t, 1, kafkatest.KfakeOpts(kfake.BrokerConfigs(map[string]string{"message.max.bytes": strconv.Itoa(16 << 20)})))
	var refuse atomic.Bool
	refuse.Store(true)
	// The consumer's own fetches ask for up to 1 MiB; the reads of one
	// oversized batch for 1 KiB.
	cl.ControlKey(kmsg.Fetch.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		cl.KeepControl()
		if !refuse.Load() || req.(*kmsg.FetchRequest).MaxBytes != 1<<10 {
			return nil, nil, false
		}
		return nil, errors.New("refused"), true
	})
	docs := synth.Corpus(synth.Config{Docs: 20, Seed: 41})
	produceLarge(t, cl, inTopic, kafka.Message{Key: []byte("k"), Value: bytes.Repeat([]byte("y"), 3_000_000)})
	cl.Produce(t, inTopic, docMessages(t, docs)...)
	c := loadConfig(t, cl.Brokers, "kafka.max_inflight_bytes", "4MiB", "sketch.max_bytes", "1MiB")
	in := start(t, c, memoryStore(t, c))
	t.Cleanup(func() { // runs before the service stops: its state at the failure
		if t.Failed() {
			t.Logf("at the failure: %d partition(s) stalled, group joined %v, committed offsets %v",
				in.src.Stalled(), in.src.Joined(), cl.Committed(t, "neardup-test", inTopic))
		}
	})
	body := in.waitReady(t, http.StatusServiceUnavailable, 30*time.Second)
	poll.Wait(30*time.Second, func() bool {
		if !strings.Contains(body, "cannot advance") {
			_, body = in.httpGet(t, "/readyz")
		}
		return strings.Contains(body, "cannot advance")
	})
	if !strings.Contains(body, "cannot advance") {
		t.Fatalf("/readyz %q does not say a partition cannot advance", body)
	}
	if v := counterValue(t, in.reg, "neardup_consumer_stalled_partitions", ""); v < 1 {
		t.Errorf("neardup_consumer_stalled_partitions = %v, want >= 1", v)
	}
	refuse.Store(false)
	waitEvents(t, cl, idsOf(docs), time.Minute)
	in.waitReady(t, http.StatusOK, 45*time.Second)
	if v := counterValue(t, in.reg, "neardup_consumer_stalled_partitions", ""); v != 0 {
		t.Errorf("neardup_consumer_stalled_partitions = %v after recovery, want 0", v)
	}
}
