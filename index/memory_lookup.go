package index

import (
	"cmp"
	"context"
	mathbits "math/bits"
	"slices"

	"github.com/neardup/neardup/sketch"
)

// memCand is a candidate being collected (Redis: CAND, OLDC).
type memCand struct {
	h      uint32
	seq    uint64
	hits   int
	lastT  int  // hit key of the last bucket op that met it
	via    byte // the best met: 1 LSH, 2 SimHash, 3 passage
	oldGen bool // found in an older generation while collecting for refresh
}

// memPend is a bucket of the current generation to rewrite once the
// candidates are resolved (Redis: PEND and RFULL).
type memPend struct {
	gs      *memGenStripe
	field   uint32
	sim     bool
	limit   int
	b       *memBucket // the bucket as read; nil when absent or single
	one     uint32     // its single member, or bigTag
	old     []uint32   // members of older generations to carry in
	oldFps  []uint64
	present bool
	hk      int // the op's hit key (anchors: the passage table's index + j)
}

type memScratch struct {
	stripes []int
	keys    []uint64 // salted bucket keys: bands, SimHash blocks, then anchors
	sim     []uint64
	anchors []uint64       // anchorKeys of the entry's anchors
	sorted  []uint64       // the entry's anchors, sorted and distinct
	cands   map[uint32]int // handle → index in list
	list    []memCand
	order   []memCand // list in rank order
	common  map[int]int
	hotIdx  []int
	hotDocs []int
	touched uint64 // what touch read: keeps its loads from being dropped
	pend    []memPend
	rfull   []memPend
	dead    map[uint32]bool
	out     []Candidate
	members []uint32
	fps     []uint64
}

// entryState is the lookup of one entry (Redis: SELF, MODE and the
// per-document tables).
type entryState struct {
	self     uint32
	selfSeq  uint64
	lookOnly bool // a replay without a verdict: look up, store nothing (MODE 1)
	check    bool // Lookup: not a stored document at all
	qfp      uint64
	now      int64
	res      *Result
	sc       *memScratch
	hot      int
	hotIdx   []int           // indices of the distinct anchors whose keys are common
	commonHK map[int]int     // hit keys counted common → the most documents holding them
	refresh  []uint32        // documents whose ids to copy into the current generation
	live     map[uint32]bool // candidates returned (Redis: LIVEC)
	recall   bool            // a new document: keep its lookup (memRecall)
	recalled *memRecall      // a replay answered from its first attempt's lookup
	candH    []uint32        // the handles of res.Candidates
	imatch   uint32          // the I-Match lane's hit, bigTag: none
	copy     uint32          // the content lane's hit, bigTag: none
}

// LookupInsert implements [Store].
func (m *Memory) LookupInsert(ctx context.Context, docs []Entry) ([]Result, error) {
	return m.lookup(ctx, docs, false)
}

// Lookup implements [Store].
func (m *Memory) Lookup(ctx context.Context, docs []Entry) ([]Result, error) {
	return m.lookup(ctx, docs, true)
}

