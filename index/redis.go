package index

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
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
	// Capacity is the first generation's guess of its documents (default
	// 1<<20; not part of the layout). Each generation of each shard gets
	// its group bits when it is first written, on the server: from the
	// documents the shard's previous generation received, so that a group
	// holds about 64 buckets and stays a compact listpack; the first
	// generation (and a store without retention, which has one) from
	// Capacity: Capacity/64 groups per table, rounded up to a power of
	// two. The passage table gets 64 times as many, for about 64 anchors
	// per document. A wrong guess costs memory or longer calls in the
	// first generation, not correctness.
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
	fieldBits            = 31   // bits of a bucket key kept in its hash field
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
	ibits      uint // group bits of the first generation (from Capacity)
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

type redisScripts struct {
	lookupInsert, register, copies, buckets, resolve, features, verdicts, verdict, maintain *redis.Script
	ids, keepLookups                                                                        *redis.Script // recall.go
	delKeys, unlink, revise                                                                 *redis.Script // delete_redis.go
	sources, recSources                                                                     *redis.Script // sources_redis.go
	templates, recTemplates                                                                 *redis.Script // templates_redis.go
	supersede                                                                               *redis.Script
}

// newRedisScripts compiles the scripts with the store's constants. A
// read-only store's scripts are declared no-writes (Redis 7 script
// flags): the server fails any write they attempt, and they run on a
// read-only replica as well. Only the scripts a read-only store calls are
// compiled for it.
func newRedisScripts(consts string, ro bool) redisScripts {
	head := ""
	if ro {
		head = "#!lua flags=no-writes\n"
	}
	src := func(body string) *redis.Script { return redis.NewScript(head + consts + body) }
	s := redisScripts{
		lookupInsert: src(luaLookupInsert),
		copies:       src(luaCopies),
		buckets:      src(luaBuckets),
		resolve:      src(luaResolve),
		features:     src(luaFeatures),
		verdicts:     src(luaVerdicts),
		maintain:     src(luaMaintain),
		sources:      src(luaSources),
		ids:          src(luaIDs),
		templates:    src(luaTemplates),
	}
	if !ro {
		s.register = src(luaRegister)
		s.verdict = src(luaVerdict)
		s.keepLookups = src(luaKeepLookups)
		s.delKeys = src(luaDelKeys)
		s.unlink = src(luaUnlink)
		s.revise = src(luaRevise)
		s.recSources = src(luaRecordSources)
		s.recTemplates = src(luaRecordTemplates)
		s.supersede = redis.NewScript(luaSupersede)
	}
	return s
}

// scriptConstants compiles the store's settings into the scripts.
func (r *Redis) scriptConstants() string {
	refresh := 0
	if r.refresh {
		refresh = 1
	}
	return fmt.Sprintf("local FP, SPLITA, RO = %s, %s, %v\nlocal L, R, NLIVE, IB, MINB, GB, B, PT, COMMON_DOCS, MAXS, SIMK, S, REFRESH, MAXC, PSPLIT, AHEAD = %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d\n",
		luaQuote(r.fp), luaQuote(splitAlphabet), r.ro, r.genSec, r.retSec, r.nlive, r.ibits, minGroupBits, maxGroupBits, r.p.Bands, r.p.passageTable(), r.commonDocs, r.maxs, r.p.SimHashK, r.shards, refresh, r.maxc,
		1<<passageSplitBits, r.ahead)
}

// luaQuote returns s as a Lua 5.1 string literal.
func luaQuote(s string) string {
	b := []byte{'"'}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			b = fmt.Appendf(b, "\\%03d", c) // three digits: a following digit is not absorbed
		} else {
			b = append(b, c)
		}
	}
	return string(append(b, '"'))
}

