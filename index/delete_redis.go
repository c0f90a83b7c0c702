package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// luaDelKeys is lua/del_keys.lua after the prelude.
var luaDelKeys = luaPrelude + luaFile("del_keys.lua")

// luaUnlink is lua/unlink.lua after the prelude.
var luaUnlink = luaPrelude + luaFile("unlink.lua")

// luaRevise is lua/revise.lua after the prelude.
var luaRevise = luaPrelude + luaFile("revise.lua")

// Delete implements [Store].
func (r *Redis) Delete(ctx context.Context, ids ...string) error {
	_, err := r.Remove(ctx, ids)
	return err
}

const (
	// unlinkScanMax is the COUNT of the HSCAN with which an unlink call
	// reads a group hash: a listpack (up to 128 fields of values up to 64
	// bytes at Redis's defaults) comes back whole, a hashtable about this
	// many fields at a time (a group of a generation that got far more
	// documents than it was sized for: groups hold about 64 buckets by
	// design), the rest walked in HSCAN chunks of about 256 fields,
	// unlinkScanKeys hashes per call.
	unlinkScanMax  = 256
	unlinkScanKeys = 4
	// unlinkWork bounds the work of one unlink call (luaUnlink): a bucket
	// read counts 1, a group read 4 plus its fields. Reading a group
	// costs about 1–2 µs of redis-server CPU per field (2026-11-26, on a
	// loaded 2-core machine calls of 4096 took about 7 ms of CPU each on
	// groups of ~30 fields), so a call stays within a few ms: 2048 is
	// about 30 groups of 64 fields, or 400 groups of a few. A call stops
	// before the group that would pass it and the rest goes in another
	// call.
	unlinkWork = 2048
	// unlinkGroupOps is the most group ops (gops, each an HSCAN per live
	// generation) given to one unlink call: several documents' bands and
	// passage groups (at the web profile 30 bands and ~48 distinct
	// passage groups). A document with more is cut into parts, its id
	// removed in a later round trip.
	unlinkGroupOps = 512
)

// Remove implements [Store]. It reads the documents' seqs and keys
// records (one round trip), then removes their bucket members and lane
// entries and, last, their ids and records: on a single node in the same
// script call as the members when a document's groups fit in one call
// (two round trips in all), in cluster mode per bucket shard and then per
// id shard (three). A call's work is bounded (unlinkWork): what a call
// leaves goes in the next round trip; a group hash that one HSCAN did not
// return whole is walked in HSCAN chunks, a round trip each; either way
// the document's id goes after. A failure half-way leaves the id, so the
// delete can be retried;
// a bucket member left behind by a concurrent lookup that carried it
// forward (RefreshOnMatch) names a deleted document and is dropped
// lazily, as members of expired documents are.
func (r *Redis) Remove(ctx context.Context, ids []string) ([]bool, error) {
	if err := r.writable("remove"); err != nil {
		return nil, err
	}
	return r.remove(ctx, ids, unlinkScanMax, unlinkWork)
}

// unlinkPart is one document's share of an unlink call.
type unlinkPart struct {
	doc  int // −1: no id in this part
	args []any
	cost int // the group ops, plus one
}

