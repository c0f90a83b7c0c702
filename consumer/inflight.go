package consumer

import (
	"context"
	"sync"
)

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
