package index

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/neardup/neardup/sketch"
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
			keys, origin := d.keys, d.origin
			d.dead.Store(true)
			d.features, d.verdict, d.hasVerdict, d.keys, d.source, d.template, d.recall = nil, nil, false, nil, nil, nil, nil
			l.Unlock()
			removed[i] = removed[i] || alive
			if alive && origin != "" {
				// The id keeps its removed document's origin: a record read
				// again from before it is not stored again.
				m.locks[s].Lock()
				gs := &m.gens[len(m.gens)-1].stripes[s]
				if gs.gone == nil {
					gs.gone = map[string]string{}
				}
				gs.gone[id] = origin
				m.locks[s].Unlock()
			}
			if keys == nil {
				continue
			}
			e, err := decodeKeys(id, m.nbands, keys)
			if err != nil {
				return nil, fmt.Errorf("%w: memory: %w", ErrInvalid, err)
			}
			m.unlink(h, &e, now)
		}
	}
	return removed, nil
}

// unlink removes handle h from every bucket and lane entry of e, in every
// generation. genMu is held for reading.
func (m *Memory) unlink(h uint32, e *Entry, now int64) {
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
			m.unlinkContent(&g.stripes[s], e.Content, h, now)
		}
		m.locks[s].Unlock()
	}
}

// unlinkContent takes document h out of content lane entry c of a stripe
// (Redis: laneRep): out of the recent copies, with the copies gone; when h
// is the representative, the newest copy left takes its place. The stripe
// is locked.
func (m *Memory) unlinkContent(gs *memGenStripe, c sketch.ContentDigest, h uint32, now int64) {
	var keep []memRef
	for _, r := range gs.recent[c] {
		if r.h != h && m.alive(r.h, now) && m.docs.get(r.h).seq == r.seq {
			keep = append(keep, r)
		}
	}
	if rep, ok := gs.copies[c]; ok && rep == h {
		if n := len(keep); n > 0 {
			gs.copies[c], keep = keep[n-1].h, keep[:n-1]
		} else {
			delete(gs.copies, c)
		}
	}
	if len(keep) == 0 {
		delete(gs.recent, c)
	} else {
		gs.recent[c] = keep
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
func (m *Memory) ReviseVerdicts(ctx context.Context, seqs []uint64, old, verdicts [][]byte) ([]bool, error) {
	if len(seqs) != len(verdicts) || len(seqs) != len(old) {
		return nil, fmt.Errorf("%w: %d seqs, %d old, %d verdicts", ErrInvalid, len(seqs), len(old), len(verdicts))
	}
	revised := make([]bool, len(seqs))
	_, err := m.eachDoc(ctx, seqs, func(i int, d *memDoc) {
		if (old[i] == nil && !d.hasVerdict) || (old[i] != nil && d.hasVerdict && bytes.Equal(d.verdict, old[i])) {
			d.verdict, d.hasVerdict = append([]byte{}, verdicts[i]...), true
			d.recall = nil
			revised[i] = true
		}
	})
	return revised, err
}

// deleteOwned deletes k from m if it maps to handle h: a digest another
// document stored since keeps its entry.
func deleteOwned[K comparable](m map[K]uint32, k K, h uint32) {
	if v, ok := m[k]; ok && v == h {
		delete(m, k)
	}
}
