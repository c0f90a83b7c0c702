package index

import (
	"slices"

	"github.com/neardup/neardup/sketch"
)

// tableOp looks up (and unless looking only, inserts into) the bucket of
// table t in every readable generation (Redis: tableOp). hk is the op's
// hit key: a member counts once per hit key, however many generations
// hold it. A common key (LSH and passage tables) yields its exemplar and
// nothing else, and takes no member; common in an older generation, it
// is marked common in the current one too.
func (m *Memory) tableOp(t, hk int, key uint64, cur *memGen, older []*memGen, st *entryState) {
	sim := t >= m.nbands && t < m.passage
	limit := m.commonDocs
	kind := byte(1) // memCand.via
	switch {
	case sim:
		limit, kind = m.maxSimBucket, 2
	case t == m.passage:
		kind = 3
	}
	s, f := bucketStripe(key), bucketField(key)
	collect := m.refresh && !st.lookOnly
	var old *memPend // members of older generations, for refresh
	oldCommon := 0   // the key's count where it is common in an older generation
	for _, g := range older {
		b, one, ok := lookupBucket(&g.stripes[s], f, sim)
		if !ok {
			continue
		}
		if b != nil && b.common {
			oldCommon = max(oldCommon, m.commonHit(hk, kind, b, st, collect))
			continue
		}
		if collect && old == nil {
			old = &memPend{}
		}
		m.scan(hk, kind, b, one, sim, st, old)
	}
	gs := &cur.stripes[s]
	b, one, ok := lookupBucket(gs, f, sim)
	if ok && b != nil && b.common {
		if n := m.commonHit(hk, kind, b, st, false); !st.lookOnly && n < maxCommonCount {
			b.overflow++
		}
		if !st.lookOnly && b.members[0] == bigTag {
			b.members[0] = st.self // the removed exemplar's successor
		}
		return
	}
	if st.lookOnly {
		if ok {
			m.scan(hk, kind, b, one, sim, st, nil)
			if sim && bucketLen(b, one) >= limit {
				st.sc.rfull = append(st.sc.rfull, memPend{gs: gs, field: f, sim: sim, limit: limit, b: b, one: one, hk: hk})
			}
		}
		return
	}
	if oldCommon > 0 {
		// Common before: this generation's members are found once more,
		// and the key is common here too, with the entry as its exemplar
		// (a document that lives as long as the mark).
		if ok {
			m.scan(hk, kind, b, one, sim, st, nil)
		}
		storeCommon(gs, f, st.self, oldCommon+1)
		return
	}
	if old == nil && !ok {
		insertNew(gs, f, sim, st.self, st.qfp)
		return
	}
	p := memPend{gs: gs, field: f, sim: sim, limit: limit, b: b, one: one, hk: hk}
	if ok {
		p.present = m.scan(hk, kind, b, one, sim, st, nil)
	}
	if old != nil {
		p.old, p.oldFps = old.old, old.oldFps
	}
	st.sc.pend = append(st.sc.pend, p)
}

// maxCommonCount caps the count of a common key (Redis: one byte).
const maxCommonCount = 255

// commonHit counts a common key (hit key hk) once, with the documents
// that hold it (the most any generation counts), adds its exemplar as a
// candidate when it is an earlier document (Redis: commonHit), and
// returns the key's count.
func (m *Memory) commonHit(hk int, via byte, b *memBucket, st *entryState, oldGen bool) int {
	if st.commonHK == nil {
		st.commonHK = map[int]int{}
	}
	n := b.overflow
	if prev, ok := st.commonHK[hk]; !ok {
		st.commonHK[hk] = n
		m.noteHot(st, hk)
	} else if n > prev {
		st.commonHK[hk] = n
	}
	h := b.members[0]
	if h != st.self && h != bigTag { // bigTag: its exemplar was removed
		if seq := m.docs.get(h).seq; seq < st.selfSeq {
			m.addCandidate(h, seq, hk, via, st.sc, oldGen)
		}
	}
	return n
}

