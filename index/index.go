package index

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/neardup/neardup/sketch"
)

// SchemaVersion is the version of the stored layout. It is part of every
// key ("<namespace>:v5:…"), so a layout change never reads old data.
// Version 2 added the content lane (exact copies), version 3 the passage
// table, version 4 binary bucket fields and hex bucket group names (so the
// scripts convert no number per bucket), version 5 group bits per
// generation, decided on the server (bucket group names in binary
// digits, ids and lanes grouped by their top bits), version 6 records
// read and written by sequence number, source records that name their
// finder and lookup records (recall.go), version 7 groups that grow with
// the documents stored (linear hashing), version 8 the keys record kept in
// the features record (featKeys).
const SchemaVersion = 8

// Sentinel errors. Callers branch on them with [errors.Is].
var (
	// ErrUnavailable wraps connection failures, timeouts and the Redis
	// replies that mean "try again later" (LOADING, CLUSTERDOWN, TRYAGAIN,
	// MASTERDOWN, READONLY, BUSY, OOM). The call had no effect that the
	// caller can rely on; retrying the same batch is safe because
	// LookupInsert is replay-safe.
	ErrUnavailable = errors.New("index: unavailable")
	// ErrParamsMismatch means the namespace was created with different
	// sketch or layout parameters. Stored band keys are meaningless under
	// other parameters, so the store refuses to mix them.
	ErrParamsMismatch = errors.New("index: parameters do not match the namespace")
	// ErrInvalid marks a bad configuration or entry.
	ErrInvalid = errors.New("index: invalid")
	// ErrNotFound means a document is not stored (never inserted,
	// deleted or expired). The record calls report it per document
	// (stored[i] false) instead of failing; callers that need an error
	// wrap it.
	ErrNotFound = errors.New("index: not found")
	// ErrClosed is returned by every method after Close.
	ErrClosed = errors.New("index: closed")
	// ErrIndexLost means the namespace this store had found (or was told
	// exists, RedisConfig.RequireExisting) is gone: the server restarted
	// without its data, or someone deleted the keys. Nothing is decided
	// against it, since every earlier document would read as unseen;
	// retrying does not help. [Redis.AcceptEmpty] accepts the loss.
	ErrIndexLost = errors.New("index: the stored documents are gone")
)

// Params are the sketch parameters that give band keys their meaning. They
// are stored with the namespace on first use; opening the namespace with
// different Params fails with [ErrParamsMismatch].
type Params struct {
	// Hash names the frozen hash definition, e.g. "fnv1a64+splitmix64/v1".
	Hash string
	// K is the MinHash signature length; Bands×Rows ≤ K.
	K, Bands, Rows int
	// Shingle is the shingle width (words or characters).
	Shingle int
	// Seed seeds the hash families.
	Seed uint64
	// SimHashK is the Hamming radius k of the SimHash lane: fingerprints
	// are split into k+1 blocks, one table each. Range 0..15.
	SimHashK int
	// Extra is compared verbatim: anything else that changes the features
	// (MinHash method, normalization, I-Match filter), in any format.
	Extra string
}

// String returns the canonical form that is stored and compared.
func (p Params) String() string {
	return fmt.Sprintf("hash=%s k=%d bands=%d rows=%d shingle=%d seed=%d simhashk=%d extra=%q",
		p.Hash, p.K, p.Bands, p.Rows, p.Shingle, p.Seed, p.SimHashK, p.Extra)
}

func (p Params) validate() error {
	switch {
	case p.Hash == "":
		return fmt.Errorf("%w: params: empty hash name", ErrInvalid)
	case p.Bands < 1 || p.Bands > 255:
		return fmt.Errorf("%w: params: bands %d: want 1..255", ErrInvalid, p.Bands)
	case p.Rows < 1 || p.K < p.Bands*p.Rows:
		return fmt.Errorf("%w: params: %d bands × %d rows do not fit K = %d", ErrInvalid, p.Bands, p.Rows, p.K)
	case p.Shingle < 1:
		return fmt.Errorf("%w: params: shingle %d: want ≥ 1", ErrInvalid, p.Shingle)
	case p.SimHashK < 0 || p.SimHashK > 15:
		return fmt.Errorf("%w: params: simhash k %d: want 0..15", ErrInvalid, p.SimHashK)
	case strings.ContainsAny(p.Hash, " \n"):
		return fmt.Errorf("%w: params: hash name %q contains spaces", ErrInvalid, p.Hash)
	}
	return nil
}

