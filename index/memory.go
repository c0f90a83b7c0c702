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
