package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
)

// lookupCluster runs LookupInsert over shards that live on
// different masters:
//
//  1. HINCRBY reserves one sequence number per document on shard 0;
//     document i gets seq (c+i)·S + shard(id), so the record shard is
//     seq mod S.
//  2. register, per id shard: id → seq unless the id is stored (replay),
//     records written. A document's records exist before any of its
//     bucket entries, so whoever finds the entry can resolve it.
//  3. the content lane, per content shard, and the resolution of the
//     documents it names (a second round trip, only when it names any):
//     a live earlier representative makes the document an exact copy,
//     which skips step 4.
//  4. buckets, per bucket shard: every bucket lookup-and-insert of the
//     shard (bands, SimHash blocks, anchors), each one atomic; the I-Match
//     lane likewise.
//  5. resolve, per record shard: the ranked candidates → external ids
//     until MaxCandidates live ones are found (rarely more than one round
//     trip); deleted and expired documents drop out.
//
// Two near-duplicates share a bucket, and the two operations on that
// bucket are serialized by its master, so the second sees the first. The
// earlier document (lower seq) may be the one that sees the later: it then
// has a higher-Seq candidate, and the ordering rule of the package
// documentation applies. The content lane follows the same rule: a copy
// registered concurrently with a higher Seq is reported as Copy, and the
// document is processed in full.
//
// With check (Lookup) it registers nothing, looks every bucket and lane up
// without writing (mode 1), sweeps no expiry and refreshes no record.
//
// A replay without a verdict whose lookup record phase 2 returned (or, in
// Lookup, luaIDs) skips phases 3 and 4: its candidates and lane hits are
// the record's, resolved in phase 5. After phase 5, the lookup records of
// the documents inserted are written (one more round trip: a document's
// lookup is whole only once its candidates are resolved).
func (r *Redis) lookupCluster(ctx context.Context, docs []Entry, check bool) ([]Result, error) {
	n := len(docs)
	budget := sweepBudget
	if check {
		budget = 0
	}
	out := make([]Result, n)
	recs := make([]*lookupRec, n)
	var err error
	if check {
		err = r.lookupIDs(ctx, docs, out, recs)
	} else {
		err = r.reserveAndRegister(ctx, docs, out, recs)
	}
	if err != nil {
		return nil, err
	}
	if err := r.stop(2); err != nil {
		return nil, err
	}

	// A document inserted earlier in the batch and sent again in it is
	// answered with the first one's lookup, as a recalled replay (a
	// single node and the memory store do the same: the first one's
	// lookup record is written by then).
	same := make([]int, n)
	first := map[uint64]int{}
	for i := range out {
		same[i] = -1
		if out[i].Gone {
			recs[i] = &lookupRec{} // nothing to look up
		} else if !out[i].Replay {
			first[out[i].Seq] = i
		} else if f, ok := first[out[i].Seq]; ok && out[i].Verdict == nil && recs[i] == nil {
			same[i] = f
			recs[i] = &lookupRec{} // skips the lanes and buckets; replaced below
		}
	}

	// 3. the content lane.
	skip, copyOld, err := r.copiesCluster(ctx, docs, out, recs, check)
	if err != nil {
		return nil, err
	}
	if err := r.stop(3); err != nil {
		return nil, err
	}
	hot, err := r.bucketsAndResolve(ctx, docs, out, recs, skip, copyOld, check, budget)
	if err != nil {
		return nil, err
	}
	if err := r.stop(4); err != nil {
		return nil, err
	}
	for i, f := range same {
		if f >= 0 {
			out[i] = out[f]
			out[i].Replay, out[i].Recalled = true, true
			out[i].Candidates = slices.Clone(out[f].Candidates)
		}
	}
	if check {
		return out, nil
	}
	return out, r.keepLookups(ctx, out, hot)
}

// stop is the stopAfter test hook.
func (r *Redis) stop(phase int) error {
	if r.stopAfter == nil {
		return nil
	}
	return r.stopAfter(phase)
}

