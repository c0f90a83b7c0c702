package index

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	mathbits "math/bits"
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
	// Retention is how long a document stays findable: at least Retention
	// and at most Retention+Generation after its insertion (or its last
	// match with RefreshOnMatch), as in Redis. 0 keeps documents until
	// deleted, or until Capacity evicts them.
	Retention time.Duration
	// Generation is the width of a time generation (default Retention):
	// documents are evicted a generation at a time.
	Generation time.Duration
	// Capacity caps the documents of one generation: when the current
	// generation holds Capacity documents a new one starts, and the oldest
	// is evicted once more than max(⌈Retention/Generation⌉+1, 2)
	// generations exist. The store then holds at most that many times
	// Capacity documents, whatever their age: the cap wins over Retention.
	// 0 means no cap.
	Capacity int
	// RefreshOnMatch carries a document found as a candidate or lane hit
	// in an older generation into the current one.
	RefreshOnMatch bool
	// CommonDocs is how many documents make a key of the LSH and passage
	// tables common (configuration key index.common_docs; default
	// DefaultCommonDocs): a common key yields only its exemplar (the first
	// document that held it) as a candidate and takes no more documents
	// (Result.Common).
	CommonDocs int
	// MaxSimHashBucket is the guard of the SimHash tables (default 4096).
	// Their buckets are keyed by 64/(k+1) bits only, so they are naturally
	// larger than LSH buckets.
	MaxSimHashBucket int
	// MaxCandidates bounds the candidates returned per entry (default
	// DefaultMaxCandidates), best ranked first (Result.Candidates).
	MaxCandidates int
	// Clock returns the current time (default time.Now).
	Clock func() time.Time
}

// Defaults of the guards: DefaultCommonDocs is index.common_docs's
// default (config takes it from here); DefaultMaxSimHashBucket has no
// configuration key.
const (
	DefaultCommonDocs       = 3
	DefaultMaxSimHashBucket = 4096
)

const (
	memStripes  = 256 // lock stripes for buckets, ids and lanes
	memDocLocks = 64  // locks of the mutable document fields
	memChunk    = 4096
	// bigTag in a stripe's one map sends the lookup to its big map; the
	// other 31 bits are a document handle.
	bigTag = 1 << 31
	// maxHandles bounds the documents held at once.
	maxHandles = bigTag
)

// Memory is the in-memory [Store]. It follows the Redis store's algorithm
// step by step (the conformance suite and TestMetamorphicMemoryRedis hold
// them to the same answers) on compact Go structures:
//
//   - Documents live in a table of 88-byte records addressed by a 31-bit
//     handle; buckets, ids and lanes hold handles. A handle is reused only
//     once the generation that held its document's records is evicted,
//     and with it every bucket that could name it.
//   - Each generation has 256 stripes of maps. A bucket with one member is
//     an 8-byte map slot (the low 32 bits of its salted key → handle; the
//     stripe is the top 8 bits); larger ones and SimHash buckets are
//     slices.
//   - A generation is evicted whole: no per-document expiry, no
//     per-document list of buckets.
//
// LookupInsert locks every stripe an entry touches in increasing order
// (the same stripe in every generation) and takes the entry's Seq while
// holding them, which makes concurrent calls serializable in Seq order: its
// results equal a serial execution, exactly as on a single Redis node.
// Memory is safe for concurrent use and starts no goroutines.
type Memory struct {
	p            Params
	genLen       int64 // ns; 0: a single generation unless Capacity rotates
	ret          int64 // ns
	nlive        int   // generations a lookup reads
	maxGens      int   // generations kept under Capacity
	capacity     int
	refresh      bool
	commonDocs   int
	maxSimBucket int
	maxCands     int
	clock        func() time.Time
	simK         int
	nbands       int
	passage      int // the passage table
	closed       atomic.Bool
	stats        counters
	seq          atomic.Uint64
	locks        [memStripes]stripeLock

	genMu sync.RWMutex // the gens slice; held for reading by every call
	gens  []*memGen    // oldest first; the last is current

	docs    memDocs
	bySeq   seqIndex
	scratch sync.Pool
}

