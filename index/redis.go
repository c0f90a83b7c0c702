package index

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisConfig configures the Redis store. Fields marked "layout" are part
// of the namespace: they are stored with Params and a different value on
// a later start fails with ErrParamsMismatch.
type RedisConfig struct {
	// Addrs is the server address ("host:port"); in cluster mode, any
	// number of seed nodes.
	Addrs []string
	// Cluster selects Redis Cluster.
	Cluster bool
	// Username and Password authenticate (ACL user, or password only for
	// requirepass). TLS, when set, is used for every connection.
	Username, Password string
	TLS                *tls.Config
	// DB selects the logical database (single node only).
	DB int
	// Namespace prefixes every key (default "neardup"); keys are
	// "<Namespace>:v4:{tag}…". No braces or spaces.
	Namespace string
	// Params are the sketch parameters (required; stored).
	Params Params
	// Retention is how long a document stays findable: at least Retention
	// and at most Retention+Generation after its insertion. 0 keeps
	// everything (no generations, no expiry).
	Retention time.Duration
	// Generation is the width of a time generation (layout; default
	// Retention, minimum 1s). A lookup reads every live generation —
	// ⌈Retention/Generation⌉+1 of them — so narrow generations bound memory
	// more tightly but cost one more read per band and generation.
	Generation time.Duration
	// RefreshOnMatch restarts the lifetime of a document found as a
	// candidate or exact hit in an older generation: its bucket entries,
	// id and records are carried into the current generation.
	RefreshOnMatch bool
	// CommonDocs (index.common_docs; default DefaultCommonDocs) is how
	// many documents make a key of the LSH and passage tables common: it
	// yields only its exemplar and takes no more documents (Result.Common).
	// MaxSimHashBucket (default 4096) is the SimHash tables' guard: a
	// bucket stores and returns at most that many documents per
	// generation; later ones are turned away and counted
	// (Result.Truncated, Stats).
	CommonDocs, MaxSimHashBucket int
	// MaxCandidates bounds the candidates returned per entry (default
	// DefaultMaxCandidates), best ranked first; the rest are counted
	// (Result.Dropped) and never resolved.
	MaxCandidates int
	// Capacity is accepted and unused since layout version 7 (it sized
	// the first generation's groups): a generation's groups, ids and lanes
	// grow with the documents it receives (see "Linear growth" in
	// doc.go), so the Redis index needs no size. MemoryConfig.Capacity
	// caps the memory store.
	Capacity int
	// Shards is the number of hash tags the keys are spread over in
	// cluster mode (layout; default 48, i.e. 16 per master on 3 masters;
	// always 1 on a single node).
	Shards int
	// Batch is the most documents per server-side script call (default
	// 64). Larger batches are split into calls sent in one round trip; so
	// are batches of more than 256 bucket ops (bands, SimHash blocks,
	// anchors) on a single node, since a call blocks the server for
	// roughly 10–20 µs per op (maxCallOps); a single-node call also ends
	// after 8 ms of work (callBudget), its remaining documents sent in
	// another round trip.
	Batch int
	// Timeouts of the client; ctx deadlines apply as well.
	DialTimeout, ReadTimeout, WriteTimeout time.Duration
	// PoolSize is the connection pool size (default go-redis's).
	PoolSize int
	// RequireExisting makes a namespace that does not exist an error
	// (ErrIndexLost) instead of a new, empty one: for a caller that has
	// written to it before (a service whose consumer group has committed
	// offsets), a missing namespace means the server lost its data.
	RequireExisting bool
	// ReadOnly opens the namespace to read it and nothing else: every
	// script is declared no-writes (a write would fail on the server)
	// and sent with EVALSHA_RO; the namespace must exist (as with
	// RequireExisting: a missing one is ErrIndexLost), no parameters are
	// stored, no older layout is superseded, no expiry swept, no clock
	// field written; a generation that no writer has started yet is read
	// as empty. LookupInsert, the Record and Revise calls and Remove fail
	// with ErrInvalid. For commands that only look (neardup check).
	ReadOnly bool
	// MaxClockAhead bounds how far the caller's clock may run ahead of
	// the server's (default DefaultMaxClockAhead; negative: unbounded,
	// for tests that drive the clock). A call from further ahead fails
	// with ErrUnavailable naming the skew: one member's fast clock would
	// otherwise move every shard's generation forward and hide the index
	// from the others until real time caught up.
	MaxClockAhead time.Duration
	// Clock returns the current time (default time.Now). Generations are
	// computed from it and kept monotonic per shard on the server.
	Clock func() time.Time

	// splitLoad replaces the constant splitLoad (tests: 1 makes a handful
	// of documents split groups).
	splitLoad int
}