// remove is Remove, reading group hashes with HSCAN COUNT scanMax, in
// script calls of at most workMax work (luaUnlink): it reads the
// documents' seqs and keys records, cuts each document's members into
// parts per shard, removes the members, then the groups too large to read
// whole, then the ids left for later.
func (r *Redis) remove(ctx context.Context, ids []string, scanMax, workMax int) ([]bool, error) {
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	removed := make([]bool, len(ids))
	if len(ids) == 0 {
		return removed, nil
	}
	for _, id := range ids {
		if id == "" || len(id) > MaxIDLen {
			return nil, fmt.Errorf("%w: delete: bad id %.40q", ErrInvalid, id)
		}
	}
	seqs, keys, err := r.readDelKeys(ctx, ids)
	if err != nil {
		return nil, err
	}
	u := &unlinker{r: r, ctx: ctx, ids: ids, seqs: seqs, removed: removed, scanMax: scanMax, workMax: workMax,
		idParts: make([][]unlinkPart, r.shards)}
	buckets := make([][]unlinkPart, r.shards) // bucket and lane parts
	var sim []uint64
	for i, id := range ids {
		if seqs[i] == 0 {
			continue
		}
		ops := newDocOps(r)
		if keys[i] != nil {
			if sim, err = ops.addKeys(id, keys[i], sim); err != nil {
				return nil, err
			}
		}
		if ops.parts(i, id, seqs[i], buckets) {
			u.idLater(i)
		}
	}
	if err := u.run(buckets); err != nil {
		return nil, err
	}
	if err := r.unlinkScans(ctx, u.scans); err != nil {
		return nil, err
	}
	if err := u.run(u.idParts); err != nil {
		return nil, err
	}
	return removed, nil
}

// readDelKeys reads the documents' seqs (0: not stored) and keys records
// (luaDelKeys).
func (r *Redis) readDelKeys(ctx context.Context, ids []string) (seqs []uint64, keys [][]byte, err error) {
	calls, idx := r.byIDShard(ids, r.scripts.delKeys, func(args []any, i int) []any {
		return append(args, ids[i], r.idGroup(ids[i]))
	})
	if err := r.run(ctx, calls); err != nil {
		return nil, nil, r.wrap(ctx, "delete", err)
	}
	seqs, keys = make([]uint64, len(ids)), make([][]byte, len(ids))
	for ci, c := range calls {
		reply, err := c.cmd.Text()
		if err != nil {
			return nil, nil, r.wrap(ctx, "delete", err)
		}
		d := decoder{s: reply}
		for _, i := range idx[ci] {
			seqs[i], keys[i] = d.u48(), d.bytes()
			if len(keys[i]) > 0 && keys[i][0] == featKeys {
				// A features record that carries the keys record.
				feat, k, ok := unframeFeatures(keys[i])
				if ok {
					keys[i], ok = r.inlineDigests(k, feat)
				}
				if !ok {
					return nil, nil, fmt.Errorf("index: delete %q: features record cut short", ids[i])
				}
			}
		}
		if d.bad {
			return nil, nil, fmt.Errorf("index: delete: malformed script reply")
		}
	}
	return seqs, keys, nil
}

// docOps are one document's members to remove, per shard: bucket ops
// (records of version 3 and older, and the SimHash tables), group ops in
// chunks of at most unlinkGroupOps (version 4), its I-Match and content
// digests.
type docOps struct {
	r      *Redis
	ops    [][]byte
	gops   [][][]byte // per shard, chunks of at most unlinkGroupOps group ops
	ngops  []int
	im, ct [][]byte
}

func newDocOps(r *Redis) *docOps {
	return &docOps{r: r, ops: make([][]byte, r.shards), gops: make([][][]byte, r.shards), ngops: make([]int, r.shards),
		im: make([][]byte, r.shards), ct: make([][]byte, r.shards)}
}

// add adds the op of bucket (g, f) of table t.
func (o *docOps) add(t int, g, f uint64) {
	r := o.r
	sh := r.shardOfRoute(r.routeOf(t, g))
	o.ops[sh] = r.appendGroupField(binary.BigEndian.AppendUint16(o.ops[sh], uint16(t)), t, g, f)
}

// addGroup adds group g of table t, whose buckets are all read.
func (o *docOps) addGroup(t int, g uint64) {
	r := o.r
	sh := r.shardOfRoute(r.routeOf(t, g))
	if o.ngops[sh]%unlinkGroupOps == 0 {
		o.gops[sh] = append(o.gops[sh], nil)
	}
	o.ngops[sh]++
	c := &o.gops[sh][len(o.gops[sh])-1]
	*c = r.appendGroupField(binary.BigEndian.AppendUint16(*c, uint16(t)), t, g, 0)
	*c = (*c)[:len(*c)-fieldBytes] // the group's digits, without a field
}

