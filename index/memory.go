package index

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neardup/neardup/sketch"
)

// MemoryConfig configures the in-memory store.
type MemoryConfig struct {
	// Params are the sketch parameters (required).
	Params Params
	// Retention is how long a document stays findable after insertion (or
	// after its last match with RefreshOnMatch); 0 keeps documents until
	// deleted. Expired documents are purged during later calls.
	Retention time.Duration
	// RefreshOnMatch restarts a document's retention when it is returned
	// as a candidate or exact hit.
	RefreshOnMatch bool
	// MaxBucket is the hot-bucket guard of the LSH tables (default 64): a
	// bucket holds and returns at most this many documents; later ones are
	// turned away and counted in Result.Truncated.
	MaxBucket int
	// MaxSimHashBucket is the guard of the SimHash tables (default 4096).
	// Their buckets are keyed by 64/(k+1) bits only, so they are naturally
	// larger than LSH buckets.
	MaxSimHashBucket int
	// Clock returns the current time (default time.Now).
	Clock func() time.Time
}

// Defaults of the hot-bucket guards.
const (
	DefaultMaxBucket        = 64
	DefaultMaxSimHashBucket = 4096
)

const (
	memStripes   = 256 // lock stripes for buckets, ids and digests
	memDocShards = 64  // shards of the seq → document map
)

// Memory is the in-memory [Store]: buckets and ids live in 256 lock
// stripes, each a plain map behind a mutex. LookupInsert locks every stripe
// an entry touches in increasing order (so it cannot deadlock) and takes
// the entry's Seq while holding them, which makes concurrent calls
// serializable in Seq order: its results equal a serial execution, exactly
// as on a single Redis node. Memory is safe for concurrent use and starts
// no goroutines.
type Memory struct {
	p              Params
	retention      int64 // ns; 0 = forever
	refresh        bool
	maxBucket      int
	maxSimBucket   int
	clock          func() time.Time
	seq            atomic.Uint64
	closed         atomic.Bool
	stats          counters
	stripes        [memStripes]memStripe
	docs           [memDocShards]memDocShard
	expMu          sync.Mutex
	expQ           []memExpiry // FIFO in expiry order
	expHead        int
	scratchPool    sync.Pool
	simK           int
	tables, nbands int
}

type counters struct {
	docs, replays, candidates, exact, hot, withheld atomic.Uint64
}

func (c *counters) snapshot() Stats {
	return Stats{
		Docs: c.docs.Load(), Replays: c.replays.Load(), Candidates: c.candidates.Load(),
		Exact: c.exact.Load(), HotBuckets: c.hot.Load(), Withheld: c.withheld.Load(),
	}
}

type memExpiry struct {
	seq     uint64
	expires int64
}

// memBucket is a bucket with more than one member (or an overflow count),
// and every SimHash bucket. A member is its seq (LSH, w = 1) or its seq
// and fingerprint (SimHash, w = 2).
type memBucket struct {
	members  []uint64
	overflow int
}

// bigTag in a stripe's one map sends the lookup to its big map.
const bigTag = 1 << 63

type memStripe struct {
	mu sync.Mutex
	// An LSH bucket with one member is one[key] = its seq (16-byte map
	// slots keep the common case compact and cache-friendly); larger
	// ones and all SimHash buckets live in big. Keys are salted with the
	// table.
	one   map[uint64]uint64
	big   map[uint64]*memBucket
	ids   map[string]uint64
	exact map[sketch.Digest]uint64
	_     [40]byte // keep neighbouring mutexes off one cache line
}

type memDoc struct {
	id        string
	seq       uint64
	features  []byte
	keys      []uint64 // salted keys of every bucket the document was added to
	nlsh      int      // keys[:nlsh] are LSH buckets, the rest SimHash
	fp        uint64
	digest    sketch.Digest
	hasDigest bool
	expires   atomic.Int64 // unix ns; 0 = never
	verdict   []byte       // guarded by the shard's mu
}