// keepLookups writes the lookup record of every document out inserted
// (not a replay), hot[i] holding its common anchors' indices and counts.
func (r *Redis) keepLookups(ctx context.Context, out []Result, hot []hotOf) error {
	byShard := make([][]int, r.shards)
	for i := range out {
		if !out[i].Replay && !out[i].Gone {
			sh := int(out[i].Seq % uint64(r.shards))
			byShard[sh] = append(byShard[sh], i)
		}
	}
	calls, _ := shardCalls(r, r.scripts.keepLookups, sweepBudget, byShard, func(args []any, i int) []any {
		res := &out[i]
		l := lookupRec{copySeq: res.CopySeq, truncated: res.Truncated, common: res.Common, dropped: res.Dropped,
			cands: res.Candidates, hotIdx: hot[i].idx, hotDocs: hot[i].docs}
		if res.IMatch != "" {
			l.imatchSeq = res.IMatchSeq
		}
		if res.Copy == "" {
			l.copySeq = 0
		}
		return append(args, strconv.FormatUint(res.Seq, 10), l.appendTo(nil))
	})
	if len(calls) == 0 {
		return nil
	}
	return r.run(ctx, calls)
}

// hotOf are a document's common anchors: indices among its distinct
// anchors, and the documents holding each.
type hotOf struct{ idx, docs []int }

// lookupIDs is Lookup's phase 2 (luaIDs): a stored id is answered as its
// replay (Replay, its Seq and verdict, recs[i] its lookup record when it
// has no verdict); any other entry stands after every stored document.
func (r *Redis) lookupIDs(ctx context.Context, docs []Entry, out []Result, recs []*lookupRec) error {
	ids := make([]string, len(docs))
	for i := range docs {
		ids[i] = docs[i].ID
	}
	calls, idx := r.byIDShard(ids, r.scripts.ids, func(args []any, i int) []any {
		return append(args, ids[i], r.idGroup(ids[i]))
	})
	return runDecode(ctx, r, calls, idx, "ids", func(d *decoder, i int) error {
		seq, vd, lr := d.u48(), d.bytes(), d.bytes()
		out[i].Seq = checkSeq
		if seq == 0 {
			return nil
		}
		out[i].Replay, out[i].Seq, out[i].Verdict = true, seq, vd
		return recalledCluster(&out[i], lr, recs, i)
	})
}

// runDecode runs calls and reads each one's reply, a record per item of
// idx[c] in order, with read; a reply not read exactly is malformed.
func runDecode[T any](ctx context.Context, r *Redis, calls []*call, idx [][]T, what string, read func(d *decoder, x T) error) error {
	if err := r.run(ctx, calls); err != nil {
		return err
	}
	for ci, c := range calls {
		reply, err := c.cmd.Text()
		if err != nil {
			return err
		}
		d := decoder{s: reply}
		for _, i := range idx[ci] {
			if err := read(&d, i); err != nil {
				return err
			}
		}
		if d.bad || d.p != len(d.s) {
			return fmt.Errorf("malformed %s reply", what)
		}
	}
	return nil
}

// recalledCluster marks a replay without a verdict whose lookup record lr
// was read (nil: none) as recalled, its record in recs[i].
func recalledCluster(res *Result, lr []byte, recs []*lookupRec, i int) error {
	if res.Verdict != nil || lr == nil {
		return nil
	}
	l, err := decodeLookup(lr)
	if err != nil {
		return err
	}
	recs[i], res.Recalled = l, true
	return nil
}

// checkSeq is the seq a looked-up-only document stands at in cluster
// mode: after every stored document (seqs stay below 2^47 there).
const checkSeq = 1 << 47

