package consumer

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/neardup/neardup/sketch"
)

// Working memory of a document in flight per byte of its record (key and
// value), measured as the peak resident set of neardup scan deciding one
// such document, less that of a tiny one (docs/operations.md, "Memory
// budget"): up to [sketch.MaxSketchBytes] the document is decoded,
// extracted, tokenized, shingled and sketched whole, at most 50 × its
// bytes in two runs (real text 20–37 ×, synthetic 21–27 ×, readability's
// article extraction 23–50 ×); beyond it only the decoded text and the
// content digest grow, under 3 × a byte.
const (
	WorkingMemoryFactor     = 52
	WorkingMemoryFactorRest = 4
)

// WorkingMemory is what a record of n key and value bytes is charged
// against the in-flight byte budget (kafka.max_inflight_bytes), so that
// the budget bounds memory, not just record bytes: WorkingMemoryFactor ×
// the bytes up to sketch.MaxSketchBytes, WorkingMemoryFactorRest × the
// rest. A record charged more than the whole budget is still taken alone.
func WorkingMemory(n int) int64 {
	head := min(n, sketch.MaxSketchBytes)
	return WorkingMemoryFactor*int64(head) + WorkingMemoryFactorRest*int64(n-head)
}

// workingMemory is what a record is charged against the budget.
func workingMemory(r *kgo.Record) int64 { return WorkingMemory(len(r.Value) + len(r.Key)) }

// inflight bounds the records and bytes between reading a record and its
// completion. A record larger than the byte bound is admitted alone, so
// one large record never blocks the stream.
type inflight struct {
	maxRecs, maxBytes int64

	mu      sync.Mutex
	recs    int64
	bytes   int64
	changed chan struct{} // closed and replaced on every release
}

func newInflight(maxRecs, maxBytes int64) *inflight {
	return &inflight{maxRecs: maxRecs, maxBytes: maxBytes, changed: make(chan struct{})}
}

// acquire waits until one record of n bytes fits, or ctx ends.
func (f *inflight) acquire(ctx context.Context, n int64) error {
	for {
		f.mu.Lock()
		if f.recs < f.maxRecs && (f.bytes+n <= f.maxBytes || f.recs == 0) {
			f.recs++
			f.bytes += n
			f.mu.Unlock()
			return nil
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// release returns one record of n bytes.
func (f *inflight) release(n int64) {
	f.mu.Lock()
	f.recs--
	f.bytes -= n
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
}

// load returns the records and bytes in flight.
func (f *inflight) load() (recs, bytes int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.recs, f.bytes
}

// FetchedRecordBytes is the memory of a record fetched by the Kafka client
// beside its key and value bytes: its kgo.Record (160 bytes on 64-bit
// platforms, unsafe.Sizeof) and the pointer to it in its fetch.
const FetchedRecordBytes = 168

// minRecordWire is the smallest record in a record batch (v2): length,
// attributes, timestamp and offset deltas, key and value lengths and
// header count, one byte each at least, the offset delta up to three.
const minRecordWire = 7

// FetchMaxBytes is the most record bytes a fetch response may carry
// (franz-go's FetchMaxBytes and FetchMaxPartitionBytes) for an in-flight
// byte budget: fetched records wait in the client until the member takes
// them, one buffered response per broker, outside the in-flight bounds,
// and a response of n bytes decodes to up to n/minRecordWire records of
// FetchedRecordBytes each beside their bytes. So a response of
// budget/(4·(FetchedRecordBytes/minRecordWire + 1)) (budget/100; at least
// 16 KiB) keeps what one broker's fetch holds within a quarter of the
// budget, however small the records. A broker returns the first batch of
// a fetch whole whatever the limit (oversize.go).
func FetchMaxBytes(budget int) int32 {
	per := 4 * (FetchedRecordBytes/minRecordWire + 1)
	return int32(min(max(budget/per, 16<<10), 1<<30))
}
