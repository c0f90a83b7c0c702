package consumer

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// tracker follows every record fed to the pipeline until the caller says
// it is done (decided, and everything it produced acknowledged), and knows
// per partition the offset that may be committed: one past the last record
// of the unbroken done prefix in feed order. Partitions are tracked from
// their assignment to their revocation; a record of a partition this
// member does not own (any more) is never tracked, and a revoked
// partition's state is detached so that work finishing after revocation
// can never be committed.
type tracker struct {
	mu      sync.Mutex
	parts   map[topicPartition]*partState
	changed chan struct{} // closed and replaced on every completion
}

type topicPartition struct {
	topic     string
	partition int32
}

// partState is one assigned partition.
type partState struct {
	tp       topicPartition
	queue    []*entry // fed, not yet popped; queue[0] is the oldest
	next     kgo.EpochOffset
	hasNext  bool  // next is set: something was done since assignment
	done     int64 // committed offset known to the group (−1: none yet)
	pos      int64 // one past the last record polled (−1: none since assignment)
	detached bool
}

// entry is one fed record.
type entry struct {
	offset int64
	epoch  int32
	done   bool
	ps     *partState
}

func newTracker() *tracker {
	return &tracker{parts: map[topicPartition]*partState{}, changed: make(chan struct{})}
}

// assign starts tracking partitions. A partition assigned again while
// still tracked — franz-go does so without revoking it when a topic purged
// from consuming is added back before the group session ends, as the
// rescue of an oversized batch does (oversize.go) — keeps its records in
// flight, but its position is forgotten: the client's new cursor starts
// at the group's committed offset, not where the member had polled to.
func (t *tracker) assign(topic string, partitions []int32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range partitions {
		tp := topicPartition{topic, p}
		if ps, ok := t.parts[tp]; ok {
			ps.pos = -1
			continue
		}
		t.parts[tp] = &partState{tp: tp, done: -1, pos: -1}
	}
}

// detach stops tracking partitions and returns their states: nothing is
// added to them afterwards, and they are no longer in commits.
func (t *tracker) detach(topic string, partitions []int32) []*partState {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*partState
	for _, p := range partitions {
		tp := topicPartition{topic, p}
		if ps, ok := t.parts[tp]; ok {
			ps.detached = true
			delete(t.parts, tp)
			out = append(out, ps)
		}
	}
	return out
}

// detachAll detaches every partition (the member gives everything up).
func (t *tracker) detachAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for tp, ps := range t.parts {
		ps.detached = true
		delete(t.parts, tp)
	}
}

// add tracks a record about to be fed; nil when its partition is not
// owned.
func (t *tracker) add(r *kgo.Record) *entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	ps, ok := t.parts[topicPartition{r.Topic, r.Partition}]
	if !ok {
		return nil
	}
	e := &entry{offset: r.Offset, epoch: r.LeaderEpoch, ps: ps}
	ps.queue = append(ps.queue, e)
	return e
}

// complete marks e done and advances its partition's committable offset.
func (t *tracker) complete(e *entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e.done = true
	ps := e.ps
	n := 0
	for n < len(ps.queue) && ps.queue[n].done {
		last := ps.queue[n]
		ps.next, ps.hasNext = kgo.EpochOffset{Epoch: last.epoch, Offset: last.offset + 1}, true
		n++
	}
	if n > 0 {
		clear(ps.queue[:n])
		ps.queue = ps.queue[n:]
	}
	close(t.changed)
	t.changed = make(chan struct{})
}

// pending returns the number of fed records not yet done in states, and a
// channel closed at the next completion.
func (t *tracker) pending(states []*partState) (int, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, ps := range states {
		n += len(ps.queue)
	}
	return n, t.changed
}

// commitable returns, for the given states (nil: every tracked partition),
// the offsets to commit that are past what was committed.
func (t *tracker) commitable(states []*partState) map[string]map[int32]kgo.EpochOffset {
	t.mu.Lock()
	defer t.mu.Unlock()
	if states == nil {
		for _, ps := range t.parts {
			states = append(states, ps)
		}
	}
	out := map[string]map[int32]kgo.EpochOffset{}
	for _, ps := range states {
		if !ps.hasNext || ps.next.Offset <= ps.done {
			continue
		}
		m := out[ps.tp.topic]
		if m == nil {
			m = map[int32]kgo.EpochOffset{}
			out[ps.tp.topic] = m
		}
		m[ps.tp.partition] = ps.next
	}
	return out
}

// committed records that offsets were committed.
func (t *tracker) committed(offsets map[string]map[int32]kgo.EpochOffset, states []*partState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	find := func(tp topicPartition) *partState {
		if ps, ok := t.parts[tp]; ok {
			return ps
		}
		for _, ps := range states {
			if ps.tp == tp {
				return ps
			}
		}
		return nil
	}
	for topic, parts := range offsets {
		for p, eo := range parts {
			if ps := find(topicPartition{topic, p}); ps != nil && eo.Offset > ps.done {
				ps.done = eo.Offset
			}
		}
	}
}

// polled records that the consumer's position in a partition is next.
func (t *tracker) polled(topic string, partition int32, next int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ps, ok := t.parts[topicPartition{topic, partition}]; ok && next > ps.pos {
		ps.pos = next
	}
}

// position returns one past the last record polled from tp since its
// assignment, −1 when none was (or tp is not owned).
func (t *tracker) position(tp topicPartition) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ps, ok := t.parts[tp]; ok {
		return ps.pos
	}
	return -1
}

// progress returns, for tp, the offset past its done prefix (−1 when
// nothing was done since its assignment), the committed offset known (−1:
// none yet), whether tp is tracked, and a channel closed at the next
// completion.
func (t *tracker) progress(tp topicPartition) (done, committed int64, owned bool, changed <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ps, ok := t.parts[tp]
	if !ok {
		return -1, -1, false, t.changed
	}
	done = -1
	if ps.hasNext {
		done = ps.next.Offset
	}
	return done, ps.done, true, t.changed
}

// owned returns the tracked partitions.
func (t *tracker) owned() []topicPartition {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]topicPartition, 0, len(t.parts))
	for tp := range t.parts {
		out = append(out, tp)
	}
	return out
}

// isOwned reports whether tp is tracked.
func (t *tracker) isOwned(tp topicPartition) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.parts[tp]
	return ok
}