// reserveAndRegister is phases 1 and 2: seqs reserved, ids registered
// and records written; out gets each document's Seq, Replay and Verdict.
func (r *Redis) reserveAndRegister(ctx context.Context, docs []Entry, out []Result, recs []*lookupRec) error {
	n := len(docs)
	last, err := r.c.HIncrBy(ctx, r.clock[0], "q", int64(n)).Result()
	if err != nil {
		return err
	}
	first := uint64(last) - uint64(n) + 1
	S := uint64(r.shards)

	// 2. register.
	ids := make([]string, n)
	for i := range docs {
		ids[i] = docs[i].ID
	}
	calls, idx := r.byIDShard(ids, r.scripts.register, nil)
	for ci, c := range calls {
		for _, i := range idx[ci] {
			e := &docs[i]
			g := r.idGroup(e.ID)
			seq := (first+uint64(i))*S + uint64(r.shardOfGroup(g))
			c.args = append(c.args, e.ID, r.idGroup(e.ID), seq, r.featuresRecord(e), []byte{}, e.Origin)
		}
	}
	return runDecode(ctx, r, calls, idx, "register", func(d *decoder, i int) error {
		st := d.u8()
		out[i].Replay, out[i].Gone = st == 1, st == 3
		out[i].Seq = d.u48()
		out[i].Verdict = d.bytes()
		return recalledCluster(&out[i], d.bytes(), recs, i)
	})
}

// bucketsAndResolve are phases 4 and 5 (see lookupCluster).
//
// It returns each document's common anchors (indices and counts), for
// its lookup record.
func (r *Redis) bucketsAndResolve(ctx context.Context, docs []Entry, out []Result, recs []*lookupRec, skip, copyOld []bool, check bool, budget int) ([]hotOf, error) {
	perShard := r.bucketParts(docs, out, recs, skip, check)
	bh, err := r.readBuckets(ctx, perShard, budget, out)
	if err != nil {
		return nil, err
	}
	ranked := bh.rank(out, recs)
	refresh := r.refresh && !check
	next, names, err := r.resolveRanked(ctx, out, ranked, bh, recs, copyOld, refresh)
	if err != nil {
		return nil, err
	}
	n := len(docs)
	hots := make([]hotOf, n)
	for i := range out {
		res := &out[i]
		res.CommonAnchors, res.CommonAnchorDocs = hotAnchors(docs[i].Anchors, bh.hot[i], bh.held[i])
		hots[i] = hotOf{bh.hot[i], bh.held[i]}
		res.Dropped = len(ranked[i]) - next[i]
		if l := recs[i]; l != nil {
			res.Dropped = l.dropped
			if s := res.CopySeq; s != 0 {
				if id, ok := names[s]; ok {
					res.Copy = id
				} else {
					res.CopySeq = 0
				}
			}
		}
		if len(res.Candidates) == 0 {
			res.Candidates = nil
		}
		if s := res.IMatchSeq; s != 0 {
			if id, ok := names[s]; ok {
				res.IMatch = id
			} else {
				res.IMatchSeq = 0
			}
		}
	}
	return hots, nil
}

// bucketPart is one document's entry in a buckets call (phase 4).
type bucketPart struct {
	doc  int
	args []any
	// anchorOf[o] is the index among the document's distinct anchors
	// of op o, −1 for a band or SimHash op.
	anchorOf []int
}

// bucketParts builds phase 4's argument lists: one per shard, one entry
// per document that still needs its buckets (not a replay with a verdict,
// a copy, or a recalled document).
func (r *Redis) bucketParts(docs []Entry, out []Result, recs []*lookupRec, skip []bool, check bool) [][]bucketPart {
	perShard := make([][]bucketPart, r.shards)
	var sim, anchors []uint64
	for i := range docs {
		e, res := &docs[i], &out[i]
		if (res.Replay && res.Verdict != nil) || skip[i] || recs[i] != nil {
			continue
		}
		mode := 0
		switch {
		case check:
			mode = 1 // look up only
		case res.Replay:
			mode = 2 // a replay whose first attempt may have stopped half-way
		}
		ops := make([][]byte, r.shards)
		anchorOf := make([][]int, r.shards)
		add := func(t int, key uint64, anchor int) {
			g, _ := r.bucketOp(t, key)
			sh := r.shardOfRoute(r.routeOf(t, g))
			ops[sh] = r.appendOp(binary.BigEndian.AppendUint16(ops[sh], uint16(t)), t, key)
			anchorOf[sh] = append(anchorOf[sh], anchor)
		}
		for t, k := range e.Bands {
			add(t, k, -1)
		}
		if e.HasSimHash {
			sim = simBlockKeys(sim[:0], e.SimHash, r.p.SimHashK)
			for j, k := range sim {
				add(r.p.Bands+j, k, -1)
			}
		}
		anchors = anchorKeys(anchors, e.Anchors)
		for j, k := range anchors {
			add(r.p.passageTable(), k, j)
		}
		dsh := -1
		if e.HasIMatch {
			dsh = r.shardOfGroup(r.digestGroup(e.IMatch[:]))
		}
		for sh, o := range ops {
			if len(o) == 0 && sh != dsh {
				continue
			}
			a := []any{res.Seq, mode, binary.BigEndian.AppendUint64(nil, e.SimHash), o}
			if sh == dsh {
				a = append(a, e.IMatch[:])
			} else {
				a = append(a, "")
			}
			perShard[sh] = append(perShard[sh], bucketPart{i, a, anchorOf[sh]})
		}
	}
	return perShard
}