// storeCommon marks key f of a stripe common, with exemplar h and count
// n (capped).
func storeCommon(gs *memGenStripe, f uint32, h uint32, n int) {
	gs.big.set(f, &memBucket{members: []uint32{h}, common: true, overflow: min(n, maxCommonCount)})
	gs.one.set(f, bigTag)
}

// lookupBucket returns bucket f of a stripe: a big bucket b, or a single
// member one (b nil). one is bigTag for a big bucket.
func lookupBucket(gs *memGenStripe, f uint32, sim bool) (b *memBucket, one uint32, ok bool) {
	if !sim {
		v, ok := gs.one.get(f)
		if !ok {
			return nil, bigTag, false
		}
		if v&bigTag == 0 {
			return nil, v, true
		}
	}
	b, ok = gs.big.get(f)
	return b, bigTag, ok
}

func bucketLen(b *memBucket, one uint32) int {
	if b == nil {
		if one != bigTag {
			return 1
		}
		return 0
	}
	return len(b.members)
}

func insertNew(gs *memGenStripe, f uint32, sim bool, h uint32, fp uint64) {
	if !sim {
		gs.one.set(f, h)
		return
	}
	gs.big.set(f, &memBucket{members: []uint32{h}, fps: []uint64{fp}})
}

// scan adds a bucket's members as candidates (hit key hk, via) and
// reports whether the entry itself is among them. Members of SimHash
// tables count only within Hamming distance k, and only earlier documents
// count. old, when set, collects the members for refresh.
func (m *Memory) scan(hk int, via byte, b *memBucket, one uint32, sim bool, st *entryState, old *memPend) bool {
	present := false
	visit := func(h uint32, fp uint64) {
		if h == st.self {
			present = true
			return
		}
		if sim && sketch.Hamming(fp, st.qfp) > m.simK {
			return
		}
		seq := m.docs.get(h).seq
		if seq >= st.selfSeq {
			return // a replay's later documents
		}
		m.addCandidate(h, seq, hk, via, st.sc, old != nil)
		if old != nil {
			old.old = append(old.old, h)
			old.oldFps = append(old.oldFps, fp)
		}
	}
	if b == nil {
		visit(one, 0)
		return present
	}
	for i, h := range b.members {
		var fp uint64
		if sim {
			fp = b.fps[i]
		}
		visit(h, fp)
	}
	return present
}

// addCandidate counts one bucket op's hit (hit key hk) on document h: a
// document met in several generations of one table, or of one anchor's
// bucket, counts once. The best via wins: LSH, then SimHash, then passage.
func (m *Memory) addCandidate(h uint32, seq uint64, hk int, via byte, sc *memScratch, oldGen bool) {
	i, ok := sc.cands[h]
	if !ok {
		sc.cands[h] = len(sc.list)
		sc.list = append(sc.list, memCand{h: h, seq: seq, hits: 1, lastT: hk, via: via, oldGen: oldGen})
		return
	}
	c := &sc.list[i]
	if c.lastT != hk {
		c.hits++
		c.lastT = hk
	}
	c.via = min(c.via, via)
	c.oldGen = c.oldGen || oldGen
}

