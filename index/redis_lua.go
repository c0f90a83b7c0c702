package index

import (
	"embed"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// The server-side scripts are Lua files in lua/: prelude.lua (the
// calling convention every script shares, the clock, generations and the
// helpers) and one file per script, each run after the prelude with the
// store's constants before it ([Redis.scriptConstants]).
//
// Scripts (EVALSHA, EVAL when the server lost its script cache), not a
// Redis Functions library (FUNCTION LOAD, FCALL/FCALL_RO): every call
// runs the prelude, which costs 11–15 µs a call on redis-server 7.0.15
// (INFO commandstats, 20,000 calls of the constants, the prelude and
// "return 1"; the clock's HMGET alone is ~2 µs). A library loaded once
// could save at most the rest, ~10 µs a call: ~4 µs of the ~320 µs the
// server spends per document on real text at ~0.4 calls per document
// (bench/bytesbench -corpus real -index local-redis), about 1%. Counted in
// instructions it is more: a lookup-insert call with no document is 265 k
// instructions of redis-server under callgrind, a third of them binding
// the prelude's functions to their upvalues, ~4% of the 3.0 M a real-text
// document costs (docs/performance.md, h40r). Against
// that, a library carries the store's constants (one library per
// namespace's parameters), must be on every master, and is missing after
// FUNCTION FLUSH, on a master restarted without its data or a node joined
// to the cluster without it: a second recovery path (load on "function
// not found") beside go-redis's NOSCRIPT fallback, for about 1%.
//
//go:embed lua/*.lua
var luaFS embed.FS

// luaFile returns the text of lua/name.
func luaFile(name string) string {
	b, err := luaFS.ReadFile("lua/" + name)
	if err != nil {
		panic(fmt.Sprintf("index: embedded script %s: %v", name, err))
	}
	return string(b)
}

// luaPrelude is lua/prelude.lua.
var luaPrelude = luaFile("prelude.lua")

// luaLookupInsert is lua/lookup_insert.lua after the prelude.
var luaLookupInsert = luaPrelude + luaFile("lookup_insert.lua")

// luaRegister is lua/register.lua after the prelude.
var luaRegister = luaPrelude + luaFile("register.lua")

// luaBuckets is lua/buckets.lua after the prelude.
var luaBuckets = luaPrelude + luaFile("buckets.lua")

// luaCopies is lua/copies.lua after the prelude.
var luaCopies = luaPrelude + luaFile("copies.lua")

// luaResolve is lua/resolve.lua after the prelude.
var luaResolve = luaPrelude + luaFile("resolve.lua")

// luaFeatures returns the features of documents: ARGV[7…] = seqs.
// Reply: an array, per seq its features as a bulk string of its own (nil
// = not stored, "" = stored without features).
var luaFeatures = luaSeqRecords("f")

// luaVerdicts returns the recorded verdicts of documents, as luaFeatures
// does features ("" when none is recorded yet).
var luaVerdicts = luaSeqRecords("v")

// luaSeqRecords is lua/seq_records.lua after the prelude, reading the
// record kind ('f' features, 'v' verdict, 's' source, 't' template).
func luaSeqRecords(kind string) string {
	return "local KIND = " + luaQuote(kind) + "\n" + luaPrelude + luaFile("seq_records.lua")
}

// luaVerdict records verdicts: ARGV[7…] = (seq verdict)×n, first write
// wins; recording a verdict drops the document's lookup record. Reply:
// per seq one byte, 1 when stored or already set, 0 when the document is
// not stored.
var luaVerdict = luaSeqRecordOnce("v")

// luaSeqRecordOnce is lua/seq_record_once.lua after the prelude, writing
// the record kind ('v' verdict, 's' source, 't' template): a found record
// (found.go) keeps the earliest finder, any other the first write.
func luaSeqRecordOnce(kind string) string {
	return fmt.Sprintf("local KIND, FOUND = %s, %v\n", luaQuote(kind), isFoundKind(kind)) + luaPrelude + luaFile("seq_record_once.lua")
}

// luaIDs is lua/ids.lua after the prelude.
var luaIDs = luaPrelude + luaFile("ids.lua")

// luaKeepLookups is lua/keep_lookups.lua after the prelude.
var luaKeepLookups = luaPrelude + luaFile("keep_lookups.lua")

// luaMaintain is lua/maintain.lua after the prelude.
var luaMaintain = luaPrelude + luaFile("maintain.lua")

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
	return fmt.Sprintf("local FP, SPLITA, RO = %s, %s, %v\nlocal L, R, NLIVE, MINB, GB, B, PT, COMMON_DOCS, MAXS, SIMK, S, REFRESH, MAXC, PSPLIT, AHEAD, FW, LOAD = %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d\n",
		luaQuote(r.fp), luaQuote(splitAlphabet), r.ro, r.genSec, r.retSec, r.nlive, minGroupBits, maxGroupBits, r.p.Bands, r.p.passageTable(), r.commonDocs, r.maxs, r.p.SimHashK, r.shards, refresh, r.maxc,
		1<<passageSplitBits, r.ahead, fieldBytes, r.load)
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

// luaSupersede is lua/supersede.lua.
var luaSupersede = luaFile("supersede.lua")