// bucketCand is a candidate met in a document's buckets, summed over the
// shards: its best lane, hits, and whether it was found in an older
// generation.
type bucketCand struct {
	via  byte
	hits int
	old  bool
}

// bucketHits is what phase 4 found, per document.
type bucketHits struct {
	cands     []map[uint64]bucketCand
	imatchOld []bool
	hot       [][]int // common anchors of each document, by index
	held      [][]int // and the documents holding them
}

// readBuckets runs phase 4's calls and sums their replies per document
// (out's Truncated, Common and IMatchSeq included).
func (r *Redis) readBuckets(ctx context.Context, perShard [][]bucketPart, budget int, out []Result) (*bucketHits, error) {
	calls, owners := shardCalls(r, r.scripts.buckets, budget, perShard, func(args []any, p bucketPart) []any {
		return append(args, p.args...)
	})
	if err := r.run(ctx, calls); err != nil {
		return nil, err
	}
	n := len(out)
	bh := &bucketHits{cands: make([]map[uint64]bucketCand, n), imatchOld: make([]bool, n), hot: make([][]int, n), held: make([][]int, n)}
	cands, hot, held := bh.cands, bh.hot, bh.held
	for ci, c := range calls {
		reply, err := c.cmd.Text()
		if err != nil {
			return nil, err
		}
		d := decoder{s: reply}
		for _, p := range owners[ci] {
			i := p.doc
			out[i].Truncated += int(d.u32())
			common := int(d.u16())
			out[i].Common += common
			r.stats.hot.Add(uint64(common))
			if ex, old := d.u48(), d.u8(); ex != 0 {
				out[i].IMatchSeq, bh.imatchOld[i] = ex, old == 1
			}
			for range d.u16() {
				s, v, h := d.u48(), d.u8(), int(d.u16())
				if cands[i] == nil {
					cands[i] = map[uint64]bucketCand{}
				}
				prev, ok := cands[i][s]
				cur := bucketCand{via: v & 3, hits: prev.hits + h, old: v&4 != 0 || prev.old}
				if ok {
					cur.via = min(cur.via, prev.via)
				}
				cands[i][s] = cur
			}
			for range d.u16() {
				op, n := int(d.u16()), int(d.u8())
				if op < len(p.anchorOf) && p.anchorOf[op] >= 0 {
					hot[i] = append(hot[i], p.anchorOf[op])
					held[i] = append(held[i], n)
				}
			}
		}
		if d.bad {
			return nil, fmt.Errorf("malformed buckets reply")
		}
	}
	return bh, nil
}

// rank returns each document's candidates in rank order; a recalled
// document's are its record's, in its order (with its lanes, counts and
// common anchors, set in out and bh).
func (bh *bucketHits) rank(out []Result, recs []*lookupRec) [][]Candidate {
	ranked := make([][]Candidate, len(out))
	for i := range out {
		if l := recs[i]; l != nil {
			ranked[i] = l.cands
			out[i].IMatchSeq, out[i].CopySeq = l.imatchSeq, l.copySeq
			out[i].Truncated, out[i].Common = l.truncated, l.common
			bh.hot[i], bh.held[i] = l.hotIdx, l.hotDocs
			continue
		}
		for s, c := range bh.cands[i] {
			ranked[i] = append(ranked[i], Candidate{Seq: s, Via: via(c.via), Hits: c.hits})
		}
		rankCandidates(ranked[i])
	}
	return ranked
}

