package service

import (
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/neardup/neardup/consumer"
)

// Issue 38, point 6: a burst of tiny records was fetched far beyond the
// in-flight bounds (834,000 records buffered by the Kafka client in one
// run, 370 MiB of heap): the fetch size bounded bytes on the wire, not the
// records they decode to. Now the records fetched and not yet taken by
// the member (franz-go's buffered fetches), at consumer.FetchedRecordBytes
// each beside their key and value, stay within a quarter of
// kafka.max_inflight_bytes whatever the records' size.
func TestServeFetchedRecordsBounded(t *testing.T) {
	t.Parallel()
	const n = 50_000
	const budget = 16 << 20
	cl := startKafka(t, 1)
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		msgs[i] = kafka.Message{Key: []byte(fmt.Sprint(i % 97)), Value: fmt.Appendf(nil, `{"id":"t%d","text":"w"}`, i)}
	}
	cl.Produce(t, inTopic, msgs...)
	c := loadConfig(t, cl.Brokers, "kafka.max_inflight_bytes", fmt.Sprint(budget), "pipeline.emit", "duplicates")
	in := start(t, c, memoryStore(t, c))
	peak, peakBytes := int64(0), int64(0)
	deadline := time.Now().Add(2 * time.Minute)
	for in.Completed() < n && time.Now().Before(deadline) {
		cl := in.src.Client()
		if r := cl.BufferedFetchRecords(); r > peak {
			peak, peakBytes = r, cl.BufferedFetchBytes()
		}
		time.Sleep(2 * time.Millisecond) // a sample every 2 ms, for the peak; not a wait
	}
	if got := in.Completed(); got < n {
		t.Fatalf("%d of %d records done", got, n)
	}
	mem := peak*consumer.FetchedRecordBytes + peakBytes
	t.Logf("peak: %d records, %d bytes buffered: %d bytes of memory (bound %d)", peak, peakBytes, mem, budget/4)
	if mem > budget/4 {
		t.Errorf("%d records (%d bytes) fetched and not taken: %d bytes of memory, over a quarter of kafka.max_inflight_bytes (%d)", peak, peakBytes, mem, budget/4)
	}
	if err := in.stop(t); err != nil {
		t.Fatal(err)
	}
}