type memDocShard struct {
	mu sync.RWMutex
	m  map[uint64]*memDoc
	_  [32]byte
}

// NewMemory returns an empty in-memory store.
func NewMemory(cfg MemoryConfig) (*Memory, error) {
	if err := cfg.Params.validate(); err != nil {
		return nil, err
	}
	if cfg.Retention < 0 || cfg.MaxBucket < 0 || cfg.MaxSimHashBucket < 0 {
		return nil, fmt.Errorf("%w: memory: negative retention or bucket limit", ErrInvalid)
	}
	m := &Memory{
		p:            cfg.Params,
		retention:    int64(cfg.Retention),
		refresh:      cfg.RefreshOnMatch,
		maxBucket:    cmp.Or(cfg.MaxBucket, DefaultMaxBucket),
		maxSimBucket: cmp.Or(cfg.MaxSimHashBucket, DefaultMaxSimHashBucket),
		clock:        cfg.Clock,
		simK:         cfg.Params.SimHashK,
		tables:       cfg.Params.tables(),
		nbands:       cfg.Params.Bands,
	}
	if m.clock == nil {
		m.clock = time.Now
	}
	for i := range m.stripes {
		m.stripes[i].one = map[uint64]uint64{}
		m.stripes[i].big = map[uint64]*memBucket{}
		m.stripes[i].ids = map[string]uint64{}
		m.stripes[i].exact = map[sketch.Digest]uint64{}
	}
	for i := range m.docs {
		m.docs[i].m = map[uint64]*memDoc{}
	}
	m.scratchPool.New = func() any { return &memScratch{seen: map[uint64]int{}} }
	return m, nil
}

// Stats returns the counters.
func (m *Memory) Stats() Stats { return m.stats.snapshot() }

// Close marks the store closed. It does not free memory held by callers.
func (m *Memory) Close() error {
	m.closed.Store(true)
	return nil
}