// resolveRanked is phase 5: it resolves candidates in rank order, until
// MaxCandidates live ones per document, into out's Candidates; lane hits
// are resolved in the first round. ranked[i][:next[i]] were sent for
// resolution; names holds the ids resolved.
func (r *Redis) resolveRanked(ctx context.Context, out []Result, ranked [][]Candidate, bh *bucketHits, recs []*lookupRec, copyOld []bool, refresh bool) (next []int, names map[uint64]string, err error) {
	next = make([]int, len(out))
	lanes := map[uint64]bool{}
	for i := range out {
		if s := out[i].IMatchSeq; s != 0 {
			lanes[s] = lanes[s] || (bh.imatchOld[i] && refresh)
		}
		if s := out[i].CopySeq; s != 0 && copyOld[i] && refresh {
			lanes[s] = true
		}
		if s := out[i].CopySeq; s != 0 && recs[i] != nil {
			if _, ok := lanes[s]; !ok {
				lanes[s] = false // resolved, not refreshed
			}
		}
	}
	names = map[uint64]string{}
	for round := 0; ; round++ {
		want := map[uint64]bool{}
		if round == 0 {
			for s, refresh := range lanes {
				want[s] = refresh
			}
		}
		for i := range out {
			have := len(out[i].Candidates)
			for ; have < r.maxc && next[i] < len(ranked[i]); next[i]++ {
				c := ranked[i][next[i]]
				want[c.Seq] = want[c.Seq] || (bh.cands[i][c.Seq].old && refresh)
				have++
			}
		}
		if len(want) == 0 {
			break
		}
		if err := r.resolveCluster(ctx, want, names); err != nil {
			return nil, nil, err
		}
		short := false
		for i := range out {
			res := &out[i]
			res.Candidates = res.Candidates[:0]
			for _, c := range ranked[i][:next[i]] {
				if id, ok := names[c.Seq]; ok && len(res.Candidates) < r.maxc {
					c.ID = id
					res.Candidates = append(res.Candidates, c)
				}
			}
			short = short || (len(res.Candidates) < r.maxc && next[i] < len(ranked[i]))
		}
		if !short {
			break
		}
	}
	return next, names, nil
}