// all returns the scripts the store calls (a read-only store's fewer).
func (s redisScripts) all() []*redis.Script {
	var out []*redis.Script
	for _, x := range []*redis.Script{s.lookupInsert, s.register, s.copies, s.buckets, s.resolve, s.features, s.verdicts, s.verdict, s.maintain,
		s.ids, s.keepLookups, s.delKeys, s.unlink, s.revise, s.sources, s.recSources, s.templates, s.recTemplates} {
		if x != nil {
			out = append(out, x)
		}
	}
	return out
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
	r.ibits = groupBits(float64(cmp.Or(cfg.Capacity, DefaultCapacity)))
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

// luaSupersede is lua/supersede.lua.
var luaSupersede = luaFile("supersede.lua")

// supersededPrev is what the clock of a namespace's previous layout
// version holds once a member of this build opened the namespace.
var supersededPrev = fmt.Sprintf("superseded by layout v%d (records by sequence number, lookup records): this namespace's index is now kept under <namespace>:v%d:, "+
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

// groupBits is the group bits of a generation of docs documents: the
// fewest (at least minGroupBits, at most maxGroupBits) for which a band
// table's groups hold at most 64 buckets each (the scripts' layout rule,
// luaPrelude, computes the same).
func groupBits(docs float64) uint {
	b := uint(minGroupBits)
	for b < maxGroupBits && float64(uint64(metaGroup)<<b) < docs {
		b++
	}
	return b
}

// routeBits is the precision at which keys are routed to shards: a bucket
// key's top 22 bits, an id's or digest's 32-bit group value's top 22 bits.
// Routing never depends on a generation's group bits, so a key's shard is
// the same in every generation.
const routeBits = maxGroupBits

// groupRange is the half-open range of routes (routeBits) stored in shard s.
func (r *Redis) groupRange(s int) (lo, hi uint64) {
	const n = 1 << routeBits
	S := uint64(r.shards)
	return (uint64(s)*n + S - 1) / S, (uint64(s+1)*n + S - 1) / S
}

// shardOfRoute is the shard of route x (< 2^routeBits).
func (r *Redis) shardOfRoute(x uint64) int { return int(x * uint64(r.shards) >> routeBits) }

// shardOfGroup is the shard of an id's or digest's 32-bit group value
// (idGroup, digestGroup, contentGroup).
func (r *Redis) shardOfGroup(g uint64) int { return r.shardOfRoute(g >> (32 - routeBits)) }

// bucketOp maps a 64-bit bucket key of table t to its op at full
// precision: the group is the key's top maxGroupBits bits and the field
// its low 31 bits; in the passage table the field's top passageSplitBits
// bits come first in the group (group = those bits·2^22 + the key's top
// 22 bits), so that table has 2^6 times the groups. A generation of b
// group bits uses the group's top b bits (b + 6 in the passage table):
// the scripts cut them from the op (tkey in redis_lua.go).
func (r *Redis) bucketOp(t int, key uint64) (group uint64, field uint32) {
	group = key >> (64 - maxGroupBits)
	field = uint32(key & (1<<fieldBits - 1))
	if t == r.p.passageTable() {
		const low = fieldBits - passageSplitBits
		group |= uint64(field>>low) << maxGroupBits
		field &= 1<<low - 1
	}
	return group, field
}

// routeOf is the route of a full-precision group of table t (bucketOp): a
// bucket key's top 22 bits in every table.
func (r *Redis) routeOf(t int, group uint64) uint64 {
	return group & (1<<maxGroupBits - 1)
}

// splitAlphabet writes the passageSplitBits bits of a passage op's group
// as one character of a key name.
const splitAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_"

// opWidth is the widest op in a script argument: the group's digits, then
// the field as 4 big-endian bytes (its hash field, binary).
const opWidth = 1 + maxGroupBits + 4

// appendOp appends the op of key in table t to b. The script cuts a
// generation's group from the digits as they are, with no number
// conversion in Lua (a tonumber, a division and a string.format per op
// cost about 1.1 µs where the cut costs 0.04 µs more than a fixed group:
// index/testdata/groupderive.lua).
func (r *Redis) appendOp(b []byte, t int, key uint64) []byte {
	g, f := r.bucketOp(t, key)
	return r.appendGroupField(b, t, g, f)
}

// appendGroupField appends the op of group g and field f of table t to b.
func (r *Redis) appendGroupField(b []byte, t int, g uint64, f uint32) []byte {
	if t == r.p.passageTable() {
		b = append(b, splitAlphabet[g>>maxGroupBits])
	}
	// 22 digits: 6, then two bytes of 8, each a table row.
	const top = maxGroupBits % 8
	b = append(b, binDigits[g>>(maxGroupBits-top)&(1<<top-1)][8-top:]...)
	for i := maxGroupBits - top - 8; i >= 0; i -= 8 {
		b = append(b, binDigits[g>>i&0xff][:]...)
	}
	return binary.BigEndian.AppendUint32(b, f)
}

// binDigits[v] is byte v as 8 binary digits, most significant first
// (appendGroupField writes a group a byte at a time).
var binDigits = func() (t [256][8]byte) {
	for v := range t {
		for i := range 8 {
			t[v][i] = '0' + byte(v>>(7-i)&1)
		}
	}
	return t
}()

// idGroup is an id's group value, FNV-1a 32 of the id: a generation of b
// group bits puts the id in group value>>(32−b) (gkey in redis_lua.go);
// the shard is shardOfGroup's.
func (r *Redis) idGroup(id string) uint64 { return uint64(fnv32(id)) }

// digestGroup places an I-Match digest by its last 4 bytes, as idGroup an
// id; its first 16 bytes are the hash field.
func (r *Redis) digestGroup(d []byte) uint64 { return uint64(binary.BigEndian.Uint32(d[16:])) }

// contentGroup places a content digest by its last 4 bytes, as idGroup an
// id; its first 12 bytes are the hash field.
func (r *Redis) contentGroup(c []byte) uint64 { return uint64(binary.BigEndian.Uint32(c[12:])) }

// call is one script invocation.
type call struct {
	s    *redis.Script
	keys []string
	args []any
	cmd  *redis.Cmd
}

// run sends the calls in one round trip (a pipeline when more than one)
// with EVALSHA, and again with EVAL those the server did not know.
func (r *Redis) run(ctx context.Context, calls []*call) error {
	defer r.markSeen(calls)
	evalSha, eval := redis.Cmdable.EvalSha, (*redis.Script).Eval
	if r.ro {
		evalSha, eval = redis.Cmdable.EvalShaRO, (*redis.Script).EvalRO
	}
	if len(calls) == 1 {
		c := calls[0]
		c.cmd = evalSha(r.c, ctx, c.s.Hash(), c.keys, c.args...)
		if redis.HasErrorPrefix(c.cmd.Err(), "NOSCRIPT") {
			c.cmd = eval(c.s, ctx, r.c, c.keys, c.args...)
		}
		return c.cmd.Err()
	}
	pipe := r.c.Pipeline()
	for _, c := range calls {
		c.cmd = evalSha(pipe, ctx, c.s.Hash(), c.keys, c.args...)
	}
	_, _ = pipe.Exec(ctx)
	var retry []*call
	for _, c := range calls {
		if redis.HasErrorPrefix(c.cmd.Err(), "NOSCRIPT") {
			retry = append(retry, c)
		}
	}
	if len(retry) > 0 {
		pipe := r.c.Pipeline()
		for _, c := range retry {
			c.cmd = eval(c.s, ctx, pipe, c.keys, c.args...)
		}
		_, _ = pipe.Exec(ctx)
	}
	for _, c := range calls {
		if err := c.cmd.Err(); err != nil {
			return err
		}
	}
	return nil
}

// retryable reports whether a server error means "try again later". On
// Redis Cluster that includes the redirects (MOVED, ASK) go-redis did not
// get to the end of within its MaxRedirects: the slot map is changing
// (a failover, a resharding) and the next attempt, after the map is
// reloaded, goes to the right node.
func retryable(err error) bool {
	for _, p := range [...]string{"LOADING", "CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN", "READONLY", "BUSY", "OOM", "NOREPLICAS", "MOVED", "ASK"} {
		if redis.HasErrorPrefix(err, p) {
			return true
		}
	}
	return false
}

// wrap classifies err: the caller's cancellation, ErrParamsMismatch,
// ErrClosed, ErrUnavailable for anything transient (network, timeouts,
// retryable server replies), or a plain wrapped error.
func (r *Redis) wrap(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	cerr := ctx.Err()
	if dl, ok := ctx.Deadline(); ok && cerr == nil && !time.Now().Before(dl) {
		cerr = context.DeadlineExceeded // the socket deadline fired first
	}
	if cerr != nil {
		if errors.Is(cerr, context.DeadlineExceeded) {
			return fmt.Errorf("index: %s: %w: %w", op, ErrUnavailable, cerr)
		}
		return fmt.Errorf("index: %s: %w", op, cerr)
	}
	if r.closed.Load() || errors.Is(err, redis.ErrClosed) {
		return fmt.Errorf("index: %s: %w", op, ErrClosed)
	}
	if redis.HasErrorPrefix(err, "NDCLOCK") {
		return fmt.Errorf("index: %s: %w: %s", op, ErrUnavailable, strings.TrimPrefix(err.Error(), "NDCLOCK "))
	}
	if redis.HasErrorPrefix(err, "NDLOST") {
		return fmt.Errorf("index: %s: namespace %q: %w: %s", op, r.ns, ErrIndexLost, strings.TrimPrefix(err.Error(), "NDLOST "))
	}
	if redis.HasErrorPrefix(err, "NDPARAMS") {
		return fmt.Errorf("index: namespace %q: %w: %s; configured: %s", r.ns, ErrParamsMismatch,
			strings.TrimPrefix(err.Error(), "NDPARAMS "), r.fp)
	}
	var rerr redis.Error
	if errors.As(err, &rerr) && !retryable(err) {
		return fmt.Errorf("index: %s: %w", op, err)
	}
	r.reloadSlots()
	return fmt.Errorf("index: %s: %w: %w", op, ErrUnavailable, err)
}

// reloadSlots asks a cluster client to reload its slot map in the
// background (go-redis's ReloadState: one CLUSTER SLOTS, at most one at
// a time): go-redis reloads it by itself only on a redirect it reads
// (MOVED, READONLY) or once a minute, and a master that stopped
// answering sends no redirect, so without this every call would go on
// waiting on the frozen master for up to a minute after its replica was
// promoted. Every unavailable call asks again, so a reload that read the
// map just before the promotion is followed by one after it.
func (r *Redis) reloadSlots() {
	if cc, ok := r.c.(*redis.ClusterClient); ok {
		cc.ReloadState(context.Background())
	}
}

// callDeadline bounds every command and pipeline of a cluster client,
// with go-redis's own retries and redirects inside it, to d (the
// configured timeout, index.timeout): a master that stops answering
// holds its connections open, and each of go-redis's attempts would wait
// a whole read timeout on it. Calls whose context is marked untimed (the
// store's opening) are not bounded.
type callDeadline time.Duration

// untimed marks a context whose calls callDeadline leaves alone.
type untimed struct{}

func (d callDeadline) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Value(untimed{}) != nil {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, time.Duration(d))
}

func (d callDeadline) DialHook(next redis.DialHook) redis.DialHook { return next }

func (d callDeadline) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		ctx, cancel := d.bound(ctx)
		defer cancel()
		return next(ctx, cmd)
	}
}