type stripeLock struct {
	sync.Mutex
	_ [56]byte // keep neighbouring mutexes off one cache line
}

type counters struct {
	docs, replays, candidates, copies, imatch, passage, hot, withheld, dropped atomic.Uint64
}

func (c *counters) snapshot() Stats {
	return Stats{
		Docs: c.docs.Load(), Replays: c.replays.Load(), Candidates: c.candidates.Load(), Copies: c.copies.Load(),
		IMatch: c.imatch.Load(), Passage: c.passage.Load(), HotBuckets: c.hot.Load(), Withheld: c.withheld.Load(), Dropped: c.dropped.Load(),
	}
}

// memGen is one generation: its buckets, ids and lanes, and the handles
// whose records it holds (for eviction).
type memGen struct {
	slot    int64 // time slot (now / Generation); 0 without retention
	count   atomic.Int64
	evicted atomic.Bool
	stripes [memStripes]memGenStripe
	hmu     sync.Mutex
	handles []uint32 // documents whose records this generation holds
}

type memGenStripe struct {
	one flatMap // LSH bucket of one member, or bigTag|0 → big
	big bigMap
	ids map[string]uint32
	// gone maps the ids removed in this generation to their removed
	// document's origin (Entry.Origin; Redis: a '-' value in the id hash).
	gone   map[string]string
	imatch map[sketch.Digest]uint32
	copies map[sketch.ContentDigest]uint32
	// recent are each content's recent exact copies (at most
	// laneCopies), one of which takes the representative's place when it
	// is removed (Redis: the lane's f+ field).
	recent map[sketch.ContentDigest][]memRef
}

// memRef names a document by handle and Seq (a handle is reused once
// its generation is evicted; the Seq tells).
type memRef struct {
	h   uint32
	seq uint64
}

// laneCopies is how many recent exact copies a content lane entry keeps
// (Redis: COPIES).
const laneCopies = 4

// memBucket is a bucket with more than one member, or a SimHash bucket
// (whose members carry their fingerprints).
type memBucket struct {
	members  []uint32
	fps      []uint64 // SimHash tables only: fps[i] belongs to members[i]
	overflow int
	// common marks a key held by CommonDocs documents (LSH and passage
	// tables): members holds its exemplar only, overflow counts the
	// documents that held or found it (at most maxCommonCount), and it
	// takes no more documents (Redis: an 8-byte value, 'C', the
	// exemplar's seq and the count).
	common bool
}

// memDoc is a document's record. id and seq are set before the handle is
// published and never change; features, verdict, hasVerdict and source are
// guarded by the document lock (docs.lock); dead and gen are atomic, so
// that checking a bucket member takes no lock.
type memDoc struct {
	id         string
	seq        uint64
	features   []byte
	verdict    []byte
	hasVerdict bool
	keys       []byte // the keys record (delete.go), for Remove
	source     []byte // the source record (sources.go); nil: none
	template   []byte // the template record (templates.go); nil: none
	origin     string // Entry.Origin
	// recall is the lookup the document's insertion was given (the
	// Redis 'l' record), until its verdict is recorded: a replay without
	// a verdict is answered from it (Result.Recalled).
	recall *memRecall
	dead   atomic.Bool
	gen    atomic.Pointer[memGen] // the generation holding its records
}

// reset empties a record for reuse. The document lock is held.
func (d *memDoc) reset() {
	d.id, d.seq, d.features, d.verdict, d.hasVerdict, d.keys, d.source, d.template, d.recall, d.origin = "", 0, nil, nil, false, nil, nil, nil, nil, ""
	d.dead.Store(false)
	d.gen.Store(nil)
}

// memDocs is the handle → record table: chunks of memChunk records, a free
// list and the locks of the mutable fields.
type memDocs struct {
	mu     sync.Mutex // free, next and growing chunks
	chunks atomic.Pointer[[]*[memChunk]memDoc]
	free   []uint32
	next   uint32
	locks  [memDocLocks]sync.Mutex
}