// copiesCluster runs the content lane of every document that has a
// content digest and no recorded verdict, resolves the documents it names
// and fills Copy and CopySeq. skip marks the exact copies of a live
// earlier representative: their buckets are not touched.
func (r *Redis) copiesCluster(ctx context.Context, docs []Entry, out []Result, recs []*lookupRec, check bool) (skip, old []bool, err error) {
	n := len(docs)
	skip, old = make([]bool, n), make([]bool, n)
	byShard := make([][]int, r.shards)
	for i := range docs {
		if docs[i].HasContent && !(out[i].Replay && out[i].Verdict != nil) && recs[i] == nil {
			sh := r.shardOfGroup(r.contentGroup(docs[i].Content[:]))
			byShard[sh] = append(byShard[sh], i)
		}
	}
	var calls []*call
	var owners [][]int
	for sh, list := range byShard {
		for lo := 0; lo < len(list); lo += r.batch {
			chunk := list[lo:min(lo+r.batch, len(list))]
			budget := sweepBudget
			if check {
				budget = 0
			}
			args := r.header(sh, budget)
			for _, i := range chunk {
				mode := 0
				switch {
				case check:
					mode = 1 // look up only
				case out[i].Replay:
					// A replay without a lookup record: its first attempt
					// may have stopped before this phase, so it registers
					// unless it is there already, as its buckets do.
					mode = 2
				}
				args = append(args, out[i].Seq, mode, docs[i].Content[:])
			}
			calls = append(calls, &call{s: r.scripts.copies, keys: []string{r.clock[sh]}, args: args})
			owners = append(owners, chunk)
		}
	}
	if len(calls) == 0 {
		return skip, old, nil
	}
	if err := r.run(ctx, calls); err != nil {
		return nil, nil, err
	}
	found, cur := make([]uint64, n), make([]uint64, n)
	want := map[uint64]bool{}
	for ci, c := range calls {
		reply, err := c.cmd.Text()
		if err != nil {
			return nil, nil, err
		}
		d := decoder{s: reply}
		for _, i := range owners[ci] {
			found[i], old[i], cur[i] = d.u48(), d.u8() == 1, d.u48()
			for _, s := range []uint64{found[i], cur[i]} {
				if s != 0 && s != out[i].Seq {
					want[s] = false
				}
			}
		}
		if d.bad {
			return nil, nil, fmt.Errorf("malformed copies reply")
		}
	}
	if len(want) == 0 {
		return skip, old, nil
	}
	names := map[uint64]string{}
	if err := r.resolveCluster(ctx, want, names); err != nil {
		return nil, nil, err
	}
	for i := range out {
		seq := out[i].Seq
		_, foundLive := names[found[i]]
		_, curLive := names[cur[i]]
		earlier := func(s uint64, live bool) bool { return live && s != 0 && s < seq }
		switch {
		case earlier(cur[i], curLive) && earlier(found[i], foundLive) && old[i]:
			out[i].CopySeq, skip[i] = found[i], true
		case earlier(cur[i], curLive):
			out[i].CopySeq, skip[i], old[i] = cur[i], true, false
		case earlier(found[i], foundLive):
			out[i].CopySeq = found[i]
		case foundLive && found[i] > seq:
			out[i].CopySeq = found[i] // a later copy that did not see this one
		case curLive && cur[i] > seq:
			out[i].CopySeq, old[i] = cur[i], false
		}
		if out[i].CopySeq != 0 {
			out[i].Copy = names[out[i].CopySeq]
		}
	}
	return skip, old, nil
}

// resolveCluster resolves seqs to external ids into names (deleted and
// expired documents are left out); seqs whose flag is set have their
// records carried into the current generation.
func (r *Redis) resolveCluster(ctx context.Context, seqs map[uint64]bool, names map[uint64]string) error {
	S := uint64(r.shards)
	bySeqShard := make([][]uint64, r.shards)
	for s := range seqs {
		sh := int(s % S)
		bySeqShard[sh] = append(bySeqShard[sh], s)
	}
	var calls []*call
	var lists [][]uint64
	for sh, list := range bySeqShard {
		for lo := 0; lo < len(list); lo += 4 * r.batch {
			chunk := list[lo:min(lo+4*r.batch, len(list))]
			args := r.header(sh, sweepBudget)
			for _, s := range chunk {
				f := "0"
				if seqs[s] {
					f = "1"
				}
				args = append(args, strconv.FormatUint(s, 10), f)
			}
			calls = append(calls, &call{s: r.scripts.resolve, keys: []string{r.clock[sh]}, args: args})
			lists = append(lists, chunk)
		}
	}
	return runDecode(ctx, r, calls, lists, "resolve", func(d *decoder, s uint64) error {
		if n := int32(d.u32()); n >= 0 {
			names[s] = d.take(int(n))
		}
		return nil
	})
}

// shardTags returns, for each of S shards, the hash tag whose Redis Cluster
// slot falls in the shard's 1/S of the slot space: "0", "1", … tried in
// order. With the even slot ranges that redis-cli --cluster create assigns,
// shards spread evenly over the masters. The tags are part of the layout.
func shardTags(S int) []string {
	tags := make([]string, S)
	if S == 1 {
		tags[0] = "0"
		return tags
	}
	found := 0
	for i := 0; found < S; i++ {
		tag := strconv.Itoa(i)
		slot := int(crc16(tag) % 16384)
		s := slot * S / 16384
		if tags[s] == "" {
			tags[s] = tag
			found++
		}
	}
	return tags
}

// crc16 is CRC-16/XMODEM, Redis Cluster's key hash.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