// finish counts the full buckets a replay looked up and rewrites the
// pending buckets (Redis: finish): members found dead are dropped,
// refreshed members of older generations copied in, and the entry is
// appended unless the bucket is full.
func (m *Memory) finish(st *entryState, dead map[uint32]bool) {
	r := st.res
	for _, p := range st.sc.rfull {
		if m.liveCount(p, st) >= p.limit {
			m.noteHot(st, p.hk)
			r.Truncated += overflowOf(p.b)
		}
	}
	for _, p := range st.sc.pend {
		members, fps := st.sc.members[:0], st.sc.fps[:0]
		if p.b != nil {
			members, fps = append(members, p.b.members...), append(fps, p.b.fps...)
		} else if p.one != bigTag {
			members = append(members, p.one)
		}
		changed := false
		if dead != nil {
			kept := 0
			for i, h := range members {
				if dead[h] {
					changed = true
					continue
				}
				members[kept] = h
				if p.sim {
					fps[kept] = fps[i]
				}
				kept++
			}
			members = members[:kept]
			if p.sim {
				fps = fps[:kept]
			}
		}
		for i, h := range p.old {
			if st.live[h] && len(members) < p.limit && !slices.Contains(members, h) {
				members = append(members, h)
				if p.sim {
					fps = append(fps, p.oldFps[i])
				}
				changed = true
			}
		}
		// A key that reaches limit members with the entry becomes common
		// (LSH and passage tables); a SimHash bucket stops growing. Only
		// live members count.
		grow := 0
		if !p.sim {
			grow = 1
		}
		if !p.present && len(members)+grow >= p.limit {
			kept := 0
			for i, h := range members {
				if h == st.self || m.alive(h, st.now) {
					members[kept] = h
					if p.sim {
						fps[kept] = fps[i]
					}
					kept++
				} else {
					changed = true
				}
			}
			members = members[:kept]
			if p.sim {
				fps = fps[:kept]
			}
		}
		overflow := overflowOf(p.b)
		switch {
		case p.present:
		case !p.sim && len(members)+1 >= p.limit:
			ex := st.self
			if len(members) > 0 {
				ex = members[0]
			}
			storeCommon(p.gs, p.field, ex, len(members)+1)
			changed = false
		case len(members) >= p.limit:
			m.noteHot(st, p.hk)
			r.Truncated += overflow
			overflow++
			if !changed && p.b != nil {
				p.b.overflow = overflow // a full bucket turned one more away
			} else {
				changed = true
			}
		default:
			members = append(members, st.self)
			if p.sim {
				fps = append(fps, st.qfp)
			}
			changed = true
		}
		if changed {
			storeBucket(p.gs, p.field, p.sim, members, fps, overflow)
		}
		st.sc.members, st.sc.fps = members[:0], fps[:0]
	}
}

// noteHot counts a full bucket (hit key hk), and an anchor's among the
// hot anchors (Redis: overflow).
func (m *Memory) noteHot(st *entryState, hk int) {
	st.hot++
	if hk >= m.passage {
		st.hotIdx = append(st.hotIdx, hk-m.passage)
	}
}

func overflowOf(b *memBucket) int {
	if b == nil {
		return 0
	}
	return b.overflow
}

// liveCount counts the members of a bucket whose document is alive (or
// is the entry).
func (m *Memory) liveCount(p memPend, st *entryState) int {
	if p.b == nil {
		if p.one == st.self || m.alive(p.one, st.now) {
			return 1
		}
		return 0
	}
	n := 0
	for _, h := range p.b.members {
		if h == st.self || m.alive(h, st.now) {
			n++
		}
	}
	return n
}

// storeBucket writes a bucket's members: a single LSH member without
// overflow takes one 8-byte map slot, anything else a memBucket.
func storeBucket(gs *memGenStripe, f uint32, sim bool, members []uint32, fps []uint64, overflow int) {
	if !sim && len(members) == 1 && overflow == 0 {
		gs.one.set(f, members[0])
		gs.big.del(f)
		return
	}
	b := &memBucket{members: slices.Clone(members), overflow: overflow}
	if sim {
		b.fps = slices.Clone(fps)
	}
	gs.big.set(f, b)
	if !sim {
		gs.one.set(f, bigTag)
	}
}

// refreshRecords carries document h's records into the current
// generation (Redis: refreshRecords); its id follows once the entry's
// stripes are unlocked.
func (m *Memory) refreshRecords(h uint32, cur *memGen, st *entryState) {
	l := m.docs.lock(h)
	l.Lock()
	d := m.docs.get(h)
	moved := d.gen.Swap(cur) != cur
	l.Unlock()
	if moved {
		cur.hmu.Lock()
		cur.handles = append(cur.handles, h)
		cur.hmu.Unlock()
	}
	st.refresh = append(st.refresh, h)
}

// refreshID copies a refreshed document's id into the current generation.
// genMu is held for reading.
func (m *Memory) refreshID(h uint32) {
	d := m.docs.get(h)
	s := idStripe(d.id)
	m.locks[s].Lock()
	gs := &m.gens[len(m.gens)-1].stripes[s]
	if gs.ids == nil {
		gs.ids = map[string]uint32{}
	}
	gs.ids[d.id] = h
	m.locks[s].Unlock()
}