func (t *memDocs) get(h uint32) *memDoc {
	return &(*t.chunks.Load())[h/memChunk][h%memChunk]
}

func (t *memDocs) lock(h uint32) *sync.Mutex { return &t.locks[h%memDocLocks] }

func (t *memDocs) alloc() (uint32, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.free); n > 0 {
		h := t.free[n-1]
		t.free = t.free[:n-1]
		return h, nil
	}
	if t.next >= maxHandles {
		return 0, fmt.Errorf("%w: memory: more than %d documents", ErrInvalid, maxHandles)
	}
	h := t.next
	t.next++
	if cs := *t.chunks.Load(); int(h/memChunk) >= len(cs) {
		grown := append(slices.Clip(cs), new([memChunk]memDoc))
		t.chunks.Store(&grown)
	}
	return h, nil
}

func (t *memDocs) release(hs []uint32) {
	t.mu.Lock()
	t.free = append(t.free, hs...)
	t.mu.Unlock()
}

// NewMemory returns an empty in-memory store.
func NewMemory(cfg MemoryConfig) (*Memory, error) {
	if err := cfg.Params.validate(); err != nil {
		return nil, err
	}
	if cfg.Retention < 0 || cfg.Generation < 0 || cfg.Capacity < 0 || cfg.CommonDocs < 0 ||
		cfg.MaxSimHashBucket < 0 || cfg.MaxCandidates < 0 {
		return nil, fmt.Errorf("%w: memory: negative setting", ErrInvalid)
	}
	m := &Memory{
		p:            cfg.Params,
		capacity:     cfg.Capacity,
		refresh:      cfg.RefreshOnMatch && cfg.Retention > 0,
		commonDocs:   cmp.Or(cfg.CommonDocs, DefaultCommonDocs),
		maxSimBucket: cmp.Or(cfg.MaxSimHashBucket, DefaultMaxSimHashBucket),
		maxCands:     cmp.Or(cfg.MaxCandidates, DefaultMaxCandidates),
		clock:        cfg.Clock,
		simK:         cfg.Params.SimHashK,
		nbands:       cfg.Params.Bands,
		passage:      cfg.Params.passageTable(),
		nlive:        1,
	}
	if cfg.Retention > 0 {
		gen := cmp.Or(cfg.Generation, cfg.Retention)
		m.genLen, m.ret = int64(gen), int64(cfg.Retention)
		m.nlive = int((m.ret+m.genLen-1)/m.genLen) + 1
	}
	if m.clock == nil {
		m.clock = time.Now
	}
	m.maxGens = max(m.nlive, 2)
	empty := []*[memChunk]memDoc{}
	m.docs.chunks.Store(&empty)
	m.gens = []*memGen{{slot: m.slotOf(m.clock().UnixNano())}}
	m.scratch.New = func() any { return &memScratch{cands: map[uint32]int{}} }
	return m, nil
}

func (m *Memory) slotOf(now int64) int64 {
	if m.genLen == 0 {
		return 0
	}
	return now / m.genLen
}

// fnv32 is 32-bit FNV-1a (hash/fnv). The Redis store computes the same
// function in Lua to place ids, so it is frozen; TestFNV32Lua checks that
// both agree.
func fnv32(s string) uint32 {
	h := fnv.New32a()
	io.WriteString(h, s) // a hash.Hash never fails to write
	return h.Sum32()
}

// Stats returns the counters.
func (m *Memory) Stats() Stats { return m.stats.snapshot() }

// Close marks the store closed. It does not free memory held by callers.
func (m *Memory) Close() error {
	m.closed.Store(true)
	return nil
}

// begin checks the store and the context, rotates and evicts generations
// for now, and returns with genMu held for reading.
func (m *Memory) begin(ctx context.Context, now int64) error {
	if m.closed.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.genMu.RLock()
	if !m.stale(now) {
		return nil
	}
	m.genMu.RUnlock()
	m.genMu.Lock()
	m.advance(now)
	m.genMu.Unlock()
	m.genMu.RLock()
	return nil
}