func (m *Memory) check(ctx context.Context) error {
	if m.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

func (m *Memory) idStripe(id string) int { return int(fnv32(id) % memStripes) }

// salt gives table t's bucket key k a key of its own in the shared
// stripe maps (distinct tables colliding is a 2^-64 event).
func salt(t int, k uint64) uint64 { return k ^ sketch.Mix64(uint64(t)+1) }

func bucketStripe(key uint64) int { return int(sketch.Mix64(key) % memStripes) }

func digestStripe(d *sketch.Digest) int {
	return int((uint64(d[0]) | uint64(d[1])<<8) % memStripes)
}

func (m *Memory) doc(seq uint64) *memDoc {
	sh := &m.docs[seq%memDocShards]
	sh.mu.RLock()
	d := sh.m[seq]
	sh.mu.RUnlock()
	return d
}

func alive(d *memDoc, now int64) bool {
	if d == nil {
		return false
	}
	e := d.expires.Load()
	return e == 0 || e > now
}

type memScratch struct {
	keys    []uint64 // salted
	stripes []int
	sim     []uint64
	seen    map[uint64]int // candidate seq → index in cands
	cands   []Candidate
}

// lockSet locks the distinct stripes in s (sorted in place) and returns
// the deduplicated list for unlocking.
func (m *Memory) lockSet(s []int) []int {
	slices.Sort(s)
	s = slices.Compact(s)
	for _, i := range s {
		m.stripes[i].mu.Lock()
	}
	return s
}

func (m *Memory) unlockSet(s []int) {
	for _, i := range s {
		m.stripes[i].mu.Unlock()
	}
}

// LookupInsert implements [Store].
func (m *Memory) LookupInsert(ctx context.Context, docs []Entry) ([]Result, error) {
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	if err := validateEntries(m.p, docs); err != nil {
		return nil, err
	}
	now := m.clock().UnixNano()
	if m.retention > 0 {
		m.purge(now, 2*len(docs)+8)
	}
	sc := m.scratchPool.Get().(*memScratch)
	defer m.scratchPool.Put(sc)
	out := make([]Result, len(docs))
	for i := range docs {
		m.lookupInsert(&docs[i], now, sc, &out[i])
	}
	return out, nil
}

func (m *Memory) lookupInsert(e *Entry, now int64, sc *memScratch, r *Result) {
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
	idStripe := m.idStripe(e.ID)
	sc.stripes = append(sc.stripes[:0], idStripe)
	for _, k := range sc.keys {
		sc.stripes = append(sc.stripes, bucketStripe(k))
	}
	if e.HasIMatch {
		sc.stripes = append(sc.stripes, digestStripe(&e.IMatch))
	}
	locked := m.lockSet(sc.stripes)

	m.stats.docs.Add(1)
	ids := m.stripes[idStripe].ids
	var self *memDoc
	if seq, ok := ids[e.ID]; ok {
		if d := m.doc(seq); alive(d, now) {
			self = d
		}
	}
	if self != nil {
		m.stats.replays.Add(1)
		r.Replay, r.Seq = true, self.seq
		sh := &m.docs[self.seq%memDocShards]
		sh.mu.RLock()
		r.Verdict = self.verdict
		sh.mu.RUnlock()
		if r.Verdict != nil {
			m.unlockSet(locked)
			return
		}
	} else {
		// The Seq is taken while every stripe the entry touches is
		// locked: conflicting entries are serialized in Seq order.
		self = &memDoc{id: e.ID, seq: m.seq.Add(1), fp: e.SimHash, digest: e.IMatch, hasDigest: e.HasIMatch,
			keys: make([]uint64, 0, len(sc.keys))}
		if len(e.Features) > 0 {
			self.features = slices.Clone(e.Features)
		}
		if m.retention > 0 {
			self.expires.Store(now + m.retention)
		}
		r.Seq = self.seq
		ids[e.ID] = self.seq
	}
	insert := !r.Replay

	clear(sc.seen)
	sc.cands = sc.cands[:0]
	for i, k := range sc.keys {
		st := &m.stripes[bucketStripe(k)]
		sim := i >= m.nbands
		w, limit := 1, m.maxBucket
		var b *memBucket
		if sim {
			w, limit = 2, m.maxSimBucket
			b = st.big[k]
		} else if v, ok := st.one[k]; !ok {
			if insert {
				st.one[k] = self.seq
				self.keys = append(self.keys, k)
				self.nlsh++
			}
			continue
		} else if v&bigTag == 0 { // a single member
			if v != self.seq && !(r.Replay && v > self.seq) {
				if d := m.doc(v); alive(d, now) {
					m.addCandidate(sc, d, false, now)
				}
			}
			if insert {
				b := &memBucket{members: []uint64{v}}
				st.big[k], st.one[k] = b, bigTag
				if limit <= 1 {
					m.hotBucket(b, r, true)
				} else {
					b.members = append(b.members, self.seq)
					self.keys = append(self.keys, k)
					self.nlsh++
				}
			} else if limit <= 1 {
				m.stats.hot.Add(1)
			}
			continue
		} else {
			b = st.big[k]
		}
		if b == nil {
			if !insert {
				continue
			}
			b = &memBucket{}
			st.big[k] = b
		}
		for j := 0; j < len(b.members); j += w {
			s := b.members[j]
			if s == self.seq || (r.Replay && s > self.seq) {
				continue
			}
			if sim && sketch.Hamming(b.members[j+1], e.SimHash) > m.simK {
				continue
			}
			if d := m.doc(s); alive(d, now) {
				m.addCandidate(sc, d, sim, now)
			}
		}
		if len(b.members)/w >= limit {
			m.hotBucket(b, r, insert)
			continue
		}
		if insert {
			b.members = append(b.members, self.seq)
			if sim {
				b.members = append(b.members, e.SimHash)
			} else {
				self.nlsh++
			}
			self.keys = append(self.keys, k)
		}
	}
	if e.HasIMatch {
		st := &m.stripes[digestStripe(&e.IMatch)]
		if s, ok := st.exact[e.IMatch]; ok && s != self.seq {
			if d := m.doc(s); alive(d, now) && (!r.Replay || s < self.seq) {
				r.Exact, r.ExactSeq = d.id, s
				m.touch(d, now)
				m.stats.exact.Add(1)
			} else if insert && !alive(d, now) {
				st.exact[e.IMatch] = self.seq
			}
		} else if !ok && insert {
			st.exact[e.IMatch] = self.seq
		}
	}
	if len(sc.cands) > 0 {
		r.Candidates = slices.Clone(sc.cands)
		sortCandidates(r.Candidates)
		m.stats.candidates.Add(uint64(len(r.Candidates)))
	}
	if r.Truncated > 0 {
		m.stats.withheld.Add(uint64(r.Truncated))
	}
	if insert {
		// Published once self.keys is final; nobody could reach self
		// earlier because its stripes were locked.
		sh := &m.docs[self.seq%memDocShards]
		sh.mu.Lock()
		sh.m[self.seq] = self
		sh.mu.Unlock()
		if m.retention > 0 {
			m.pushExpiry(self.seq, now+m.retention)
		}
	}
	m.unlockSet(locked)
}

// hotBucket counts a lookup of a full bucket: its overflow so far is
// withheld, and an inserting document is turned away.
func (m *Memory) hotBucket(b *memBucket, r *Result, insert bool) {
	m.stats.hot.Add(1)
	r.Truncated += b.overflow
	if insert {
		b.overflow++
	}
}

func (m *Memory) addCandidate(sc *memScratch, d *memDoc, sim bool, now int64) {
	if i, ok := sc.seen[d.seq]; ok {
		if !sim {
			sc.cands[i].Via = ViaLSH
		}
		return
	}
	via := ViaLSH
	if sim {
		via = ViaSimHash
	}
	sc.seen[d.seq] = len(sc.cands)
	sc.cands = append(sc.cands, Candidate{ID: d.id, Seq: d.seq, Via: via})
	m.touch(d, now)
}

// touch restarts d's retention when RefreshOnMatch is set.
func (m *Memory) touch(d *memDoc, now int64) {
	if !m.refresh || m.retention == 0 {
		return
	}
	exp := now + m.retention
	if d.expires.Load() < exp {
		d.expires.Store(exp)
		m.pushExpiry(d.seq, exp)
	}
}

func (m *Memory) pushExpiry(seq uint64, exp int64) {
	m.expMu.Lock()
	m.expQ = append(m.expQ, memExpiry{seq, exp})
	m.expMu.Unlock()
}

// purge removes up to limit expired documents. The queue is in expiry
// order because every push is now+Retention with a non-decreasing now
// (a refreshed document is pushed again and its stale item skipped).
func (m *Memory) purge(now int64, limit int) {
	for range limit {
		m.expMu.Lock()
		if m.expHead == len(m.expQ) || m.expQ[m.expHead].expires > now {
			m.expMu.Unlock()
			return
		}
		it := m.expQ[m.expHead]
		m.expHead++
		if m.expHead > 1024 && m.expHead*2 > len(m.expQ) {
			m.expQ = append(m.expQ[:0], m.expQ[m.expHead:]...)
			m.expHead = 0
		}
		m.expMu.Unlock()
		if d := m.doc(it.seq); d != nil && !alive(d, now) {
			m.remove(d)
		}
	}
}

// remove deletes d from every structure, if it is still the document
// stored under its id.
func (m *Memory) remove(d *memDoc) {
	set := []int{m.idStripe(d.id)}
	for _, k := range d.keys {
		set = append(set, bucketStripe(k))
	}
	if d.hasDigest {
		set = append(set, digestStripe(&d.digest))
	}
	set = m.lockSet(set)
	defer m.unlockSet(set)
	sh := &m.docs[d.seq%memDocShards]
	sh.mu.Lock()
	_, present := sh.m[d.seq]
	delete(sh.m, d.seq)
	sh.mu.Unlock()
	if !present {
		return
	}
	ids := m.stripes[m.idStripe(d.id)].ids
	if ids[d.id] == d.seq {
		delete(ids, d.id)
	}
	for i, k := range d.keys {
		st := &m.stripes[bucketStripe(k)]
		if i < d.nlsh {
			if v, ok := st.one[k]; ok && v == d.seq {
				delete(st.one, k)
				continue
			}
		}
		b := st.big[k]
		if b == nil {
			continue
		}
		w := 1
		if i >= d.nlsh {
			w = 2
		}
		for j := 0; j < len(b.members); j += w {
			if b.members[j] == d.seq {
				b.members = slices.Delete(b.members, j, j+w)
				break
			}
		}
		switch {
		case len(b.members) == 0 && b.overflow == 0:
			delete(st.big, k)
			delete(st.one, k)
		case w == 1 && len(b.members) == 1 && b.overflow == 0:
			st.one[k] = b.members[0]
			delete(st.big, k)
		}
	}
	if d.hasDigest {
		st := &m.stripes[digestStripe(&d.digest)]
		if st.exact[d.digest] == d.seq {
			delete(st.exact, d.digest)
		}
	}
}

// Features implements [Store].
func (m *Memory) Features(ctx context.Context, ids []string) ([][]byte, error) {
	return m.records(ctx, ids, func(d *memDoc) []byte {
		if d.features == nil {
			return []byte{} // stored without features: known, empty
		}
		return d.features
	})
}

// Verdicts implements [Store].
func (m *Memory) Verdicts(ctx context.Context, ids []string) ([][]byte, error) {
	return m.records(ctx, ids, func(d *memDoc) []byte { return d.verdict })
}

// records returns pick(d) for each live id (nil for unknown or expired
// ids), holding the document's shard lock while picking.
func (m *Memory) records(ctx context.Context, ids []string, pick func(*memDoc) []byte) ([][]byte, error) {
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	now := m.clock().UnixNano()
	out := make([][]byte, len(ids))
	for i, id := range ids {
		if d := m.lookupID(id, now); d != nil {
			sh := &m.docs[d.seq%memDocShards]
			sh.mu.Lock()
			out[i] = pick(d)
			sh.mu.Unlock()
		}
	}
	return out, nil
}

func (m *Memory) lookupID(id string, now int64) *memDoc {
	st := &m.stripes[m.idStripe(id)]
	st.mu.Lock()
	seq, ok := st.ids[id]
	st.mu.Unlock()
	if !ok {
		return nil
	}
	if d := m.doc(seq); alive(d, now) {
		return d
	}
	return nil
}

// RecordVerdict implements [Store].
func (m *Memory) RecordVerdict(ctx context.Context, id string, verdict []byte) error {
	if err := m.check(ctx); err != nil {
		return err
	}
	d := m.lookupID(id, m.clock().UnixNano())
	if d == nil {
		return fmt.Errorf("index: record verdict %q: %w", id, ErrNotFound)
	}
	sh := &m.docs[d.seq%memDocShards]
	sh.mu.Lock()
	if d.verdict == nil {
		d.verdict = append([]byte{}, verdict...)
	}
	sh.mu.Unlock()
	return nil
}

// Delete implements [Store].
func (m *Memory) Delete(ctx context.Context, ids ...string) error {
	if err := m.check(ctx); err != nil {
		return err
	}
	for _, id := range ids {
		st := &m.stripes[m.idStripe(id)]
		st.mu.Lock()
		seq, ok := st.ids[id]
		st.mu.Unlock()
		if !ok {
			continue
		}
		if d := m.doc(seq); d != nil {
			m.remove(d)
		}
	}
	return nil
}

// fnv32 is 32-bit FNV-1a (hash/fnv). The Redis store computes the same
// function in Lua to place ids, so it is frozen; TestFNV32Lua checks that
// both agree.
func fnv32(s string) uint32 {
	h := fnv.New32a()
	io.WriteString(h, s) // a hash.Hash never fails to write
	return h.Sum32()
}