// Defaults of RedisConfig.
const (
	DefaultNamespace     = "neardup"
	DefaultCapacity      = 1 << 20
	DefaultClusterShards = 48
	DefaultBatch         = 64
	maxLiveGenerations   = 64
	sweepBudget          = 256 // key names given an expiry per LookupInsert call
	// DefaultMaxClockAhead is RedisConfig.MaxClockAhead's default.
	DefaultMaxClockAhead = 5 * time.Minute
	maintainBudget       = 8192 // per Maintain call
	metaGroup            = 64   // documents per record hash
	// fieldBits is the bits of a bucket key a keys record of version 2
	// or 3 kept beside its group (its low 31), from before layout
	// version 7.
	fieldBits = 31
	// fieldBytes is the width of a bucket's hash field since layout
	// version 7: the key's bits from minGroupBits on (48 of them, bits
	// 4…51 from the top), so that a field carries the group digits a
	// split of its group needs (see "Linear growth" in doc.go).
	fieldBytes = 6
	// splitLoad is the band entries per group, on average, at which a
	// generation's bucket groups split (see "Linear growth" in doc.go):
	// groups then hold 16 to 64 buckets, listpacks below Redis's 128.
	splitLoad = 32
	// maxGroupBits is the most group bits of a generation: 2^22 groups per
	// table (the passage table 2^28), about 2^28 documents per generation.
	// It is also the precision of the ops the scripts receive and of the
	// routing of keys to shards (routeBits), whatever a generation's bits.
	maxGroupBits = 22
	// minGroupBits is the fewest group bits of a generation.
	minGroupBits = 4
	// passageSplitBits of a passage bucket's field move into its group:
	// the passage table has 2^6 times the groups of a band table (see
	// tableOp in redis_lua.go).
	passageSplitBits = 6
)

// Redis is the Redis [Store]. It is safe for concurrent use; it starts no
// goroutines of its own (the go-redis client manages its pool).
type Redis struct {
	c          redis.UniversalClient
	cluster    bool
	p          Params
	ns         string
	fp         string // namespace fingerprint
	genSec     int64
	retSec     int64
	nlive      int
	shards     int
	prefix     []string // per shard: "<ns>:v4:{tag}"
	clock      []string // per shard clock hash
	commonDocs int
	maxs       int
	maxc       int
	refresh    bool
	batch      int
	now        func() time.Time
	stats      counters
	closed     atomic.Bool
	scripts    redisScripts
	co         coalescer
	ahead      int64 // MaxClockAhead in seconds; 0: unbounded
	load       int   // band entries per group at which groups split (splitLoad)
	// seen[s] is set once a call found shard s's namespace (or created
	// it): from then on a missing one is ErrIndexLost (ARGV[6]).
	seen    []atomic.Bool
	shardOf map[string]int // clock key → shard
	// callBudget overrides the package's callBudget (tests; negative:
	// none).
	callBudget time.Duration
	// ro: opened read-only (RedisConfig.ReadOnly).
	ro bool
	// stopAfter, when set (tests), is called after each phase of a
	// cluster LookupInsert (2 registration, 3 content lane, 4 buckets and
	// resolution); an error ends the call there, as a member killed
	// between two round trips does.
	stopAfter func(phase int) error
}

// NewRedis connects, loads the scripts, checks (or, for a new namespace,
// stores) the parameters and gives expiries to generations that closed
// while no process was running. It fails with ErrParamsMismatch when the
// namespace holds other parameters and with ErrUnavailable when the server
// cannot be reached.
func NewRedis(ctx context.Context, cfg RedisConfig) (*Redis, error) {
	r, err := newRedis(cfg)
	if err != nil {
		return nil, err
	}
	if err := r.open(ctx); err != nil {
		r.c.Close()
		return nil, err
	}
	return r, nil
}