// passageTable is the index of the passage table, right after the LSH
// bands and the k+1 SimHash block tables.
func (p Params) passageTable() int { return p.Bands + p.SimHashK + 1 }

// MaxIDLen bounds external ids. Ids up to 62 bytes keep the Redis id and
// meta hashes in their compact listpack encoding.
const MaxIDLen = 1024

// MaxAnchors bounds Entry.Anchors: each distinct anchor is one bucket
// lookup-and-insert.
const MaxAnchors = 4096

// DefaultMaxCandidates is the default of MaxCandidates: the candidates a
// lookup returns at most, best ranked first.
const DefaultMaxCandidates = 32

// Entry is one document to look up and insert.
type Entry struct {
	// ID is the external document id (non-empty, valid UTF-8 not required,
	// at most MaxIDLen bytes).
	ID string
	// Bands holds the LSH band keys (sketch.BandKeys); key i belongs to
	// band i. len(Bands) must equal Params.Bands.
	Bands []uint64
	// SimHash is the 64-bit SimHash fingerprint, used when HasSimHash. The
	// index derives the k+1 block keys itself (sketch.SimHashBlocks).
	SimHash    uint64
	HasSimHash bool
	// IMatch is the I-Match digest, used when HasIMatch: the first stored
	// document with the same digest is returned (Result.IMatch).
	IMatch    sketch.Digest
	HasIMatch bool
	// Content is the digest of the whole normalized text, used when
	// HasContent: the content lane finds an earlier exact copy without
	// looking up a single bucket (Result.Copy).
	Content    sketch.ContentDigest
	HasContent bool
	// Anchors are the document's passage anchors: winnowed shingle hashes
	// such that two documents sharing a long enough passage share at
	// least one. Each distinct value is one bucket of the passage table
	// (duplicates count once); a document sharing anchors with the entry
	// is a candidate even when no band matches. At most MaxAnchors; may be
	// empty.
	Anchors []uint64
	// Features are opaque bytes stored with the document and returned by
	// Features. The index neither reads nor changes them.
	Features []byte
	// Origin is where the document was read, when that is a position in
	// an ordered log (Origin: a Kafka topic, partition and offset); ""
	// for none. It is kept with the document; when the document is
	// removed, its id keeps the origin as a mark, and a later entry of
	// that id read from the same partition at or before that offset is a
	// record read again after the delete (a member crashed before
	// committing it): it is not stored (Result.Gone). Deletes thus
	// survive a crash whatever the records are keyed by.
	Origin string
}

// Origin returns the Entry.Origin of a record at offset of partition of
// topic: 16 bytes, the FNV-1a 32 of the topic's name, the partition and
// the offset, big-endian, so that origins of one partition compare as
// their offsets do.
func Origin(topic string, partition int32, offset int64) string {
	b := make([]byte, 0, originBytes)
	b = binary.BigEndian.AppendUint32(b, fnv32(topic))
	b = binary.BigEndian.AppendUint32(b, uint32(partition))
	b = binary.BigEndian.AppendUint64(b, uint64(offset))
	return string(b)
}

// originBytes is the length of an Origin.
const originBytes = 16

// goneAfter reports whether an entry from origin o re-reads a record
// whose document was removed after it was stored from origin removed:
// the same topic and partition, at or before its offset.
func goneAfter(o, removed string) bool {
	return len(o) == originBytes && len(removed) == originBytes && o[:8] == removed[:8] && o[8:] <= removed[8:]
}

