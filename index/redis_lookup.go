package index

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

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
	var scratch lookupScratch
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
		args, buf = r.appendLookupArgs(args, buf, chunk, check, &scratch)
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
			r.decodeLookup(&d, &out[lo+i], docs[lo+i].Anchors)
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
					b := []byte(s)
					if rd == feats {
						// Without the keys record the value carries.
						var ok bool
						if b, _, ok = unframeFeatures(b); !ok {
							return fmt.Errorf("features of seq %d cut short", h*metaGroup+f)
						}
					}
					rd.got[h*metaGroup+f] = b
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

// lookupScratch is what appendLookupArgs reuses from one document to the
// next: a document's SimHash block keys and passage anchor keys.
type lookupScratch struct{ sim, anchors []uint64 }

// appendLookupArgs appends to args the lookupInsert script's arguments
// for the documents of chunk (ARGV from 9 on: id, id group, flags,
// features, keys record, origin, bucket ops, then the SimHash, I-Match
// and content digests its flags announce), writing their bucket ops to
// buf, and returns both.
func (r *Redis) appendLookupArgs(args []any, buf []byte, chunk []Entry, check bool, sc *lookupScratch) ([]any, []byte) {
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
			sc.sim = simBlockKeys(sc.sim[:0], e.SimHash, r.p.SimHashK)
			for j, k := range sc.sim {
				buf = r.appendOp(buf, r.p.Bands+j, k)
			}
		}
		sc.anchors = anchorKeys(sc.anchors, e.Anchors)
		for _, k := range sc.anchors {
			buf = r.appendOp(buf, r.p.passageTable(), k)
		}
		var feat []byte
		if !check {
			feat = r.featuresRecord(e)
		}
		// The keys record travels in the features record (featKeys).
		args = append(args, e.ID, r.idGroup(e.ID), flags, feat, []byte{}, e.Origin, buf[start:len(buf):len(buf)])
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
	return args, buf
}

// decodeLookup reads one document's answer from a lookupInsert reply
// into res; anchors are the document's passage anchors, whose common ones
// the reply names by position.
func (r *Redis) decodeLookup(d *decoder, res *Result, anchors []uint64) {
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
	res.CommonAnchors, res.CommonAnchorDocs = hotAnchors(anchors, hot, held)
}
