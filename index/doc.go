// Package index is neardup's band store: for each incoming document it
// answers "which stored documents share a bucket with me?" and stores the
// document, atomically, in one step ([Store.LookupInsert]).
//
// A document brings its LSH band keys (sketch.BandKeys), optionally a
// 64-bit SimHash fingerprint, an I-Match digest, the digest of its whole
// normalized text and its passage anchors, and opaque feature bytes for
// verification. The store returns, per document, its sequence number (Seq,
// first-seen order); the first earlier document with the same content (an
// exact copy, found through the content lane without reading a single
// bucket); otherwise the candidates that share an LSH bucket, a SimHash
// block within Hamming distance k or a passage anchor, ranked (most shared
// tables and anchors, then the most recent) and cut at MaxCandidates; the
// first document with the same I-Match digest; and whether the document is
// a replay of one already stored. In memory and on a single Redis node the
// candidates and the I-Match document come with their stored features
// (Candidate.Features, Result.IMatchFeatures): in memory read in the same
// step, on a single node by plain HMGETs in a second round trip after the
// script call (features never pass through Lua, where every string is
// hashed and collected); in Redis Cluster their records live in other
// shards and the caller reads them with [Store.Features].
//
// # Passage lane
//
// Documents that share a passage but are not similar as wholes (a quoted
// article, a page embedding a license) share no band. Their anchors
// (winnowed shingle hashes: a shared passage of at least the sketch's
// passage width yields at least one shared anchor) find them. Each distinct
// anchor is one bucket of the passage table, looked up and inserted in the
// same step as the bands, with the same hot-bucket guard (CommonDocs),
// generations, refresh, replay and deletion rules. A candidate's Hits count
// its shared band and SimHash tables plus its shared distinct anchors; Via
// is "passage" when it shares nothing else.
//
// There are two implementations of [Store], which pass the same conformance
// suite and are checked against each other on random operations:
//
//   - [Memory]: the same algorithm on maps in 256 lock stripes per
//     generation, for embedded use and tests; a generation is evicted
//     whole, by time like Redis and by MemoryConfig.Capacity.
//   - [Redis]: a single Redis node or a Redis Cluster (go-redis v9), Redis
//     7.0 or newer. All work runs in server-side Lua scripts, loaded once
//     and called with EVALSHA (EVAL when the server lost its script cache).
//
// Both are safe for concurrent use and start no goroutines.
//
// # Atomicity
//
// On a single Redis node one script call looks up and inserts every band,
// SimHash block, anchor and digest of a batch of documents (at most
// RedisConfig.Batch documents and 256 bucket ops per call, and a call
// ends after 8 ms of work, after the document at hand, so that no call
// holds the server for long; larger batches travel as several calls in one
// round trip, and the documents a call left as more round trips). A script runs alone on the server, so LookupInsert is
// serializable in Seq order: of two near-duplicates processed at the same
// time by different consumers, the one with the higher Seq sees the other,
// exactly as in a serial run. The memory store gives the same guarantee by
// taking each entry's Seq while holding every stripe lock the entry needs.
//
// # Redis Cluster and the ordering rule
//
// A document's buckets are spread over masters, so its lookups cannot be
// one atomic step. Keys carry hash tags: S shards (default 48), each a tag
// chosen so that the shards spread evenly over the slot ranges. What must
// be atomic lives in one slot: a bucket's members, an id's mapping, a
// document's records. LookupInsert takes four round trips: reserve Seqs
// (HINCRBY), register ids and write records, look up and insert buckets,
// resolve Seqs to ids.
//
// Ordering rule. A document's Seq is fixed and its records are written
// before any of its bucket entries is visible. Every lookup-and-insert of
// one bucket is atomic on its master, so of two near-duplicates sharing a
// bucket, the second to reach the bucket sees the first. If that is the
// earlier document (lower Seq), its Result lists the later one as a
// candidate with a higher Seq, and the caller reports the pair from this
// side as a correction ("the later document duplicates me"), the very event
// the later document would have produced had it seen this one. Pair events
// are idempotent on (earlier, later). The set of pairs reported is then the
// set a serial execution in Seq order reports; TestClusterConcurrentPairs
// checks this on a real three-master cluster. On a single node and in
// memory no candidate ever has a higher Seq than the query.
//
// # Key layout (Redis)
//
// Every key starts with P = "<namespace>:v<SchemaVersion>:{<tag>}". Bucket
// keys of 64 bits are split into a group (the top G or G+1 bits, see
// "Linear growth") and a field (the key's bits 4…51, 6 bytes, which
// repeat the group's digits from the fifth on: a bucket is named by the
// key's top 52 bits, the passage table's by 58); hashes of 16 to 64
// fields stay in Redis's compact listpack encoding. The client sends each
// op at full precision, its group as 22 '0'/'1' digits (in the passage
// table after one character for 6 more bits, see below) and its field as
// 6 bytes, big-endian; a script cuts a generation's group from the digits
// and puts it, and the field, in key names and commands as they are,
// converting no number per bucket. Keys are routed to shards by their top
// 22 bits, whatever G. Ids and lane digests are grouped alike, by the top
// G or G+1 bits of a 32-bit value (FNV-1a of the id, the digest's last 4
// bytes) and routed by its top 22. <gen> is the generation number (0
// without retention).
//
// # Linear growth
//
// A generation's bucket groups, ids and lanes grow with the documents it
// receives (linear hashing, per shard; no size is configured). Its
// layout is a level G and a split count: of the shard's groups at level
// G (those of its routes), the first splits are each two groups of G+1
// digits, the others one of G. A lookup names a bucket's group from its
// first G digits (G+1 when they sort below the first unsplit group): no
// read more. The calls that insert count the generation's band entries
// (clock field n) and, once a band table's groups in the shard would
// hold more than 32 on average (splitLoad), split the next group (one a
// call, two when the shard is still a whole group behind, so that a call
// leaves it less than one behind): its hash in every
// table, the passage table's 64 parts too, goes to the two new groups by
// each field's bit for digit G+1, and so do its id and lane groups' (an
// id by its FNV-1a, an I-Match or content entry by its digest, which is
// its whole field): a hash in listpack encoding is copied whole and each
// copy loses the other group's fields (its field names are read, not its
// values), one in hashtable encoding is read whole and written as two;
// when every
// group of the level has split, the level is G+1. So a group holds 16 to
// 64 buckets on average at any size, from level 4 (the first generation)
// or the level the previous generation's count asks for (later ones, so
// that they seldom split). Each entry is rewritten once or twice on average while its
// generation grows from nothing (a split rewrites its group); a
// generation sized by its predecessor moves little.
//
//	P c                      clock hash: f namespace fingerprint (Params and
//	                         layout), g current generation, w the older live
//	                         generations in which the shard was used, s/u
//	                         expiry sweep position, q Seq counter, y the
//	                         generations' layouts ("gen:start:G:splits,…":
//	                         the level it started at, its level and split
//	                         groups), n the band entries of the current
//	                         generation, t its first write (unix seconds)
//	P b<gen>:<t>:<group>     bucket group (G or G+1 binary digits) of table t (0…Bands-1 LSH bands,
//	                         then the k+1 SimHash block tables, then the
//	                         passage table t = Bands+k+1)
//	                           field  bucket key's bits 4…51, 6 bytes
//	                           value  LSH, passage: members as 6-byte
//	                                  big-endian Seqs
//	                                  SimHash: 6-byte Seq + 8-byte fingerprint
//	                           o<field>  documents turned away by the guard
//	P i<gen>:<group>         ids: external id → Seq (group: 2^c + the top c
//	                         bits of FNV-1a 32 of the id, c = G or G+1, in
//	                         decimal)
//	P x<gen>:<group>         I-Match: digest (20 bytes) → Seq of the first
//	                         document (group: from digest[16:20], as an id's)
//	P e<gen>:<group>         content lane: content digest (16 bytes) → Seq of
//	                         the generation's representative, digest+'+' → its
//	                         recent copies (group: from digest[12:16])
//	P m<n>, P f<n>, P v<n>,  per-document records of local Seqs 64n…64n+63,
//	P k<n>, P s<n>, P l<n>,  field Seq mod 64: m external id, f the feature
//	P t<n>                   bytes exactly as given, after the keys record
//	                         (what Remove needs; delete.go) framed before
//	                         them (featKeys, redis_records.go), v the verdict
//	                         bytes, k the keys record of an exact copy (its
//	                         content digest; it keeps no features),
//	                         s the source record (sources.go), when set, l the
//	                         lookup record until the verdict is recorded
//	                         (recall.go), t the template record
//	                         (templates.go), when set
//	P z<token>               a LookupInsert round trip's stop key (single node):
//	                         set by a call that ended on its time budget, so
//	                         the later calls of the round do nothing; the
//	                         round's last call removes it (60 s expiry)
//
// The passage table receives about 50 anchors per document where a band
// table receives one key, so it has 64 times the groups: 6 more bits of
// a passage bucket's key (its bits 33…38) join its group, first (one
// character of 64, then the G or G+1 digits, in the same shard), and its
// groups stay listpacks of about as many buckets as a band table's. Anchor keys are the
// anchors mixed once more (sketch.Mix64 of the anchor xor a salt), so
// winnowing's preference for small hashes does not crowd the low groups.
//
// Bytes per stored item, before Redis's per-key and allocator overhead: an
// LSH (band, document) entry or a passage (anchor, document) entry is 16
// bytes of listpack (8 field + 8 value; 14 before layout 7's 6-byte
// fields); a SimHash entry 24; an id 7 + its
// length; a lane entry (I-Match, content) about 28; a meta record 4 + the
// id's length; features and verdicts their length plus a few bytes; a
// keys record (see "Deletion") 131 bytes at 30 bands without anchors, 282
// with 50, not included in the figures below.
// Measured before layout 7, on 1,000,000 documents of the web profile (30 bands, 5 KB
// pages; bench/bytesbench, docs/performance.md): 1,409 bytes of
// used_memory per document in all: band hashes 459 (15.3 per (band,
// document) entry), features 724, verdicts 111, I-Match lane 25, content
// lane 21, ids 20, meta records 17. A passage (anchor, document) entry
// measured 17.3 bytes (100,000 documents of 9 bands and 50 anchors,
// BenchmarkRedisMemory): about 870 bytes per document at 50 anchors.
//
// # Generations and memory over time
//
// With RedisConfig.Retention > 0, time is cut into generations of
// RedisConfig.Generation. Writes go to the current generation; lookups read
// every live generation that can hold data (at most ⌈Retention/Generation⌉+1
// of them: one more read per band and anchor each, so keep the ratio small,
// e.g. Generation = Retention or Retention/2). Each shard's clock lists the
// older generations in which it was used, so a store younger than its
// retention, or one left idle for a generation, reads no empty one. The generation is computed from the caller's
// clock and kept monotonic per shard on the server. When a generation
// closes, a sweep (a few hundred key names per LookupInsert call, or
// [Redis.Maintain]) walks every key name it can have, the passage table's
// 64 parts included, and gives each of its keys EXPIREAT
// (gen+1)·Generation + Retention; records
// get that expiry when written. A document is thus findable for at least
// Retention and at most Retention+Generation. RefreshOnMatch carries a
// document found in an older generation into the current one (bucket
// entries, id, record expiry). The memory store expires documents exactly
// after Retention and purges them during later calls.
//
// # Deletion
//
// [Store.Remove] (and Delete) removes every key of a document: its id,
// its records, its member in every band, SimHash and passage bucket of
// every live generation (a bucket left empty is deleted, and a group hash
// left empty goes with it), and the I-Match and content lane entries that
// name it. The buckets come from the document's keys record, written
// with it (delete.go) in its features record since layout 8 (featKeys:
// a hash field of its own cost about 75 bytes of Redis memory per
// document beside the record's bytes), as the stored features do not
// hold the band signature. In Redis (version 4, keysGroupsVersion) it keeps the groups
// of the document's buckets, not their fields: each band key's group at
// full precision (22 bits, so that it decodes in every generation
// whatever its group bits: a generation's group is a prefix of it), the
// distinct passage groups (28 bits) Rice-coded, the SimHash fingerprint
// (its block keys are computed from it) and the I-Match and content
// digests: 131 bytes at 30 bands with the three and no anchors, 282 with
// 50 anchors (TestKeyOpsRecord; version 3, ops with fields at 53 bits,
// 203 and 554; 8-byte keys, version 1, which the memory store keeps, 243
// and 687; Remove reads all four). Remove reads the keys records (one
// round trip), then, in each live generation, each of the document's
// band and passage groups whole (one HSCAN of COUNT 256: a group holds
// 16 to 64 buckets by design, a listpack, which comes back whole) and
// takes the document's seq out of every member list in it: the seq
// names one document, so exactly its own members go, several anchors in
// one group included; SimHash members are found by their key, and the
// buckets of records of version 3 and older by their groups (their
// fields are of layout 6). The rest of a group that one HSCAN did not
// return (a layout 6 generation that got far more documents than it was
// sized for) is walked in HSCAN chunks of about 256 fields, a round trip
// each, so no script call reads an unbounded hash (a group that splits
// between two chunks leaves the members it moved to be dropped by the
// next rewrite of their buckets, as a document stored before keys
// records). Last go
// the ids and records: in the same script call on a single node when
// the document's groups fit in one call, else, and in cluster mode, one
// more round trip. A call's work is bounded (unlinkWork: a group read
// counts 4 plus its fields, about 30 groups of 64 fields), so that it
// stays within several ms: it stops before the group that would pass
// the bound and the rest goes in the next call. Reading whole groups
// costs more server CPU per delete than reading a field of each did
// (version 3; docs/performance.md). What a remove leaves: the shards'
// clock hashes (the Seq counter only grows), the o-fields that count
// documents a full bucket turned away, and a common key's mark (see
// "Common keys"). A document
// stored before keys records existed has only its id and records removed;
// its bucket members are dropped lazily, by the next rewrite of the
// bucket (single node) or with their generation (cluster). Removing an
// unknown id is not an error, and reports it as not stored.
//
// Documents that found a removed document keep what they were told: the
// index does not revisit other documents' verdicts.
//
// A removed document's id keeps its origin (Entry.Origin; Redis: the id
// hash field holds '-' and the origin instead of a Seq): an entry of the
// id read from the same partition at or before that offset is a record
// read again after a crash, and is not stored again (Result.Gone). When
// the removed document represents its content in the content lane, the
// newest of its recent exact copies (the lane keeps four, field f+) takes
// its place: later exact copies of the text still find it.
//
// # Common keys
//
// A band or passage-table key (LSH bands, passage anchors, sentence keys)
// that reaches RedisConfig.CommonDocs live documents becomes common: a site
// template, a consent notice, a licence clause, or a text copied that many
// times. Its bucket is replaced by a mark (Redis: 8 bytes, 'C', the
// exemplar's 6-byte seq and a count of the documents that held or found
// it, capped at 255), so that finding it costs one read: it yields only
// its exemplar, the first document that held it, as a candidate, and
// takes no more members. Result.Common counts an entry's common keys,
// Result.CommonAnchors lists its common anchors and
// Result.CommonAnchorDocs how many documents hold each, so the caller can
// leave common passages out of the evidence. A key common in an older
// generation is marked common in the current one (with the entry as the
// exemplar there). Deleting documents does not make a common key
// ordinary again within its generation. A mark whose exemplar is removed
// keeps its count and names no document (Redis: seq 0): it yields no
// candidate, so a removed document is never a candidate through it, and
// the next document that finds it in its generation becomes its
// exemplar. SimHash tables keep a guard of
// their own (MaxSimHashBucket): a full SimHash bucket stops growing, and
// the documents it turns away are counted (Result.Truncated,
// Stats.Withheld).
//
// # Lost namespaces and clocks
//
// A Redis store remembers the shards whose namespace it has found or
// created; if one of them is later gone (the server restarted without its
// data, the keys were deleted), every call fails with [ErrIndexLost] and
// writes nothing rather than starting afresh, until [Redis.AcceptEmpty].
// RedisConfig.RequireExisting makes a store that has never seen the
// namespace expect it too. The generation comes from the caller's clock
// but a clock more than RedisConfig.MaxClockAhead ahead of the server's
// is refused, so one member's fast clock cannot hide the index from the
// others.
//
// RefreshOnMatch carries into the current generation the records of the
// candidates returned and of lane hits, and the bucket entries of the
// candidates returned in the buckets the entry shares with them (in
// cluster mode, of every member found there).
//
// # Records by sequence number
//
// After its insertion a document is named by its Seq: its features,
// verdict, source, template and lookup records are read and written by Seq
// ([Store.Features], [Store.Verdicts], [Store.RecordVerdicts], …), and a
// record for a Seq that is no longer stored (removed, expired; in Redis:
// its meta record gone, or its id mapping to another Seq or to none in
// the live generations) is refused. Seqs are never reused, so a verdict
// computed for a document that was deleted meanwhile, and perhaps sent
// again under its id, lands nowhere instead of on the new document.
//
// # Replays
//
// Inserting an external id that is stored stores nothing new: the Result
// has Replay set, the stored Seq and the verdict recorded with
// [Store.RecordVerdicts]. When no verdict was recorded (the first attempt
// failed before recording it, or it is still in flight: the same id twice
// in one batch), the result is the lookup the first attempt got, kept in
// the document's lookup record (Result.Recalled, recall.go), so the caller
// computes the verdict the first attempt would have; a document stored
// without one (a cluster-mode first attempt that stopped before its
// lookups were resolved) has its lookups repeated, limited to documents
// with a lower Seq or that did not see it. In cluster mode such a replay
// also completes the content lane and bucket inserts that a failed first
// attempt may have left undone, so that later documents find what one
// uninterrupted run would have stored; a later document met in a bucket
// after the replay's own entry (members are kept in the order they were
// added) saw it and is not listed (TestClusterReplayAfterHalfInsert).
//
// # Read-only stores
//
// RedisConfig.ReadOnly opens a namespace for looking only (neardup
// check): the scripts are declared no-writes (a write would fail on the
// server) and sent with EVALSHA_RO, a namespace that does not exist is
// [ErrIndexLost] and is not created, no older layout is superseded, no
// expiry swept and no clock field written; a generation no writer has
// started is read as the empty generation it is. Lookup answers a stored
// id as its replay, so a read-only store answers what a member would.
//
// # Exact copies
//
// Each generation's content lane maps a content digest to its
// representative: the first document with that content to arrive in the
// generation (with RefreshOnMatch, an older one carried forward), and
// keeps its four most recent exact copies, one of which takes its place
// when it is removed. A
// document whose digest names a live earlier representative in the
// current generation is an exact copy: Result.Copy is set and the lookup
// stops, so a stream of identical documents costs one hash read and one
// write (the lane's recent copies) each and fills no bucket. No lookup
// can return such a copy (it is in no bucket), so on a single node and in
// memory it keeps no features, and a keys record of its content digest
// alone (for a delete to find its lane entry); in cluster mode its
// records are written before the lane is read. On a single node the lane
// is read in the same script call as everything else. In cluster mode it
// takes one more round trip before the buckets (two when it names
// documents, which are resolved).
//
// # Ranking and bounded work
//
// Every distinct bucket member is counted once per table, and once per
// distinct anchor, it shares with the entry (Candidate.Hits), however many
// generations hold it. Candidates are resolved to ids best first, most
// hits then the most recent, until MaxCandidates live ones are found; the
// rest are counted (Result.Dropped) and cost nothing more. A lookup
// therefore reads at most (Bands + SimHash tables + distinct anchors) ×
// live generations buckets of at most CommonDocs members each (at most
// MaxAnchors anchors), resolves about MaxCandidates ids, and returns at
// most MaxCandidates candidates.
//
// # Errors
//
// Connection failures, timeouts (including the caller's deadline) and
// Redis's transient replies surface as [ErrUnavailable]; a call that fails
// returns no results, so nothing is ever reported as unique because Redis
// was down. Retrying the same batch is safe. On Redis Cluster the
// transient replies include the redirects go-redis did not finish within
// its MaxRedirects (MOVED, ASK) besides TRYAGAIN and CLUSTERDOWN; every
// call (go-redis's retries and redirects included) ends within the
// configured timeout, and every unavailable call asks the client to
// reload its slot map, so calls follow a failover as soon as a replica is
// promoted, whether or not the old master still holds connections open. A namespace created with other
// parameters yields [ErrParamsMismatch] at NewRedis and on every later call.
package index