func (e *Entry) validate(p Params) error {
	switch {
	case e.ID == "":
		return fmt.Errorf("%w: entry: empty id", ErrInvalid)
	case len(e.ID) > MaxIDLen:
		return fmt.Errorf("%w: entry %.40q…: id longer than %d bytes", ErrInvalid, e.ID, MaxIDLen)
	case len(e.Bands) != p.Bands:
		return fmt.Errorf("%w: entry %q: %d band keys, want %d", ErrInvalid, e.ID, len(e.Bands), p.Bands)
	case len(e.Anchors) > MaxAnchors:
		return fmt.Errorf("%w: entry %q: %d anchors, want ≤ %d", ErrInvalid, e.ID, len(e.Anchors), MaxAnchors)
	case e.Origin != "" && len(e.Origin) != originBytes:
		return fmt.Errorf("%w: entry %q: origin of %d bytes is not one of index.Origin", ErrInvalid, e.ID, len(e.Origin))
	}
	return nil
}

// Via values of a Candidate.
const (
	ViaLSH     = "lsh"
	ViaSimHash = "simhash"
	ViaPassage = "passage"
)

// Candidate is a stored document that shares a bucket with the query.
type Candidate struct {
	ID  string
	Seq uint64
	// Via is ViaLSH when the candidate shares at least one LSH band bucket
	// (whatever else it shares), else ViaSimHash when it was found through
	// a SimHash block table and its fingerprint is within Hamming distance
	// Params.SimHashK of the query's, else ViaPassage: it shares only
	// passage anchors.
	Via string
	// Hits is the number of the entry's tables (LSH bands, SimHash blocks)
	// in which the candidate shares the bucket, plus the number of the
	// entry's distinct anchors it shares: the first ranking key.
	Hits int
	// Features are the candidate's stored features (Entry.Features;
	// empty, not nil, when it was stored without any), as Features would
	// return them, read with the lookup (a single Redis node: in a second
	// round trip of plain reads), so the caller needs no call of its own.
	// nil means the store did not read them (Redis Cluster, where the
	// records live in other shards, or a document deleted meanwhile):
	// fetch them with
	// [Store.Features]. The
	// slice may be shared with the store and with other candidates and
	// results: it must not be modified.
	Features []byte
	// Source is the candidate's source record ([Store.RecordSources]),
	// read with the features when the store reads them and the entry has
	// common anchors (Result.CommonAnchors): empty, not nil, when the
	// candidate has none. nil means it was not read: fetch it with
	// [Store.Sources]. Shared like Features: it must not be modified.
	Source []byte
	// Verdict is the candidate's recorded verdict, read with its
	// features: empty, not nil, when none is recorded yet; nil when it
	// was not read (fetch it with [Store.Verdicts]). Shared like
	// Features: it must not be modified.
	Verdict []byte
}