func (d callDeadline) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		ctx, cancel := d.bound(ctx)
		defer cancel()
		return next(ctx, cmds)
	}
}

func (r *Redis) check(ctx context.Context) error {
	if r.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

// LookupInsert implements [Store]. On a single node every chunk of Batch
// documents is one atomic script call and all chunks travel in one round
// trip, then the candidates' features, each document's once, in a second
// (readFeatures). In cluster mode it takes four round trips (see the package
// documentation) and leaves Candidate.Features and Result.IMatchFeatures
// nil.
func (r *Redis) LookupInsert(ctx context.Context, docs []Entry) ([]Result, error) {
	if err := r.checkEntries(ctx, docs); err != nil || len(docs) == 0 {
		return nil, err
	}
	if err := r.writable("lookup-insert"); err != nil {
		return nil, err
	}
	var out []Result
	var err error
	if r.cluster {
		out, err = r.lookupCluster(ctx, docs, false)
	} else {
		out, err = r.co.do(ctx, docs, r.lookupInsertSingle)
	}
	if err != nil {
		return nil, r.wrap(ctx, "lookup-insert", err)
	}
	r.count(out)
	return out, nil
}

// Lookup implements [Store]: LookupInsert's scripts with every document
// marked look-up-only, no id registered and no expiry swept.
func (r *Redis) Lookup(ctx context.Context, docs []Entry) ([]Result, error) {
	if err := r.checkEntries(ctx, docs); err != nil || len(docs) == 0 {
		return nil, err
	}
	var out []Result
	var err error
	if r.cluster {
		out, err = r.lookupCluster(ctx, docs, true)
	} else {
		out, err = r.lookupSingle(ctx, docs, true)
	}
	if err != nil {
		return nil, r.wrap(ctx, "lookup", err)
	}
	return out, nil
}

// errReadOnly is wrapped by the errors of writing calls on a read-only
// store.
var errReadOnly = errors.New("the store is read-only")

// writable fails a writing call on a read-only store.
func (r *Redis) writable(op string) error {
	if r.ro {
		return fmt.Errorf("%w: index: %s: %w", ErrInvalid, op, errReadOnly)
	}
	return nil
}

// checkEntries fails a call on a closed store, a cancelled context or an
// invalid entry, before anything is sent.
func (r *Redis) checkEntries(ctx context.Context, docs []Entry) error {
	if err := r.check(ctx); err != nil {
		return err
	}
	return validateEntries(r.p, docs)
}

func (r *Redis) count(out []Result) {
	var replays, cands, copies, imatch, passage, withheld, dropped uint64
	for i := range out {
		if out[i].Replay {
			replays++
		}
		if out[i].Copy != "" {
			copies++
		}
		if out[i].IMatch != "" {
			imatch++
		}
		cands += uint64(len(out[i].Candidates))
		passage += uint64(passageCands(out[i].Candidates))
		withheld += uint64(out[i].Truncated)
		dropped += uint64(out[i].Dropped)
	}
	r.stats.docs.Add(uint64(len(out)))
	r.stats.replays.Add(replays)
	r.stats.candidates.Add(cands)
	r.stats.copies.Add(copies)
	r.stats.imatch.Add(imatch)
	r.stats.passage.Add(passage)
	r.stats.withheld.Add(withheld)
	r.stats.dropped.Add(dropped)
}

func (r *Redis) lookupInsertSingle(ctx context.Context, docs []Entry) ([]Result, error) {
	return r.lookupSingle(ctx, docs, false)
}

// lookupSingle runs the single-node script; with check, nothing is
// registered or written (flag 16) and no expiry is swept. It takes one
// round trip (lookupRound) unless a call ends on its time budget, then
// one more for the documents left, and so on; each round decides at
// least one document.
func (r *Redis) lookupSingle(ctx context.Context, docs []Entry, check bool) ([]Result, error) {
	out := make([]Result, len(docs))
	pos := make([]int, len(docs)) // pos[i]: batch[i]'s index in docs
	for i := range pos {
		pos[i] = i
	}
	batch := docs
	for len(batch) > 0 {
		res := make([]Result, len(batch))
		left, err := r.lookupRound(ctx, batch, res, check)
		if err != nil {
			return nil, err
		}
		if len(left) == len(batch) {
			return nil, fmt.Errorf("a round of %d script calls decided no document", len(batch))
		}
		var nextPos []int
		var next []Entry
		for i := range batch {
			if len(left) > 0 && left[0] == i {
				left = left[1:]
				nextPos, next = append(nextPos, pos[i]), append(next, batch[i])
				continue
			}
			out[pos[i]] = res[i]
		}
		pos, batch = nextPos, next
	}
	if err := r.readFeatures(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// lookupRound sends docs in calls of callChunks in one round trip, fills
// in out for the documents decided and returns the positions of the
// others, in order: those a call left on its time budget and, unless
// check, every document after them (the later calls of the round did
// nothing, see luaLookupInsert). Look-ups (check) write nothing and do
// not depend on one another: their calls never stop the round.
func (r *Redis) lookupRound(ctx context.Context, docs []Entry, out []Result, check bool) ([]int, error) {
	var calls []*call
	var sim, anchors []uint64
	// The documents' bucket ops share one buffer; each argument is a slice
	// of it.
	nops := 0
	for i := range docs {
		nops += len(docs[i].Bands) + r.p.SimHashK + 1 + len(docs[i].Anchors)
	}
	buf := make([]byte, 0, nops*opWidth)
	starts := callChunks(docs, r.batch, maxCallOps, r.docOps)
	stop := r.prefix[0] + "z" + strconv.FormatUint(rand.Uint64(), 36)
	budget := cmp.Or(r.callBudget, callBudget).Microseconds()
	end := func(ci int) int {
		if ci+1 < len(starts) {
			return starts[ci+1]
		}
		return len(docs)
	}
	for ci, lo := range starts {
		chunk := docs[lo:end(ci)]
		sweep := sweepBudget
		if check {
			sweep = 0
		}
		order := 0 // ARGV[8]: 1 follows an earlier call, 2 the round's last
		if ci > 0 && !check {
			order |= 1
		}
		if ci == len(starts)-1 || check {
			order |= 2
		}
		args := append(r.header(0, sweep), max(budget, 0), order)
		args = slices.Grow(args, len(chunk)*8)
		for i := range chunk {
			e := &chunk[i]
			flags := 0
			if check {
				flags |= 16
			}
			if e.HasSimHash {
				flags |= 1
			}
			if e.HasIMatch {
				flags |= 2
			}
			if e.HasContent {
				flags |= 4
			}
			if len(e.Anchors) > 0 {
				flags |= 8
			}
			start := len(buf)
			for t, k := range e.Bands {
				buf = r.appendOp(buf, t, k)
			}
			if e.HasSimHash {
				sim = simBlockKeys(sim[:0], e.SimHash, r.p.SimHashK)
				for j, k := range sim {
					buf = r.appendOp(buf, r.p.Bands+j, k)
				}
			}
			anchors = anchorKeys(anchors, e.Anchors)
			for _, k := range anchors {
				buf = r.appendOp(buf, r.p.passageTable(), k)
			}
			var keys []byte
			if !check {
				keys = r.encodeKeys(e)
			}
			args = append(args, e.ID, r.idGroup(e.ID), flags, e.Features, keys, e.Origin, buf[start:len(buf):len(buf)])
			if e.HasSimHash {
				args = append(args, binary.BigEndian.AppendUint64(nil, e.SimHash))
			}
			if e.HasIMatch {
				args = append(args, e.IMatch[:])
			}
			if e.HasContent {
				args = append(args, e.Content[:])
			}
		}
		calls = append(calls, &call{s: r.scripts.lookupInsert, keys: []string{r.clock[0], stop}, args: args})
	}
	if err := r.run(ctx, calls); err != nil {
		return nil, err
	}
	var left []int
	stopped := false
	for ci, c := range calls {
		head, err := c.cmd.Text()
		if err != nil {
			return nil, err
		}
		lo := starts[ci]
		if head == "" { // an earlier call stopped: this one did nothing
			if !stopped {
				return nil, fmt.Errorf("script call %d of %d did nothing, but no earlier call stopped", ci+1, len(calls))
			}
			for i := lo; i < end(ci); i++ {
				left = append(left, i)
			}
			continue
		}
		if stopped {
			return nil, fmt.Errorf("script call %d of %d ran after an earlier one stopped", ci+1, len(calls))
		}
		d := decoder{s: head}
		k := int(d.u16())
		if k < 1 || k > end(ci)-lo {
			return nil, fmt.Errorf("malformed script reply (%d documents decided of %d)", k, end(ci)-lo)
		}
		for i := lo + k; i < end(ci); i++ {
			left = append(left, i)
		}
		stopped = k < end(ci)-lo && !check
		for i := range k {
			res := &out[lo+i]
			st := d.u8()
			res.Replay, res.Recalled, res.Gone = st == 1 || st == 2, st == 2, st == 3
			res.Seq = d.u48()
			res.Truncated = int(d.u32())
			res.Common = int(d.u16())
			if !res.Recalled { // a recalled replay looked nothing up
				r.stats.hot.Add(uint64(res.Common))
			}
			res.Verdict = d.bytes()
			res.CopySeq = d.u48()
			res.Copy = d.str()
			res.IMatchSeq = d.u48()
			res.IMatch = d.str()
			res.Dropped = int(d.u32())
			n := int(d.u16())
			if n > 0 {
				res.Candidates = make([]Candidate, n)
				for j := range res.Candidates {
					c := &res.Candidates[j]
					c.Seq = d.u48()
					c.Via = via(d.u8())
					c.Hits = int(d.u16())
					c.ID = d.str()
				}
			}
			var hot, held []int
			for range d.u16() {
				hot = append(hot, int(d.u16()))
				held = append(held, int(d.u8()))
			}
			res.CommonAnchors, res.CommonAnchorDocs = hotAnchors(docs[lo+i].Anchors, hot, held)
		}
		if d.bad || d.p != len(d.s) {
			return nil, fmt.Errorf("malformed script reply (%d of %d bytes read)", d.p, len(d.s))
		}
	}
	return left, nil
}

// readFeatures fills in the features and verdicts of the candidates and
// I-Match documents of a single node's results, and their source records
// for the results with common anchors (the only ones whose sources the
// caller reads): one HMGET per record hash and kind that holds some, all
// in one round trip, each document's records read once however many
// results name it. Features are written with their document and never
// change, so reading them after the script call returns what the call
// would have read, unless the document was removed in between (its
// records are then nil, as in cluster mode, and [Store.Features] tells).
// A document stored without features has an empty record. A source
// record or a verdict read after the call may be one recorded meanwhile.
func (r *Redis) readFeatures(ctx context.Context, out []Result) error {
	type read struct {
		kind   string
		hashes []uint64            // in first-need order
		fields map[uint64][]string // record hash → fields to read
		got    map[uint64][]byte   // seq → value
	}
	feats := &read{kind: "f", fields: map[uint64][]string{}}
	verdicts := &read{kind: "v", fields: map[uint64][]string{}}
	srcs := &read{kind: "s", fields: map[uint64][]string{}}
	asked := map[uint64]uint8{} // seq → 1 features and verdict asked, 2 source asked
	ask := func(rd *read, seq uint64) {
		h := seq / metaGroup // one shard: local seq = seq
		if _, ok := rd.fields[h]; !ok {
			rd.hashes = append(rd.hashes, h)
		}
		rd.fields[h] = append(rd.fields[h], strconv.FormatUint(seq%metaGroup, 10))
	}
	need := func(seq uint64, src bool) {
		if seq == 0 {
			return
		}
		if asked[seq]&1 == 0 {
			ask(feats, seq)
			ask(verdicts, seq)
			asked[seq] |= 1
		}
		if src && asked[seq]&2 == 0 {
			ask(srcs, seq)
			asked[seq] |= 2
		}
	}
	for i := range out {
		src := len(out[i].CommonAnchors) > 0
		for _, c := range out[i].Candidates {
			need(c.Seq, src)
		}
		if out[i].IMatch != "" {
			need(out[i].IMatchSeq, src)
		}
	}
	if len(feats.hashes) == 0 {
		return nil
	}
	kinds := []*read{feats, verdicts, srcs}
	pipe := r.c.Pipeline()
	cmds := map[*read][]*redis.SliceCmd{}
	for _, rd := range kinds {
		for _, h := range rd.hashes {
			cmds[rd] = append(cmds[rd], pipe.HMGet(ctx, r.prefix[0]+rd.kind+strconv.FormatUint(h, 10), rd.fields[h]...))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	for _, rd := range kinds {
		rd.got = map[uint64][]byte{}
		for i, h := range rd.hashes {
			vals := cmds[rd][i].Val()
			if len(vals) != len(rd.fields[h]) {
				return fmt.Errorf("malformed HMGET reply (%d values for %d fields)", len(vals), len(rd.fields[h]))
			}
			for k, v := range vals {
				f, _ := strconv.ParseUint(rd.fields[h][k], 10, 64)
				if s, ok := v.(string); ok {
					rd.got[h*metaGroup+f] = []byte(s)
				} else if rd != feats {
					rd.got[h*metaGroup+f] = []byte{} // read: none
				}
			}
		}
	}
	// A document whose features are gone was removed: its other records
	// are not reported either.
	stored := func(rd *read, seq uint64, f []byte) []byte {
		if f == nil {
			return nil
		}
		return rd.got[seq]
	}
	for i := range out {
		res := &out[i]
		src := len(res.CommonAnchors) > 0
		for j := range res.Candidates {
			c := &res.Candidates[j]
			c.Features = feats.got[c.Seq]
			c.Verdict = stored(verdicts, c.Seq, c.Features)
			if src {
				c.Source = stored(srcs, c.Seq, c.Features)
			}
		}
		if res.IMatch != "" {
			res.IMatchFeatures = feats.got[res.IMatchSeq]
			res.IMatchVerdict = stored(verdicts, res.IMatchSeq, res.IMatchFeatures)
			if src {
				res.IMatchSource = stored(srcs, res.IMatchSeq, res.IMatchFeatures)
			}
		}
	}
	return nil
}

// maxCallOps bounds the bucket ops (bands, SimHash blocks, anchors) of
// one single-node script call. A call holds the server for roughly 10–20
// µs of CPU per op (a HSETNX, or an HGET and an HSET, with the Lua around
// them, and the candidates' records), more as the index grows, so a batch
// of 64 documents of 80 ops (5 KB pages: 30 bands, 4 SimHash blocks, ~48
// anchors) travels as ~20 calls of ~3 ms in one round trip, which leaves
// most of 20 ms to waits for a core (redis-server shares the machine with
// its clients). At 256 ops redis-server's CPU per document is that of 512
// within the runs' spread; at 128 ops, one page a call, it costs ~10 %
// more (index/BENCHMARKS.md, section 9).
const maxCallOps = 256

// callBudget is the time a single-node LookupInsert call may spend on
// its documents (ARGV[7] of luaLookupInsert): once it has, the call ends
// after the document at hand and the caller sends the rest in another
// round trip. maxCallOps keeps a typical call well below it; the budget
// bounds the calls whose documents cost more than their ops say (hot
// buckets read in full in every live generation, many candidates to
// resolve) or that waited for a core: a call lasts at most callBudget and
// one document (index/BENCHMARKS.md, section 9).
const callBudget = 8 * time.Millisecond

// docOps is the number of bucket ops of entry e in a script call.
func (r *Redis) docOps(e *Entry) int {
	n := len(e.Bands) + len(e.Anchors)
	if e.HasSimHash {
		n += r.p.SimHashK + 1
	}
	return n
}

// callChunks cuts docs into script calls of at most batch documents and,
// unless one document alone exceeds it, at most maxOps ops; it returns the
// index of each call's first document.
func callChunks(docs []Entry, batch, maxOps int, ops func(*Entry) int) []int {
	var starts []int
	n, o := 0, 0
	for i := range docs {
		k := ops(&docs[i])
		if i == 0 || n == batch || (n > 0 && o+k > maxOps) {
			starts = append(starts, i)
			n, o = 0, 0
		}
		n++
		o += k
	}
	return starts
}

// via names a candidate's via code: 1 LSH, 2 SimHash, 3 passage (the
// lowest code met wins).
func via(b byte) string {
	switch b & 3 {
	case 2:
		return ViaSimHash
	case 3:
		return ViaPassage
	}
	return ViaLSH
}

// decoder reads the big-endian records of script replies.
type decoder struct {
	s   string
	p   int
	bad bool
}

func (d *decoder) take(n int) string {
	if d.bad || d.p+n > len(d.s) {
		d.bad = true
		return ""
	}
	v := d.s[d.p : d.p+n]
	d.p += n
	return v
}

func (d *decoder) uint(n int) uint64 {
	var v uint64
	for _, c := range []byte(d.take(n)) {
		v = v<<8 | uint64(c)
	}
	return v
}

func (d *decoder) u8() byte    { return byte(d.uint(1)) }
func (d *decoder) u16() uint16 { return uint16(d.uint(2)) }
func (d *decoder) u32() uint32 { return uint32(d.uint(4)) }
func (d *decoder) u48() uint64 { return d.uint(6) }

// str reads an i32-length-prefixed string ("" for −1).
func (d *decoder) str() string {
	n := int32(d.u32())
	if n < 0 {
		return ""
	}
	return d.take(int(n))
}

// bytes reads an i32-length-prefixed string as bytes, nil for −1.
func (d *decoder) bytes() []byte {
	n := int32(d.u32())
	if n < 0 {
		return nil
	}
	return []byte(d.take(int(n)))
}

// Features implements [Store].
func (r *Redis) Features(ctx context.Context, seqs []uint64) ([][]byte, error) {
	return r.records(ctx, "features", r.scripts.features, seqs)
}

// Verdicts implements [Store].
func (r *Redis) Verdicts(ctx context.Context, seqs []uint64) ([][]byte, error) {
	return r.records(ctx, "verdicts", r.scripts.verdicts, seqs)
}

// records runs a per-document record script (luaSeqRecords) over seqs:
// nil for a document that is not stored, else its record ("" for none).
func (r *Redis) records(ctx context.Context, what string, s *redis.Script, seqs []uint64) ([][]byte, error) {
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	out := make([][]byte, len(seqs))
	calls, idx := r.bySeqShard(seqs, s, func(args []any, i int) []any {
		return append(args, strconv.FormatUint(seqs[i], 10))
	})
	if err := r.run(ctx, calls); err != nil {
		return nil, r.wrap(ctx, what, err)
	}
	for ci, c := range calls {
		reply, err := c.cmd.Slice()
		if err != nil {
			return nil, r.wrap(ctx, what, err)
		}
		if len(reply) != len(idx[ci]) {
			return nil, fmt.Errorf("index: %s: malformed script reply (%d values for %d seqs)", what, len(reply), len(idx[ci]))
		}
		for k, i := range idx[ci] {
			switch v := reply[k].(type) {
			case nil:
			case string:
				out[i] = []byte(v)
			default:
				return nil, fmt.Errorf("index: %s: malformed script reply (%T)", what, v)
			}
		}
	}
	return out, nil
}

// bySeqShard builds calls of script s grouping seqs by their record shard
// (seq mod S; the one shard of a single node), at most 4·Batch seqs per
// call; idx[c] lists the positions in seqs of call c's seqs. A Seq of 0,
// or beyond what any store assigns, names no document: it goes to shard 0,
// where it is found not stored.
func (r *Redis) bySeqShard(seqs []uint64, s *redis.Script, add func(args []any, i int) []any) ([]*call, [][]int) {
	byShard := make([][]int, r.shards)
	for i, seq := range seqs {
		sh := int(seq % uint64(r.shards))
		byShard[sh] = append(byShard[sh], i)
	}
	return shardCallsOf(r, s, sweepBudget, byShard, 4*r.batch, add)
}

// byIDShard builds calls of script s grouping ids by the shard of their id
// group, at most Batch ids per call; idx[c] lists the positions in ids of
// call c's ids.
func (r *Redis) byIDShard(ids []string, s *redis.Script, add func(args []any, i int) []any) ([]*call, [][]int) {
	byShard := make([][]int, r.shards)
	for i, id := range ids {
		sh := r.shardOfGroup(r.idGroup(id))
		byShard[sh] = append(byShard[sh], i)
	}
	if add == nil {
		add = func(args []any, _ int) []any { return args }
	}
	return shardCallsOf(r, s, sweepBudget, byShard, r.batch, add)
}

// shardCalls cuts the parts of each shard (perShard[sh]) into calls of script
// s with at most r.batch parts each: the shard's header with budget, then
// what add appends for each part, in order. owners[c] are the parts of
// calls[c].
func shardCalls[P any](r *Redis, s *redis.Script, budget int, perShard [][]P, add func(args []any, p P) []any) (calls []*call, owners [][]P) {
	return shardCallsOf(r, s, budget, perShard, r.batch, add)
}

// shardCallsOf is shardCalls with at most per parts per call.
func shardCallsOf[P any](r *Redis, s *redis.Script, budget int, perShard [][]P, per int, add func(args []any, p P) []any) (calls []*call, owners [][]P) {
	for sh, parts := range perShard {
		for lo := 0; lo < len(parts); lo += per {
			chunk := parts[lo:min(lo+per, len(parts))]
			args := r.header(sh, budget)
			for _, p := range chunk {
				args = add(args, p)
			}
			calls = append(calls, &call{s: s, keys: []string{r.clock[sh]}, args: args})
			owners = append(owners, chunk)
		}
	}
	return calls, owners
}

// RecordVerdicts implements [Store]: one script call per record shard of
// the documents (one on a single node), all in one round trip.
func (r *Redis) RecordVerdicts(ctx context.Context, seqs []uint64, verdicts [][]byte) ([]bool, error) {
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	if err := r.writable("record verdicts"); err != nil {
		return nil, err
	}
	if len(seqs) != len(verdicts) {
		return nil, fmt.Errorf("%w: %d seqs, %d verdicts", ErrInvalid, len(seqs), len(verdicts))
	}
	return r.recordOnce(ctx, "record verdicts", r.scripts.verdict, seqs, verdicts)
}

// recordOnce runs a record-writing script (luaSeqRecordOnce) over seqs
// and their records: stored[i] is false when seqs[i] is not stored.
func (r *Redis) recordOnce(ctx context.Context, what string, s *redis.Script, seqs []uint64, recs [][]byte) ([]bool, error) {
	calls, idx := r.bySeqShard(seqs, s, func(args []any, i int) []any {
		v := recs[i]
		if v == nil {
			v = []byte{}
		}
		return append(args, strconv.FormatUint(seqs[i], 10), v)
	})
	if err := r.run(ctx, calls); err != nil {
		return nil, r.wrap(ctx, what, err)
	}
	stored := make([]bool, len(seqs))
	for ci, c := range calls {
		reply, err := c.cmd.Text()
		if err != nil || len(reply) != len(idx[ci]) {
			return nil, r.wrap(ctx, what, cmp.Or(err, errors.New("malformed script reply")))
		}
		for k, i := range idx[ci] {
			stored[i] = reply[k] == '1'
		}
	}
	return stored, nil
}