func newRedis(cfg RedisConfig) (*Redis, error) {
	if err := cfg.Params.validate(); err != nil {
		return nil, err
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: redis: "+format, append([]any{ErrInvalid}, a...)...)
	}
	if len(cfg.Addrs) == 0 {
		return nil, bad("no address")
	}
	if !cfg.Cluster && len(cfg.Addrs) != 1 {
		return nil, bad("%d addresses without cluster mode", len(cfg.Addrs))
	}
	if cfg.Namespace == "" {
		cfg.Namespace = DefaultNamespace
	}
	if !validNamespace(cfg.Namespace) {
		return nil, bad("namespace %q: want 1..64 bytes without braces or spaces", cfg.Namespace)
	}
	if cfg.Retention < 0 || cfg.Generation < 0 || cfg.CommonDocs < 0 || cfg.MaxSimHashBucket < 0 ||
		cfg.MaxCandidates < 0 || cfg.Capacity < 0 || cfg.Shards < 0 || cfg.Batch < 0 {
		return nil, bad("negative setting")
	}
	r := &Redis{
		cluster:    cfg.Cluster,
		p:          cfg.Params,
		ns:         cfg.Namespace,
		commonDocs: cmp.Or(cfg.CommonDocs, DefaultCommonDocs),
		maxs:       cmp.Or(cfg.MaxSimHashBucket, DefaultMaxSimHashBucket),
		maxc:       cmp.Or(cfg.MaxCandidates, DefaultMaxCandidates),
		refresh:    cfg.RefreshOnMatch && cfg.Retention > 0,
		batch:      cmp.Or(cfg.Batch, DefaultBatch),
		now:        cfg.Clock,
		nlive:      1,
		ro:         cfg.ReadOnly,
	}
	if r.now == nil {
		r.now = time.Now
	}
	if cfg.Retention > 0 {
		gen := cfg.Generation
		if gen == 0 {
			gen = cfg.Retention
		}
		if gen < time.Second || cfg.Retention < time.Second {
			return nil, bad("retention %v / generation %v: want ≥ 1s", cfg.Retention, gen)
		}
		r.retSec, r.genSec = int64(cfg.Retention/time.Second), int64(gen/time.Second)
		if a := cmp.Or(cfg.MaxClockAhead, DefaultMaxClockAhead); a > 0 {
			r.ahead = max(int64(a/time.Second), 1)
		}
		r.nlive = int((r.retSec+r.genSec-1)/r.genSec) + 1
		if r.nlive > maxLiveGenerations {
			return nil, bad("retention %v / generation %v = %d live generations: want ≤ %d (each is one more read per band)",
				cfg.Retention, gen, r.nlive, maxLiveGenerations)
		}
	}
	r.shards = 1
	if cfg.Cluster {
		r.shards = cmp.Or(cfg.Shards, DefaultClusterShards)
		if r.shards > 16384 {
			return nil, bad("shards %d: want ≤ 16384", r.shards)
		}
	}
	for _, tag := range shardTags(r.shards) {
		p := r.ns + ":v" + strconv.Itoa(SchemaVersion) + ":{" + tag + "}"
		r.prefix = append(r.prefix, p)
		r.clock = append(r.clock, p+"c")
	}
	r.seen = make([]atomic.Bool, r.shards)
	r.shardOf = make(map[string]int, r.shards)
	for i, c := range r.clock {
		r.shardOf[c] = i
		r.seen[i].Store(cfg.RequireExisting || cfg.ReadOnly)
	}
	// Capacity is not part of the fingerprint: it is the first
	// generation's guess, and the generations' group bits are stored.
	r.fp = fmt.Sprintf("%s layout=v%d gen=%d shards=%d", r.p, SchemaVersion, r.genSec, r.shards)
	r.load = cmp.Or(cfg.splitLoad, splitLoad)
	r.scripts = newRedisScripts(r.scriptConstants(), r.ro)
	r.co.max = 16 * r.batch

	if cfg.Cluster {
		cc := redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: cfg.Addrs, Username: cfg.Username, Password: cfg.Password, TLSConfig: cfg.TLS,
			DialTimeout: cfg.DialTimeout, ReadTimeout: cfg.ReadTimeout, WriteTimeout: cfg.WriteTimeout,
			PoolSize: cfg.PoolSize, ContextTimeoutEnabled: true, MaxRetries: -1,
		})
		if d := max(cfg.ReadTimeout, cfg.WriteTimeout, cfg.DialTimeout); d > 0 {
			cc.AddHook(callDeadline(d))
		}
		r.c = cc
	} else {
		r.c = redis.NewClient(&redis.Options{
			Addr: cfg.Addrs[0], Username: cfg.Username, Password: cfg.Password, TLSConfig: cfg.TLS, DB: cfg.DB,
			DialTimeout: cfg.DialTimeout, ReadTimeout: cfg.ReadTimeout, WriteTimeout: cfg.WriteTimeout,
			PoolSize: cfg.PoolSize, ContextTimeoutEnabled: true, MaxRetries: -1,
		})
	}
	return r, nil
}