// Result is what LookupInsert reports for one entry.
type Result struct {
	// Seq is the document's sequence number: its compact internal id and
	// its position in first-seen order. Seqs are unique and increasing in
	// the order documents were admitted, with gaps in cluster mode.
	Seq uint64
	// Replay reports that ID was already stored: nothing new was stored,
	// Seq is the stored document's, and Verdict holds what RecordVerdicts
	// recorded (nil when nothing was recorded yet, e.g. the first attempt
	// crashed before recording). When Verdict is nil the result is the
	// first attempt's (Recalled), or, for a document stored without a
	// lookup record, the lookups repeated among lower Seqs, so the caller
	// can compute the verdict again; when it is set Candidates and Copy
	// are empty.
	Replay  bool
	Verdict []byte
	// Gone reports an entry that re-reads the record of a document
	// removed since (Entry.Origin): nothing was stored and nothing looked
	// up; Seq is 0.
	Gone bool
	// Recalled reports a replay without a verdict answered from the
	// lookup its first attempt recorded (the lookup record, written with
	// the document): the candidates, lane hits, common keys and counts
	// that attempt was given, not what the index holds now, so that a
	// verdict computed again after a crash is the one the first attempt
	// would have recorded. Candidates removed since are left out.
	Recalled bool
	// Copy is the external id of the first stored document with the same
	// content digest ("" when there is none), and CopySeq its Seq. When a
	// live earlier copy is the current generation's representative of
	// that content, the entry is an exact copy and the lookup stops there:
	// no bucket is read or written (the copy is found through the digest
	// and needs no verification), Candidates is empty and IMatch is not
	// looked up. A copy found only in an older generation does not stop
	// the lookup: the entry becomes the current generation's
	// representative. Delete does not repair the digest, so copies of a
	// deleted document stay out of the buckets.
	Copy    string
	CopySeq uint64
	// IMatch is the external id of the first stored document with the
	// same I-Match digest ("" when there is none or it is this document),
	// and IMatchSeq its Seq: one more candidate, verified like the others.
	IMatch    string
	IMatchSeq uint64
	// IMatchFeatures are the stored features of the IMatch document, as
	// Candidate.Features are those of a candidate: nil when IMatch is ""
	// or the store did not read them (fetch them with [Store.Features]),
	// shared, not to be modified.
	IMatchFeatures []byte
	// IMatchSource is the IMatch document's source record, read as
	// Candidate.Source is (nil: not read).
	IMatchSource []byte
	// IMatchVerdict is the IMatch document's recorded verdict, read as
	// Candidate.Verdict is (nil: not read).
	IMatchVerdict []byte
	// Candidates are distinct stored documents sharing a bucket with the
	// entry, excluding the entry itself, ranked: most Hits first, then the
	// most recent (highest Seq). At most MaxCandidates are returned; the
	// others are counted in Dropped.
	//
	// On a single Redis node and in memory every candidate has a lower Seq
	// (a serial execution). In cluster mode a candidate may have a higher
	// Seq: a later document that was admitted concurrently and did not see
	// this one. The ordering rule (see the package documentation) makes the
	// caller report such a pair from this side, as a correction.
	Candidates []Candidate
	// Truncated counts members withheld by the SimHash tables' guard
	// (MaxSimHashBucket): documents turned away from full SimHash buckets
	// this entry looked up.
	Truncated int
	// Dropped counts the bucket members ranked below the MaxCandidates
	// returned: found, never resolved nor verified.
	Dropped int
	// Common counts the entry's keys that are common: LSH band buckets
	// and passage anchors held by CommonDocs documents (boilerplate, or a
	// large cluster of copies), and full SimHash buckets. A common key
	// yields only its exemplar as a candidate (the first document that
	// held it) and takes no more documents.
	Common int
	// CommonAnchors are the entry's anchors (as given, sorted, distinct)
	// whose passage-table key is common: a passage or a sentence shared
	// by that many documents. The caller discounts what it finds through
	// them (they are not evidence of copying).
	CommonAnchors []uint64
	// CommonAnchorDocs are the documents that held or found each common
	// anchor in its generation (CommonAnchorDocs[i] for CommonAnchors[i];
	// at least CommonDocs, at most 255): how common it is.
	CommonAnchorDocs []int
}