// stale reports whether advance has work: a new time slot, a full
// generation, or an expired one. genMu is held.
func (m *Memory) stale(now int64) bool {
	cur := m.gens[len(m.gens)-1]
	return m.slotOf(now) > cur.slot ||
		(m.capacity > 0 && cur.count.Load() >= int64(m.capacity)) ||
		(m.genLen > 0 && !m.readable(m.gens[0], now))
}

// readable reports whether generation g is still read: Redis gives a
// closed generation's keys EXPIREAT (slot+1)·Generation + Retention.
func (m *Memory) readable(g *memGen, now int64) bool {
	return m.genLen == 0 || now < (g.slot+1)*m.genLen+m.ret
}

// advance starts new generations and evicts old ones. genMu is held for
// writing.
func (m *Memory) advance(now int64) {
	cur := m.gens[len(m.gens)-1]
	if s := m.slotOf(now); s > cur.slot || (m.capacity > 0 && cur.count.Load() >= int64(m.capacity)) {
		m.gens = append(m.gens, &memGen{slot: max(s, cur.slot)})
	}
	for len(m.gens) > 1 {
		g := m.gens[0]
		cur := m.gens[len(m.gens)-1]
		byTime := m.genLen > 0 && (cur.slot-g.slot >= int64(m.nlive) || !m.readable(g, now))
		byCount := m.capacity > 0 && len(m.gens) > m.maxGens
		if !byTime && !byCount {
			break
		}
		m.evict(g)
		m.gens = slices.Delete(m.gens, 0, 1)
	}
}

// evict drops generation g and frees the handles of the documents whose
// records it held. Every bucket, id and lane entry that names such a
// handle is in g or in an older generation, already gone.
func (m *Memory) evict(g *memGen) {
	g.evicted.Store(true)
	free := g.handles[:0]
	for _, h := range g.handles {
		l := m.docs.lock(h)
		l.Lock()
		d := m.docs.get(h)
		if d.gen.Load() == g {
			m.bySeq.del(d.seq, h)
			d.reset()
			free = append(free, h)
		}
		l.Unlock()
	}
	m.docs.release(free)
	g.handles = nil
}

// alive reports whether document h can be returned: not deleted and its
// records not expired. Handles met in a readable generation always name
// their original document (see evict).
func (m *Memory) alive(h uint32, now int64) bool {
	d := m.docs.get(h)
	g := d.gen.Load()
	return !d.dead.Load() && g != nil && !g.evicted.Load() && m.readable(g, now)
}

// salt gives table t's bucket key k a key of its own in the shared stripe
// maps (distinct tables colliding is a 2^-64 event).
func salt(t int, k uint64) uint64 { return k ^ sketch.Mix64(uint64(t)+1) }

// bucketStripe and bucketField split a salted key: the stripe is its top
// 8 bits and the map key its low 32, 40 bits in all (Redis keeps 31 bits
// and the group's, 45 at a million documents per generation); two buckets
// that collide only share a spurious candidate, which verification
// rejects.
func bucketStripe(key uint64) int       { return int(key >> 56) }
func bucketField(key uint64) uint32     { return uint32(key) }
func idStripe(id string) int            { return int(fnv32(id) % memStripes) }
func digestStripe(d *sketch.Digest) int { return int(d[0]) }
func contentStripe(c *sketch.ContentDigest) int {
	return int(c[0])
}

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
			return nil
		}
		if rc != nil {
			m.recalled(rc, st)
			return nil
		}
	} else if st.check {
		// Looked up after every stored document; nothing is stored.
		st.self, st.selfSeq, st.lookOnly = bigTag, m.seq.Load()+1, true
		r.Seq = st.selfSeq
	} else if mark, ok := m.goneMark(e.ID, st.now); ok && goneAfter(e.Origin, mark) {
		// A record read again after its document was removed.
		r.Gone = true
		return nil
	} else {
		h, err := m.docs.alloc()
		if err != nil {
			return err
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
	var dead map[uint32]bool
	if anyDead {
		dead = sc.dead
	}
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