func (r *Redis) open(ctx context.Context) error {
	// Opening loads the cluster's slot map and the scripts on every
	// master over new connections: go-redis's own retries are kept, as
	// they were, bounded by the per-read timeouts and ctx.
	ctx = context.WithValue(ctx, untimed{}, true)
	for _, s := range r.scripts.all() {
		if err := s.Load(ctx, r.c).Err(); err != nil {
			return r.wrap(ctx, "open: load scripts", err)
		}
	}
	if r.ro {
		// Checks that every shard's namespace exists with these
		// parameters (the prelude's checks), writing nothing.
		return r.Maintain(ctx)
	}
	if err := r.supersede(ctx); err != nil {
		return r.wrap(ctx, fmt.Sprintf("open: supersede layout v%d", SchemaVersion-1), err)
	}
	return r.Maintain(ctx)
}

// supersededPrev is what the clock of a namespace's previous layout
// version holds once a member of this build opened the namespace.
var supersededPrev = fmt.Sprintf("superseded by layout v%d (keys records kept in the features records): this namespace's index is now kept under <namespace>:v%d:, "+
	"stop the members of older builds; to run them again, set this field back to field f%d", SchemaVersion, SchemaVersion, SchemaVersion-1)

// supersede marks the namespace's previous layout version, where it
// exists, as superseded (luaSupersede), one call per shard in one round
// trip. A rolling upgrade thus never has old and new members deciding
// against different indexes: the old ones stop with ErrParamsMismatch as
// soon as a new one starts.
func (r *Redis) supersede(ctx context.Context) error {
	calls := make([]*call, r.shards)
	prev := strconv.Itoa(SchemaVersion - 1)
	for s, tag := range shardTags(r.shards) {
		calls[s] = &call{s: r.scripts.supersede, keys: []string{r.ns + ":v" + prev + ":{" + tag + "}c"}, args: []any{supersededPrev, prev}}
	}
	if err := r.run(ctx, calls); err != nil {
		// A user whose ACL grants only this layout's keys cannot reach
		// the old ones, nor could members of older builds using it.
		for _, c := range calls {
			if err := c.cmd.Err(); err != nil && !redis.HasErrorPrefix(err, "NOPERM") {
				return err
			}
		}
	}
	return nil
}

// Maintain runs the prelude of every shard: it stores the parameters of a
// new namespace (or fails with ErrParamsMismatch) and finishes giving
// expiries to closed generations. LookupInsert does the latter a little at
// a time; call Maintain periodically (e.g. hourly) when writes may stop
// for longer than a generation, so idle namespaces still expire.
//
// On a read-only store it only checks the namespace (it sweeps nothing).
func (r *Redis) Maintain(ctx context.Context) error {
	if r.closed.Load() {
		return ErrClosed
	}
	for s := range r.shards {
		for {
			c := &call{s: r.scripts.maintain, keys: []string{r.clock[s]}, args: r.header(s, maintainBudget)}
			if err := r.run(ctx, []*call{c}); err != nil {
				return r.wrap(ctx, "maintain", err)
			}
			if n, _ := c.cmd.Int64(); n == 1 {
				break
			}
		}
	}
	return nil
}

// Stats returns the counters.
func (r *Redis) Stats() Stats { return r.stats.snapshot() }

// Close closes the client.
func (r *Redis) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	return r.c.Close()
}

// header is ARGV[1..6] of every script for shard s.
func (r *Redis) header(s, budget int) []any {
	lo, hi := r.groupRange(s)
	seen := "0"
	if r.seen[s].Load() {
		seen = "1"
	}
	return []any{r.prefix[s], r.now().Unix(), lo, hi, budget, seen}
}

// AcceptEmpty makes the store start its namespace afresh where it finds
// none, after ErrIndexLost: what was stored is accepted as gone, and
// documents are decided against what is stored from now on.
func (r *Redis) AcceptEmpty() {
	for i := range r.seen {
		r.seen[i].Store(false)
	}
}

// markSeen records the shards whose namespace calls found (or created).
func (r *Redis) markSeen(calls []*call) {
	for _, c := range calls {
		if c.cmd != nil && c.cmd.Err() == nil && len(c.keys) > 0 {
			if i, ok := r.shardOf[c.keys[0]]; ok && !r.seen[i].Load() {
				r.seen[i].Store(true)
			}
		}
	}
}