// lookup looks docs up and, unless check, inserts them.
func (m *Memory) lookup(ctx context.Context, docs []Entry, check bool) ([]Result, error) {
	if err := validateEntries(m.p, docs); err != nil {
		return nil, err
	}
	now := m.clock().UnixNano()
	if err := m.begin(ctx, now); err != nil {
		return nil, err
	}
	defer m.genMu.RUnlock()
	sc := m.scratch.Get().(*memScratch)
	defer m.scratch.Put(sc)
	out := make([]Result, len(docs))
	for i := range docs {
		if err := m.lookupInsert(&docs[i], now, sc, &out[i], check); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (m *Memory) lookupInsert(e *Entry, now int64, sc *memScratch, r *Result, check bool) error {
	sc.keys = sc.keys[:0]
	for i, k := range e.Bands {
		sc.keys = append(sc.keys, salt(i, k))
	}
	if e.HasSimHash {
		sc.sim = simBlockKeys(sc.sim[:0], e.SimHash, m.simK)
		for i, k := range sc.sim {
			sc.keys = append(sc.keys, salt(m.nbands+i, k))
		}
	}
	// anchorKeys, keeping the sorted distinct anchors for hotAnchorsOf.
	sc.sorted = append(sc.sorted[:0], e.Anchors...)
	slices.Sort(sc.sorted)
	sc.sorted = slices.Compact(sc.sorted)
	sc.anchors = sc.anchors[:0]
	for _, x := range sc.sorted {
		sc.anchors = append(sc.anchors, sketch.Mix64(x^passageSalt))
	}
	for _, k := range sc.anchors {
		sc.keys = append(sc.keys, salt(m.passage, k))
	}
	sc.stripes = append(sc.stripes[:0], idStripe(e.ID))
	for _, k := range sc.keys {
		sc.stripes = append(sc.stripes, bucketStripe(k))
	}
	if e.HasIMatch {
		sc.stripes = append(sc.stripes, digestStripe(&e.IMatch))
	}
	if e.HasContent {
		sc.stripes = append(sc.stripes, contentStripe(&e.Content))
	}
	locked := m.lockSet(sc.stripes)
	clear(sc.common)
	st := entryState{now: now, res: r, sc: sc, qfp: e.SimHash, check: check, hotIdx: sc.hotIdx[:0], commonHK: sc.common, imatch: bigTag, copy: bigTag}
	err := m.lookupInsertLocked(e, &st)
	sc.hotIdx, sc.common = st.hotIdx, st.commonHK
	m.unlockSet(locked)
	if err != nil {
		return err
	}
	// Refreshed documents' ids go into the current generation now, each
	// under its own stripe lock: the entry's stripes need not cover them.
	for _, h := range st.refresh {
		m.refreshID(h)
	}
	if rc := st.recalled; rc != nil {
		r.CommonAnchors, r.CommonAnchorDocs = hotAnchorsOf(sc.sorted, rc.hotIdx, rc.hotDocs)
	} else {
		docs := sc.hotDocs[:0]
		for _, i := range st.hotIdx {
			docs = append(docs, st.commonHK[m.passage+i])
		}
		sc.hotDocs = docs
		r.CommonAnchors, r.CommonAnchorDocs = hotAnchorsOf(sc.sorted, st.hotIdx, docs)
		r.Common = st.hot
		if st.recall {
			m.keepRecall(r, &st)
		}
	}
	if check {
		return nil
	}
	m.stats.docs.Add(1)
	m.stats.hot.Add(uint64(st.hot))
	m.stats.candidates.Add(uint64(len(r.Candidates)))
	m.stats.passage.Add(uint64(passageCands(r.Candidates)))
	m.stats.withheld.Add(uint64(r.Truncated))
	m.stats.dropped.Add(uint64(r.Dropped))
	if r.Replay {
		m.stats.replays.Add(1)
	}
	if r.IMatch != "" {
		m.stats.imatch.Add(1)
	}
	if r.Copy != "" {
		m.stats.copies.Add(1)
	}
	return nil
}

// lockSet locks the distinct stripes of s in increasing order and
// returns them in that order (in s's storage): a 256-bit set instead of a
// sort, since an entry names about a hundred stripes.
func (m *Memory) lockSet(s []int) []int {
	var set [memStripes / 64]uint64
	for _, i := range s {
		set[i>>6] |= 1 << (i & 63)
	}
	s = s[:0]
	for w, bits := range set {
		for bits != 0 {
			i := w<<6 | mathbits.TrailingZeros64(bits)
			bits &= bits - 1
			m.locks[i].Lock()
			s = append(s, i)
		}
	}
	return s
}

func (m *Memory) unlockSet(s []int) {
	for _, i := range s {
		m.locks[i].Unlock()
	}
}

// lookupInsertLocked is the Redis script's step for one document; every
// stripe the entry touches is locked.
func (m *Memory) lookupInsertLocked(e *Entry, st *entryState) error {
	r, sc := st.res, st.sc
	cur := m.gens[len(m.gens)-1]
	older := m.readableOlder(st.now)
	if done, err := m.admit(e, st, cur); done || err != nil {
		return err
	}

	clear(sc.cands)
	sc.list, sc.pend, sc.rfull = sc.list[:0], sc.pend[:0], sc.rfull[:0]
	copyH, copyOld := uint32(bigTag), false
	if e.HasContent {
		var skip bool
		copyH, copyOld, skip = m.contentOp(&e.Content, cur, older, st)
		st.copy = copyH
		if copyH != bigTag {
			d := m.docs.get(copyH)
			r.Copy, r.CopySeq = d.id, d.seq
		}
		if skip {
			if !st.lookOnly {
				// An exact copy enters no bucket, so no lookup returns it
				// while its representative is stored (the content lane
				// keeps it only as a stand-in for when the representative
				// is deleted): it keeps no features, and a keys record of
				// its content lane only (the Redis script's rule).
				l := m.docs.lock(st.self)
				l.Lock()
				d := m.docs.get(st.self)
				d.features, d.keys = nil, encodeLaneKeys(e)
				l.Unlock()
			}
			if copyOld && m.refresh && !st.check {
				m.refreshRecords(copyH, cur, st)
			}
			return nil
		}
	}
	// Each bucket op has a hit key of its own: a band or SimHash table's
	// index, or for anchor j the passage table's index + j.
	tabled := len(sc.keys) - len(sc.anchors)
	m.touch(sc, cur, older)
	for i, key := range sc.keys {
		t, hk := i, i
		if i >= tabled {
			t, hk = m.passage, m.passage+i-tabled
		}
		m.tableOp(t, hk, key, cur, older, st)
	}
	imH, imOld := uint32(bigTag), false
	if e.HasIMatch {
		imH, imOld = m.imatchOp(&e.IMatch, cur, older, st)
	}

	dead := m.resolveRanked(st, cur)
	m.finish(st, dead)
	if imH != bigTag {
		d := m.docs.get(imH)
		r.IMatch, r.IMatchSeq = d.id, d.seq
		r.IMatchFeatures, r.IMatchSource, r.IMatchVerdict = m.stored(imH) // sources.go
		if imOld && m.refresh && !st.check {
			m.refreshRecords(imH, cur, st)
		}
	}
	if copyH != bigTag && copyOld && m.refresh && !st.check {
		m.refreshRecords(copyH, cur, st)
	}
	st.imatch = imH
	return nil
}

// admit finds e's document among the stored ones (a replay), or places
// it after every stored document (check), or stores it under the next
// Seq, and sets st.self, st.selfSeq and the result's Seq. done reports
// that e is answered already: a replay with a recorded verdict or a
// recorded lookup, or a record read again after its document's removal.
func (m *Memory) admit(e *Entry, st *entryState, cur *memGen) (done bool, err error) {
	r := st.res
	if h, ok := m.findID(e.ID, st.now); ok && m.alive(h, st.now) {
		// A replay (Lookup: a stored id), answered with the recorded
		// verdict, else the lookup the first attempt recorded, else the
		// lookups again among lower Seqs; nothing is stored.
		st.self, st.lookOnly = h, true
		l := m.docs.lock(h)
		l.Lock()
		d := m.docs.get(h)
		r.Replay, r.Seq, st.selfSeq = true, d.seq, d.seq
		if d.hasVerdict {
			r.Verdict = d.verdict
		}
		rc := d.recall
		l.Unlock()
		if r.Verdict != nil {
			return true, nil
		}
		if rc != nil {
			m.recalled(rc, st)
			return true, nil
		}
	} else if st.check {
		// Looked up after every stored document; nothing is stored.
		st.self, st.selfSeq, st.lookOnly = bigTag, m.seq.Load()+1, true
		r.Seq = st.selfSeq
	} else if mark, ok := m.goneMark(e.ID, st.now); ok && goneAfter(e.Origin, mark) {
		// A record read again after its document was removed.
		r.Gone = true
		return true, nil
	} else {
		h, err := m.docs.alloc()
		if err != nil {
			return false, err
		}
		// The Seq is taken while every stripe the entry touches is
		// locked: conflicting entries are serialized in Seq order.
		seq := m.seq.Add(1)
		d := m.docs.get(h)
		l := m.docs.lock(h)
		l.Lock()
		d.reset()
		d.id, d.seq, d.keys, d.origin = e.ID, seq, encodeKeys(e), e.Origin
		if len(e.Features) > 0 {
			d.features = slices.Clone(e.Features)
		}
		d.gen.Store(cur)
		l.Unlock()
		m.bySeq.put(seq, h)
		st.self, st.selfSeq, r.Seq = h, seq, seq
		st.recall = true
		cur.count.Add(1)
		cur.hmu.Lock()
		cur.handles = append(cur.handles, h)
		cur.hmu.Unlock()
		gs := &cur.stripes[idStripe(e.ID)]
		if gs.ids == nil {
			gs.ids = map[string]uint32{}
		}
		gs.ids[d.id] = h
	}
	return false, nil
}

// resolveRanked resolves the entry's candidates (st.sc.list) in rank
// order until MaxCandidates live ones are found, into the result's
// Candidates and Dropped, and returns the dead documents met on the way
// (nil: none), which finish drops from the pending buckets.
func (m *Memory) resolveRanked(st *entryState, cur *memGen) map[uint32]bool {
	r, sc := st.res, st.sc
	// Resolve in rank order until MaxCandidates live ones are found; the
	// dead ones met on the way are dropped from the pending buckets.
	order := append(sc.order[:0], sc.list...)
	sc.order = order
	slices.SortFunc(order, func(a, b memCand) int {
		return cmp.Or(cmp.Compare(b.hits, a.hits), cmp.Compare(b.seq, a.seq))
	})
	clear(sc.dead)
	anyDead := false
	sc.out = sc.out[:0]
	for i, c := range order {
		if len(sc.out) == m.maxCands {
			r.Dropped = len(order) - i
			break
		}
		if !m.alive(c.h, st.now) {
			if sc.dead == nil {
				sc.dead = map[uint32]bool{}
			}
			sc.dead[c.h], anyDead = true, true
			continue
		}
		cand := Candidate{ID: m.docs.get(c.h).id, Seq: c.seq, Via: via(c.via), Hits: c.hits}
		cand.Features, cand.Source, cand.Verdict = m.stored(c.h) // sources.go
		sc.out = append(sc.out, cand)
		if st.recall {
			st.candH = append(st.candH, c.h)
		}
		if c.oldGen {
			m.refreshRecords(c.h, cur, st)
			if st.live == nil {
				st.live = map[uint32]bool{}
			}
			st.live[c.h] = true
		}
	}
	if len(sc.out) > 0 {
		r.Candidates = slices.Clone(sc.out)
	}
	if anyDead {
		return sc.dead
	}
	return nil
}

// touch reads the first slot each of the entry's keys probes in the
// bucket maps of every generation it reads, in one loop without
// dependencies between its loads, so that their cache misses overlap;
// the bucket ops that follow then mostly hit the cache. The entry's
// stripes are locked.
func (m *Memory) touch(sc *memScratch, cur *memGen, older []*memGen) {
	var x uint64
	for _, key := range sc.keys {
		s, f := bucketStripe(key), bucketField(key)
		gs := &cur.stripes[s]
		x ^= gs.one.peek(f) ^ gs.big.idx.peek(f)
		for _, g := range older {
			gs := &g.stripes[s]
			x ^= gs.one.peek(f) ^ gs.big.idx.peek(f)
		}
	}
	sc.touched = x
}

// readableOlder returns the generations before the current one that a
// lookup reads.
func (m *Memory) readableOlder(now int64) []*memGen {
	older := m.gens[:len(m.gens)-1]
	for len(older) > 0 && !m.readable(older[0], now) {
		older = older[1:]
	}
	return older
}

// findID returns the handle stored for id in a readable generation,
// oldest first (Redis: register). Its stripe is locked by the caller.
func (m *Memory) findID(id string, now int64) (uint32, bool) {
	s := idStripe(id)
	for _, g := range m.gens {
		if !m.readable(g, now) {
			continue
		}
		if h, ok := g.stripes[s].ids[id]; ok {
			return h, true
		}
	}
	return 0, false
}

// goneMark returns the origin of the document last removed under id, in
// a readable generation, newest first. The id's stripe is locked.
func (m *Memory) goneMark(id string, now int64) (string, bool) {
	s := idStripe(id)
	for i := len(m.gens) - 1; i >= 0; i-- {
		if g := m.gens[i]; m.readable(g, now) {
			if o, ok := g.stripes[s].gone[id]; ok {
				return o, true
			}
		}
	}
	return "", false
}

// lowerLive reports whether a lane hit h is usable by the entry: not the
// entry itself, earlier, and alive.
func (m *Memory) lowerLive(h uint32, st *entryState) bool {
	return h != st.self && m.docs.get(h).seq < st.selfSeq && m.alive(h, st.now)
}

// contentOp is the content lane (Redis: copyOp). It returns the first
// live earlier document with the same content (bigTag for none), whether
// it was found in an older generation, and whether the entry is a copy of
// the current generation's representative, which ends its lookup.
func (m *Memory) contentOp(c *sketch.ContentDigest, cur *memGen, older []*memGen, st *entryState) (found uint32, old, skip bool) {
	found = bigTag
	s := contentStripe(c)
	for _, g := range older {
		if h, ok := g.stripes[s].copies[*c]; ok && m.lowerLive(h, st) {
			found, old = h, true
			break
		}
	}
	gs := &cur.stripes[s]
	if h, ok := gs.copies[*c]; ok && m.lowerLive(h, st) {
		if found == bigTag {
			found = h
		}
		if !st.lookOnly {
			// One of the recent copies a delete of the representative
			// makes the representative (unlinkContent).
			if gs.recent == nil {
				gs.recent = map[sketch.ContentDigest][]memRef{}
			}
			l := append(gs.recent[*c], memRef{st.self, st.selfSeq})
			gs.recent[*c] = l[max(len(l)-laneCopies, 0):]
		}
		return found, old, true
	}
	if st.lookOnly {
		return found, old, found != bigTag
	}
	if gs.copies == nil {
		gs.copies = map[sketch.ContentDigest]uint32{}
	}
	rep := st.self
	if m.refresh && found != bigTag {
		rep = found
	}
	gs.copies[*c] = rep
	return found, old, false
}

// imatchOp is the I-Match lane (Redis: exactOp).
func (m *Memory) imatchOp(d *sketch.Digest, cur *memGen, older []*memGen, st *entryState) (uint32, bool) {
	s := digestStripe(d)
	gs := &cur.stripes[s]
	for _, g := range older {
		if h, ok := g.stripes[s].imatch[*d]; ok && m.lowerLive(h, st) {
			if !st.lookOnly {
				if gs.imatch == nil {
					gs.imatch = map[sketch.Digest]uint32{}
				}
				if _, ok := gs.imatch[*d]; !ok {
					rep := st.self
					if m.refresh {
						rep = h
					}
					gs.imatch[*d] = rep
				}
			}
			return h, true
		}
	}
	h, ok := gs.imatch[*d]
	if st.lookOnly {
		if ok && m.lowerLive(h, st) {
			return h, false
		}
		return bigTag, false
	}
	if ok && h != st.self && m.alive(h, st.now) {
		return h, false
	}
	if gs.imatch == nil {
		gs.imatch = map[sketch.Digest]uint32{}
	}
	gs.imatch[*d] = st.self
	return bigTag, false
}