// Store is the band store. Implementations are safe for concurrent use.
//
// A document is named by its Seq everywhere after LookupInsert: its
// features, verdict, source and lookup records are read and written by
// Seq, never by external id. A Seq names one stored document for good
// (Seqs are never reused), so a record written for a document that has
// since been removed (and perhaps stored again under its id, with a new
// Seq) is not written at all: an id deleted and sent again is a new
// document in every record.
type Store interface {
	// LookupInsert looks up each entry's buckets and inserts the entry,
	// atomically per entry: of two near-duplicates processed concurrently,
	// at least one sees the other. Entries are processed in order, so a
	// later entry of the batch sees an earlier one. On a single Redis node
	// a batch is one round trip, and one more for the candidates'
	// features. On error no result is returned and the
	// batch may be retried as is (see Result.Replay).
	//
	// The memory store and a single Redis node return the candidates'
	// stored features and verdicts with them (Candidate.Features,
	// Candidate.Verdict, Result.IMatchFeatures, Result.IMatchVerdict),
	// those of an earlier entry of the same batch included; Redis Cluster
	// leaves them nil.
	LookupInsert(ctx context.Context, docs []Entry) ([]Result, error)
	// Lookup looks each entry up as LookupInsert would, against what is
	// stored, and stores nothing: no id, bucket member, digest, verdict,
	// record or refresh (a common key's count does not move). An entry
	// whose id is stored is answered as LookupInsert answers a replay:
	// Replay set, the stored Seq and the recorded verdict (or the lookup
	// recorded with it, Result.Recalled). Any other entry stands after
	// every stored document: Seq is above every stored document's.
	// Entries of one call do not see each other.
	Lookup(ctx context.Context, docs []Entry) ([]Result, error)
	// Features returns the stored features of each document, nil for
	// Seqs that are not stored (never, removed or expired). The returned
	// slices must not be modified. Callers need it only for the
	// candidates LookupInsert returned without features
	// (Candidate.Features nil).
	Features(ctx context.Context, seqs []uint64) ([][]byte, error)
	// Verdicts returns the verdict recorded for each document: nil for
	// Seqs that are not stored, empty (not nil) for stored documents with
	// no verdict yet. The returned slices must not be modified.
	Verdicts(ctx context.Context, seqs []uint64) ([][]byte, error)
	// RecordVerdicts records verdicts[i], opaque bytes returned to
	// replays, for document seqs[i], in one round trip on a single node.
	// The first write wins; later writes are ignored. stored[i] is false
	// when seqs[i] is not stored (nothing was recorded for it). Recording
	// a verdict drops the document's lookup record (Result.Recalled).
	RecordVerdicts(ctx context.Context, seqs []uint64, verdicts [][]byte) (stored []bool, err error)
	// ReviseVerdicts replaces the verdict recorded for seqs[i] with
	// verdicts[i] when what is recorded equals old[i] (nil old: no
	// verdict is recorded yet), a compare-and-set: revised[i] reports
	// that it was replaced. A correction (Redis Cluster: an earlier
	// document that found a later one it should have been found by)
	// records the later document's corrected verdict this way, so that a
	// replay of it returns the correction.
	ReviseVerdicts(ctx context.Context, seqs []uint64, old, verdicts [][]byte) (revised []bool, err error)
	// Sources returns the source record of each document (RecordSources):
	// nil for Seqs that are not stored, empty (not nil) for documents
	// without one. Callers need it only for candidates returned without
	// it (Candidate.Source nil). The returned slices must not be
	// modified.
	Sources(ctx context.Context, seqs []uint64) ([][]byte, error)
	// RecordSources records copied[i] as the source record of document
	// seqs[i] (a document found copied whole: AppendSource, the finder's
	// Seq and the copied text's anchor hashes), in one round trip on a
	// single node. Of two records of one document the one with the lower
	// finder Seq wins, whatever the order they are written in, so a
	// replayed batch changes nothing and a document's source is the one
	// its first finder found; stored[i] is false when seqs[i] is not
	// stored. The record goes with the document (Remove, expiry).
	RecordSources(ctx context.Context, seqs []uint64, copied [][]byte) (stored []bool, err error)
	// Templates returns the template record of each document
	// (RecordTemplates), as Sources does source records.
	Templates(ctx context.Context, seqs []uint64) ([][]byte, error)
	// RecordTemplates records recs[i] as the template record of document
	// seqs[i] (AppendTemplate: the Seq of the document that found the
	// template, then the caller's encoding of which of its stored anchors
	// and shingles are its site's template), as RecordSources records
	// source records: the lower finder's record wins whatever the order
	// of the writes, and the record goes with the document.
	RecordTemplates(ctx context.Context, seqs []uint64, recs [][]byte) (stored []bool, err error)
	// Delete removes documents: they are no longer candidates, their
	// features are gone and their ids can be inserted again. Unknown ids
	// are ignored. It is Remove without the report.
	Delete(ctx context.Context, ids ...string) error
	// Remove deletes documents and every key they hold: their id, records
	// (features, verdict, keys, source, template, lookup), their members in every
	// band, SimHash and passage bucket, and the I-Match and content lane
	// entries that name them, in every live generation (see "Deletion" in
	// the package documentation). removed[i] reports that ids[i] was
	// stored; an unknown id (never stored, expired, or removed already)
	// is not an error, so a remove read twice is harmless.
	Remove(ctx context.Context, ids []string) (removed []bool, err error)
	// Close releases the store. Methods return ErrClosed afterwards.
	Close() error
}

