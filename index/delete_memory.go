package index

import (
	"bytes"
	"context"
	"fmt"
	"slices"
)

// Delete implements [Store].
func (m *Memory) Delete(ctx context.Context, ids ...string) error {
	_, err := m.Remove(ctx, ids)
	return err
}

// Remove implements [Store]. A document's id goes from every generation,
// its records at once, and its members from every bucket and lane entry
// its keys record names, in every generation. Its handle is reused only
// when the generation that held its records is evicted, as before.
func (m *Memory) Remove(ctx context.Context, ids []string) ([]bool, error) {
	now := m.clock().UnixNano()
	if err := m.begin(ctx, now); err != nil {
		return nil, err
	}
	defer m.genMu.RUnlock()
	removed := make([]bool, len(ids))
	for i, id := range ids {
		s := idStripe(id)
		m.locks[s].Lock()
		var hs []uint32
		for _, g := range m.gens {
			if h, ok := g.stripes[s].ids[id]; ok {
				if !slices.Contains(hs, h) {
					hs = append(hs, h)
				}
				delete(g.stripes[s].ids, id)
			}
		}
		m.locks[s].Unlock()
		for _, h := range hs {
			alive := m.alive(h, now)
			l := m.docs.lock(h)
			l.Lock()
			d := m.docs.get(h)
			keys := d.keys
			d.dead.Store(true)
			d.features, d.verdict, d.hasVerdict, d.keys, d.source, d.template = nil, nil, false, nil, nil, nil
			l.Unlock()
			removed[i] = removed[i] || alive
			if keys == nil {
				continue
			}
			e, err := decodeKeys(id, m.nbands, keys)
			if err != nil {
				return nil, fmt.Errorf("%w: memory: %w", ErrInvalid, err)
			}
			m.unlink(h, &e)
		}
	}
	return removed, nil
}

// unlink removes handle h from every bucket and lane entry of e, in every
// generation. genMu is held for reading.
func (m *Memory) unlink(h uint32, e *Entry) {
	sim, anchors := keysOf(e, m.simK)
	type op struct {
		key uint64
		sim bool
	}
	ops := make([]op, 0, len(e.Bands)+len(sim)+len(anchors))
	for i, k := range e.Bands {
		ops = append(ops, op{salt(i, k), false})
	}
	for i, k := range sim {
		ops = append(ops, op{salt(m.nbands+i, k), true})
	}
	for _, k := range anchors {
		ops = append(ops, op{salt(m.passage, k), false})
	}
	for _, o := range ops {
		s, f := bucketStripe(o.key), bucketField(o.key)
		m.locks[s].Lock()
		for _, g := range m.gens {
			removeMember(&g.stripes[s], f, o.sim, h)
		}
		m.locks[s].Unlock()
	}
	if e.HasIMatch {
		s := digestStripe(&e.IMatch)
		m.locks[s].Lock()
		for _, g := range m.gens {
			deleteOwned(g.stripes[s].imatch, e.IMatch, h)
		}
		m.locks[s].Unlock()
	}
	if e.HasContent {
		s := contentStripe(&e.Content)
		m.locks[s].Lock()
		for _, g := range m.gens {
			deleteOwned(g.stripes[s].copies, e.Content, h)
		}
		m.locks[s].Unlock()
	}
}

// removeMember removes h from bucket f of a stripe. A common key whose
// exemplar is h keeps its mark and count, without an exemplar. The
// stripe is locked.
func removeMember(gs *memGenStripe, f uint32, sim bool, h uint32) {
	b, one, ok := lookupBucket(gs, f, sim)
	switch {
	case !ok:
		return
	case b == nil:
		if one == h {
			gs.one.del(f)
		}
		return
	case b.common:
		if b.members[0] == h {
			b.members[0] = bigTag
		}
		return
	}
	i := slices.Index(b.members, h)
	if i < 0 {
		return
	}
	members := slices.Delete(slices.Clone(b.members), i, i+1)
	var fps []uint64
	if sim {
		fps = slices.Delete(slices.Clone(b.fps), i, i+1)
	}
	if len(members) == 0 && b.overflow == 0 {
		gs.big.del(f)
		if !sim {
			gs.one.del(f)
		}
		return
	}
	storeBucket(gs, f, sim, members, fps, b.overflow)
}

// ReviseVerdicts implements [Store].
func (m *Memory) ReviseVerdicts(ctx context.Context, ids []string, old, verdicts [][]byte) ([]bool, error) {
	if len(ids) != len(verdicts) || len(ids) != len(old) {
		return nil, fmt.Errorf("%w: %d ids, %d old, %d verdicts", ErrInvalid, len(ids), len(old), len(verdicts))
	}
	now := m.clock().UnixNano()
	if err := m.begin(ctx, now); err != nil {
		return nil, err
	}
	defer m.genMu.RUnlock()
	revised := make([]bool, len(ids))
	for i, id := range ids {
		m.withDoc(id, now, func(d *memDoc) {
			if (old[i] == nil && !d.hasVerdict) || (old[i] != nil && d.hasVerdict && bytes.Equal(d.verdict, old[i])) {
				d.verdict, d.hasVerdict = append([]byte{}, verdicts[i]...), true
				revised[i] = true
			}
		})
	}
	return revised, nil
}

// footprint counts the entries the store holds, for tests: ids, bucket
// slots (one map and big map), lane entries, and live documents.
func (m *Memory) footprint() (n int) {
	m.genMu.RLock()
	defer m.genMu.RUnlock()
	for _, g := range m.gens {
		for s := range g.stripes {
			m.locks[s].Lock()
			gs := &g.stripes[s]
			n += len(gs.ids) + gs.one.len() + len(gs.imatch) + len(gs.copies)
			for f := range gs.big.keys {
				if _, ok := gs.one.get(f); !ok {
					n++ // a SimHash bucket
				}
			}
			m.locks[s].Unlock()
		}
	}
	return n
}

// deleteOwned deletes k from m if it maps to handle h: a digest another
// document stored since keeps its entry.
func deleteOwned[K comparable](m map[K]uint32, k K, h uint32) {
	if v, ok := m[k]; ok && v == h {
		delete(m, k)
	}
}
