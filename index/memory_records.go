package index

import (
	"context"
	"fmt"
	"sync"
)

// Features implements [Store].
func (m *Memory) Features(ctx context.Context, seqs []uint64) ([][]byte, error) {
	return m.records(ctx, seqs, storedFeatures)
}

// storedFeatures returns d's features as Features does: the stored slice
// itself, which is never modified (a new document gets a new one), so
// callers share it and must not modify it. The document lock is held.
func storedFeatures(d *memDoc) []byte {
	if d.features == nil {
		return []byte{} // stored without features: known, empty
	}
	return d.features
}

// storedVerdict returns d's verdict as Verdicts does: empty, not nil,
// when none is recorded. The document lock is held.
func storedVerdict(d *memDoc) []byte {
	if !d.hasVerdict {
		return []byte{}
	}
	return d.verdict
}

// Verdicts implements [Store].
func (m *Memory) Verdicts(ctx context.Context, seqs []uint64) ([][]byte, error) {
	return m.records(ctx, seqs, storedVerdict)
}

// records returns pick(d) for each live document (nil for Seqs not
// stored), holding the document's lock while picking.
func (m *Memory) records(ctx context.Context, seqs []uint64, pick func(*memDoc) []byte) ([][]byte, error) {
	now := m.clock().UnixNano()
	if err := m.begin(ctx, now); err != nil {
		return nil, err
	}
	defer m.genMu.RUnlock()
	out := make([][]byte, len(seqs))
	for i, seq := range seqs {
		m.withSeq(seq, now, func(d *memDoc) { out[i] = pick(d) })
	}
	return out, nil
}

// withSeq calls f with the live document of Seq seq, if any, under the
// document's lock (Redis: the document's meta record). genMu is held for
// reading, so no handle is evicted meanwhile.
func (m *Memory) withSeq(seq uint64, now int64, f func(*memDoc)) bool {
	h, ok := m.bySeq.get(seq)
	if !ok || !m.alive(h, now) {
		return false
	}
	l := m.docs.lock(h)
	l.Lock()
	defer l.Unlock()
	d := m.docs.get(h)
	if d.seq != seq || d.dead.Load() {
		return false // removed meanwhile
	}
	f(d)
	return true
}

// RecordVerdicts implements [Store].
func (m *Memory) RecordVerdicts(ctx context.Context, seqs []uint64, verdicts [][]byte) ([]bool, error) {
	if len(seqs) != len(verdicts) {
		return nil, fmt.Errorf("%w: %d seqs, %d verdicts", ErrInvalid, len(seqs), len(verdicts))
	}
	return m.eachDoc(ctx, seqs, func(i int, d *memDoc) {
		if !d.hasVerdict {
			d.verdict, d.hasVerdict = append([]byte{}, verdicts[i]...), true
		}
		d.recall = nil
	})
}

// eachDoc calls f, under the document's lock, for each seqs[i] that is
// stored and live; stored[i] reports that it was.
func (m *Memory) eachDoc(ctx context.Context, seqs []uint64, f func(i int, d *memDoc)) (stored []bool, err error) {
	now := m.clock().UnixNano()
	if err := m.begin(ctx, now); err != nil {
		return nil, err
	}
	defer m.genMu.RUnlock()
	stored = make([]bool, len(seqs))
	for i, seq := range seqs {
		stored[i] = m.withSeq(seq, now, func(d *memDoc) { f(i, d) })
	}
	return stored, nil
}

// seqIndex maps the Seq of every document whose handle is held to the
// handle, in 64 locked shards (Redis: a Seq names its record hash).
type seqIndex struct {
	shards [64]struct {
		sync.Mutex
		m map[uint64]uint32
		_ [40]byte // keep neighbouring shards off one cache line
	}
}

func (x *seqIndex) get(seq uint64) (uint32, bool) {
	s := &x.shards[seq%64]
	s.Lock()
	h, ok := s.m[seq]
	s.Unlock()
	return h, ok
}

func (x *seqIndex) put(seq uint64, h uint32) {
	s := &x.shards[seq%64]
	s.Lock()
	if s.m == nil {
		s.m = map[uint64]uint32{}
	}
	s.m[seq] = h
	s.Unlock()
}

// del forgets seq when it still names handle h.
func (x *seqIndex) del(seq uint64, h uint32) {
	s := &x.shards[seq%64]
	s.Lock()
	if v, ok := s.m[seq]; ok && v == h {
		delete(s.m, seq)
	}
	s.Unlock()
}