// Stats are counters since the store was opened.
type Stats struct {
	Docs       uint64 // entries passed to LookupInsert
	Replays    uint64 // entries that were replays
	Candidates uint64 // candidates returned
	Copies     uint64 // entries that were exact copies (Result.Copy set)
	IMatch     uint64 // I-Match lane hits
	Passage    uint64 // candidates returned with Via ViaPassage
	// HotBuckets counts bucket lookups that hit a full bucket; Withheld
	// sums Result.Truncated and Dropped Result.Dropped.
	HotBuckets uint64
	Withheld   uint64
	Dropped    uint64
}

func validateEntries(p Params, docs []Entry) error {
	for i := range docs {
		if err := docs[i].validate(p); err != nil {
			return err
		}
	}
	return nil
}

// simBlockKeys writes the bucket keys of the k+1 SimHash block tables of fp
// into dst. Block i is salted with its table so equal blocks of different
// tables never share a key.
func simBlockKeys(dst []uint64, fp uint64, k int) []uint64 {
	dst = sketch.SimHashBlocks(dst, fp, k)
	for i, b := range dst {
		dst[i] = sketch.Mix64(b ^ uint64(i+1)<<56)
	}
	return dst
}

// passageSalt separates anchor keys from every other bucket key.
const passageSalt = 0x70617373616765 // "passage"

// anchorKeys writes into dst the bucket keys of the distinct anchors of a,
// in increasing anchor order. Anchors are mixed once more (a bijection) so
// that winnowing's bias towards small hashes does not crowd the low Redis
// groups.
func anchorKeys(dst, a []uint64) []uint64 {
	dst = append(dst[:0], a...)
	slices.Sort(dst)
	dst = slices.Compact(dst)
	for i, x := range dst {
		dst[i] = sketch.Mix64(x ^ passageSalt)
	}
	return dst
}

// hotAnchors returns the anchors of a at positions idx of its sorted
// distinct values (the order of anchorKeys), sorted and distinct, with
// the documents holding each (docs[i] belongs to idx[i]; the most for an
// anchor listed twice); nil for none.
func hotAnchors(a []uint64, idx, docs []int) ([]uint64, []int) {
	if len(idx) == 0 {
		return nil, nil
	}
	return hotAnchorsOf(slices.Compact(slices.Sorted(slices.Values(a))), idx, docs)
}

// hotAnchorsOf is hotAnchors given d, the anchors sorted and distinct.
func hotAnchorsOf(d []uint64, idx, docs []int) ([]uint64, []int) {
	if len(idx) == 0 {
		return nil, nil
	}
	// Sort the positions with their counts, then keep the most per
	// anchor: d is sorted, so position order is anchor order.
	type hit struct{ i, n int }
	hits := make([]hit, 0, len(idx))
	for k, i := range idx {
		if i >= 0 && i < len(d) {
			hits = append(hits, hit{i, docs[k]})
		}
	}
	slices.SortFunc(hits, func(x, y hit) int { return cmp.Compare(x.i, y.i) })
	var out []uint64
	var n []int
	for _, h := range hits {
		if l := len(out); l > 0 && out[l-1] == d[h.i] {
			n[l-1] = max(n[l-1], h.n)
			continue
		}
		out, n = append(out, d[h.i]), append(n, h.n)
	}
	if n == nil {
		n = []int{}
	}
	return out, n
}

// rankCandidates orders distinct candidates best first: most hits, then
// the most recent (highest Seq). Seqs are distinct, so the order is total.
func rankCandidates(c []Candidate) {
	slices.SortFunc(c, func(a, b Candidate) int { return cmp.Or(cmp.Compare(b.Hits, a.Hits), cmp.Compare(b.Seq, a.Seq)) })
}

// passageCands counts the candidates found only through passage anchors.
func passageCands(c []Candidate) int {
	n := 0
	for i := range c {
		if c[i].Via == ViaPassage {
			n++
		}
	}
	return n
}

// validNamespace reports whether ns is usable inside Redis keys: no braces
// (they would become hash tags), no spaces, printable.
func validNamespace(ns string) bool {
	if ns == "" || len(ns) > 64 || !utf8.ValidString(ns) {
		return false
	}
	return !strings.ContainsAny(ns, "{} \t\r\n")
}