// addKeys adds what the document's keys record names; sim is scratch for
// the SimHash block keys, returned for reuse.
func (o *docOps) addKeys(id string, rec []byte, sim []uint64) ([]uint64, error) {
	r := o.r
	k, err := r.decodeKeyOps(id, rec)
	if err != nil {
		return sim, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	e := &k.e
	if k.groups {
		for t, g := range k.bands {
			o.addGroup(t, g)
		}
	} else {
		// A record of version 2 or 3 (layout 6 and older) keeps fields in
		// the old form: its buckets are found by their groups.
		for t, v := range k.bands {
			g, _ := r.opOf(t, v)
			o.addGroup(t, g)
		}
	}
	if e.HasSimHash {
		sim = simBlockKeys(sim[:0], e.SimHash, r.p.SimHashK)
		for j, key := range sim {
			g, f := r.bucketOp(r.p.Bands+j, key)
			o.add(r.p.Bands+j, g, f)
		}
	}
	for _, v := range k.anchors {
		if k.groups {
			o.addGroup(r.p.passageTable(), v)
		} else {
			g, _ := r.opOf(r.p.passageTable(), v)
			o.addGroup(r.p.passageTable(), g)
		}
	}
	if e.HasIMatch {
		o.im[r.shardOfGroup(r.digestGroup(e.IMatch[:]))] = e.IMatch[:]
	}
	if e.HasContent {
		o.ct[r.shardOfGroup(r.contentGroup(e.Content[:]))] = e.Content[:]
	}
	return sim, nil
}

// parts appends document i's unlink parts to buckets, per shard, and
// reports whether its id goes in a later round trip: always in a cluster;
// on a single node the id goes with the document's members when they fit
// in one part.
func (o *docOps) parts(i int, id string, seq uint64, buckets [][]unlinkPart) (idLater bool) {
	r := o.r
	ish := r.shardOfGroup(r.idGroup(id))
	idLater = r.cluster
	for sh := range r.shards {
		single := !r.cluster && sh == ish
		if len(o.ops[sh]) == 0 && o.im[sh] == nil && o.ct[sh] == nil && len(o.gops[sh]) == 0 && !single {
			continue
		}
		chunks := o.gops[sh]
		if len(chunks) == 0 {
			chunks = [][]byte{nil}
		}
		withID := single && len(chunks) == 1
		if single && !withID {
			idLater = true
		}
		for c, g := range chunks {
			n := min(unlinkGroupOps, o.ngops[sh]-c*unlinkGroupOps)
			p := unlinkPart{doc: -1, args: []any{seq, "", 0, "", g, "", ""}, cost: 1 + max(n, 0)}
			if c == 0 {
				p.args[3], p.args[5], p.args[6] = o.ops[sh], o.im[sh], o.ct[sh]
			}
			if withID {
				p.doc, p.args[1], p.args[2] = i, id, r.idGroup(id)
			}
			buckets[sh] = append(buckets[sh], p)
		}
	}
	return idLater
}

// unlinker runs a remove's unlink parts: it marks the documents removed,
// queues the ids left for later (idParts) and the groups too large to
// read whole (scans).
type unlinker struct {
	r                *Redis
	ctx              context.Context
	ids              []string
	seqs             []uint64
	removed          []bool
	scanMax, workMax int
	idParts          [][]unlinkPart
	scans            [][]unlinkScan
}

// idLater queues document i's id for the last round.
func (u *unlinker) idLater(i int) {
	r := u.r
	ish := r.shardOfGroup(r.idGroup(u.ids[i]))
	u.idParts[ish] = append(u.idParts[ish], unlinkPart{doc: i, args: []any{u.seqs[i], u.ids[i], r.idGroup(u.ids[i]), "", "", "", ""}, cost: 1})
}

// run runs the parts until every one is done: a part a call stopped (its
// work bound) or did not start goes again, from where it stopped.
func (u *unlinker) run(pending [][]unlinkPart) error {
	r := u.r
	for {
		calls, owners, shards := r.unlinkCalls(u.scanMax, u.workMax, pending)
		if len(calls) == 0 {
			return nil
		}
		if err := r.runBounded(u.ctx, calls); err != nil {
			return err
		}
		pending = make([][]unlinkPart, r.shards)
		for ci, c := range calls {
			reply, err := c.cmd.Text()
			if err != nil || len(reply) < len(owners[ci]) {
				return r.wrap(u.ctx, "delete", errors.Join(err, errors.New("malformed script reply")))
			}
			if err := u.reply(reply, shards[ci], owners[ci], pending); err != nil {
				return err
			}
		}
	}
}

// reply reads one unlink call's reply (luaUnlink, mode 'u') for its parts
// own in shard sh: a byte per part, then the groups to scan ('s') and the
// parts stopped before a group ('r'), which go to pending again.
func (u *unlinker) reply(reply string, sh int, own []unlinkPart, pending [][]unlinkPart) error {
	r := u.r
	malformed := fmt.Errorf("index: delete: malformed script reply")
	for k, p := range own {
		switch {
		case p.doc >= 0 && reply[k] == '1':
			u.removed[p.doc] = true
		case p.doc >= 0 && (reply[k] == 'd' || reply[k] == 'r'):
			u.idLater(p.doc)
		}
		if reply[k] == 'n' {
			pending[sh] = append(pending[sh], p)
		}
	}
	d := decoder{s: reply, p: len(own)}
	for d.p < len(d.s) && !d.bad {
		switch d.u8() {
		case 's':
			k, key, cursor := int(d.u16()), d.str(), d.str()
			if d.bad || k >= len(own) || key == "" || cursor == "" || cursor == "0" {
				return malformed
			}
			if u.scans == nil {
				u.scans = make([][]unlinkScan, r.shards)
			}
			u.scans[sh] = append(u.scans[sh], unlinkScan{key: key, cursor: cursor, seq: own[k].args[0].(uint64)})
		case 'r':
			k, off := int(d.u16()), int(d.u32())
			if d.bad || k >= len(own) || reply[k] != 'r' {
				return malformed
			}
			p := own[k]
			g, _ := p.args[4].([]byte)
			if off < 1 || off > len(g) {
				return malformed
			}
			rest := g[off-1:]
			pending[sh] = append(pending[sh], unlinkPart{doc: -1, args: []any{p.args[0], "", 0, "", rest, p.args[5], p.args[6]},
				cost: 1 + len(rest)/(2+maxGroupBits)})
		default:
			return malformed
		}
	}
	if d.bad {
		return malformed
	}
	return nil
}

// unlinkCalls cuts the parts of each shard into unlink calls (mode 'u')
// of at most r.batch parts and unlinkGroupOps group ops each (a part of
// more has a call of its own); shards[c] is the shard of calls[c] and
// owners[c] its parts.
func (r *Redis) unlinkCalls(scanMax, workMax int, perShard [][]unlinkPart) (calls []*call, owners [][]unlinkPart, shards []int) {
	for sh, parts := range perShard {
		for lo := 0; lo < len(parts); {
			hi, cost := lo, 0
			for hi < len(parts) && hi-lo < r.batch && (hi == lo || cost+parts[hi].cost <= unlinkGroupOps+1) {
				cost += parts[hi].cost
				hi++
			}
			args := append(r.header(sh, sweepBudget), "u", scanMax, workMax)
			for _, p := range parts[lo:hi] {
				args = append(args, p.args...)
			}
			calls = append(calls, &call{s: r.scripts.unlink, keys: []string{r.clock[sh]}, args: args})
			owners = append(owners, parts[lo:hi])
			shards = append(shards, sh)
			lo = hi
		}
	}
	return calls, owners, shards
}

// unlinkCallsPerTrip is the most unlink calls in one round trip: a call
// reads up to unlinkGroupOps group hashes per live generation, so a round
// trip of a large delete is cut, to stay well within the client's read
// timeout.
const unlinkCallsPerTrip = 16

// runBounded runs calls, at most unlinkCallsPerTrip per round trip.
func (r *Redis) runBounded(ctx context.Context, calls []*call) error {
	for lo := 0; lo < len(calls); lo += unlinkCallsPerTrip {
		if err := r.run(ctx, calls[lo:min(lo+unlinkCallsPerTrip, len(calls))]); err != nil {
			return r.wrap(ctx, "delete", err)
		}
	}
	return nil
}

// unlinkScan is a group hash that an unlink call did not read whole:
// the document seq's members go from the rest of it in HSCAN chunks from
// cursor.
type unlinkScan struct {
	key, cursor string
	seq         uint64
}

// unlinkScans walks the group hashes of scans[shard] in HSCAN chunks
// (mode 's', unlinkScanKeys hashes per call, the shards' calls in one
// round trip) until every walk is done.
func (r *Redis) unlinkScans(ctx context.Context, scans [][]unlinkScan) error {
	for {
		var calls []*call
		var owners [][]*unlinkScan
		for sh, ss := range scans {
			for lo := 0; lo < len(ss); lo += unlinkScanKeys {
				args := append(r.header(sh, 0), "s")
				var own []*unlinkScan
				for i := lo; i < min(lo+unlinkScanKeys, len(ss)); i++ {
					args = append(args, ss[i].key, ss[i].cursor, ss[i].seq)
					own = append(own, &ss[i])
				}
				calls = append(calls, &call{s: r.scripts.unlink, keys: []string{r.clock[sh]}, args: args})
				owners = append(owners, own)
			}
		}
		if len(calls) == 0 {
			return nil
		}
		if err := r.runBounded(ctx, calls); err != nil {
			return err
		}
		for ci, c := range calls {
			reply, err := c.cmd.Text()
			if err != nil {
				return r.wrap(ctx, "delete", err)
			}
			d := decoder{s: reply}
			for _, s := range owners[ci] {
				s.cursor = d.str()
			}
			if d.bad || d.p != len(d.s) {
				return fmt.Errorf("index: delete: malformed script reply")
			}
		}
		for sh, ss := range scans {
			scans[sh] = slices.DeleteFunc(ss, func(s unlinkScan) bool { return s.cursor == "0" })
		}
	}
}

// ReviseVerdicts implements [Store]: one script call per record shard of
// the documents (one on a single node), in one round trip.
func (r *Redis) ReviseVerdicts(ctx context.Context, seqs []uint64, old, verdicts [][]byte) ([]bool, error) {
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	if err := r.writable("revise verdicts"); err != nil {
		return nil, err
	}
	if len(seqs) != len(verdicts) || len(seqs) != len(old) {
		return nil, fmt.Errorf("%w: %d seqs, %d old, %d verdicts", ErrInvalid, len(seqs), len(old), len(verdicts))
	}
	revised := make([]bool, len(seqs))
	if len(seqs) == 0 {
		return revised, nil
	}
	calls, idx := r.bySeqShard(seqs, r.scripts.revise, func(args []any, i int) []any {
		has := "1"
		if old[i] == nil {
			has = "0"
		}
		return append(args, strconv.FormatUint(seqs[i], 10), has, old[i], verdicts[i])
	})
	if err := r.run(ctx, calls); err != nil {
		return nil, r.wrap(ctx, "revise verdicts", err)
	}
	for ci, c := range calls {
		reply, err := c.cmd.Text()
		if err != nil || len(reply) != len(idx[ci]) {
			return nil, r.wrap(ctx, "revise verdicts", errors.Join(err, errors.New("malformed script reply")))
		}
		for k, i := range idx[ci] {
			revised[i] = reply[k] == '1'
		}
	}
	return revised, nil
}
