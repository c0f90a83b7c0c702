package index

import (
	"context"
	"fmt"
	"strconv"
)

// lookupInsertCluster runs LookupInsert over shards that live on
// different masters, in four round trips:
//
//  1. HINCRBY reserves one sequence number per document on shard 0;
//     document i gets seq (c+i)·S + shard(id), so the record shard is
//     seq mod S.
//  2. register, per id shard: id → seq unless the id is stored (replay),
//     records written. A document's records exist before any of its
//     bucket entries, so whoever finds the entry can resolve it.
//  3. buckets, per bucket shard: every bucket lookup-and-insert of the
//     shard, each one atomic; the exact lane likewise.
//  4. resolve, per record shard: seqs → external ids; deleted and
//     expired documents drop out.
//
// Two near-duplicates share a bucket, and the two operations on that
// bucket are serialized by its master, so the second sees the first. The
// earlier document (lower seq) may be the one that sees the later: it then
// has a higher-Seq candidate, and the ordering rule of the package
// documentation applies.
func (r *Redis) lookupInsertCluster(ctx context.Context, docs []Entry) ([]Result, error) {
	n := len(docs)
	last, err := r.c.HIncrBy(ctx, r.clock[0], "q", int64(n)).Result()
	if err != nil {
		return nil, err
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
			c.args = append(c.args, e.ID, uint64(fnv32(e.ID)), seq, e.Features)
		}
	}
	if err := r.run(ctx, calls); err != nil {
		return nil, err
	}
	out := make([]Result, n)
	for ci, c := range calls {
		reply, err := c.cmd.Text()
		if err != nil {
			return nil, err
		}
		d := decoder{s: reply}
		for _, i := range idx[ci] {
			out[i].Replay = d.u8() == 1
			out[i].Seq = d.u48()
			out[i].Verdict = d.bytes()
		}
		if d.bad {
			return nil, fmt.Errorf("malformed register reply")
		}
	}

	// 3. buckets: one argument list per shard, one entry per document.
	type part struct {
		doc  int
		args []any
	}
	perShard := make([][]part, r.shards)
	var sim []uint64
	for i := range docs {
		e, res := &docs[i], &out[i]
		if res.Replay && res.Verdict != nil {
			continue
		}
		mode := 0
		if res.Replay {
			mode = 2 // a replay whose first attempt may have stopped half-way
		}
		ops := make([][]any, r.shards)
		add := func(t int, key uint64) {
			v := r.bucketValue(key)
			sh := r.shardOfGroup(v % r.gn)
			ops[sh] = append(ops[sh], t, v)
		}
		for t, k := range e.Bands {
			add(t, k)
		}
		if e.HasSimHash {
			sim = simBlockKeys(sim[:0], e.SimHash, r.p.SimHashK)
			for j, k := range sim {
				add(r.p.Bands+j, k)
			}
		}
		dsh := -1
		if e.HasIMatch {
			dsh = r.shardOfGroup(r.digestGroup(e.IMatch[:]))
		}
		for sh, o := range ops {
			if len(o) == 0 && sh != dsh {
				continue
			}
			a := []any{res.Seq, mode, e.SimHash >> 32, e.SimHash & 0xffffffff, len(o) / 2}
			a = append(a, o...)
			if sh == dsh {
				a = append(a, e.IMatch[:])
			} else {
				a = append(a, "")
			}
			perShard[sh] = append(perShard[sh], part{i, a})
		}
	}
	calls = calls[:0]
	var owners [][]int
	for sh, parts := range perShard {
		for lo := 0; lo < len(parts); lo += r.batch {
			chunk := parts[lo:min(lo+r.batch, len(parts))]
			args := r.header(sh, sweepBudget)
			var own []int
			for _, p := range chunk {
				args = append(args, p.args...)
				own = append(own, p.doc)
			}
			calls = append(calls, &call{s: r.scripts.buckets, keys: []string{r.clock[sh]}, args: args})
			owners = append(owners, own)
		}
	}
	if err := r.run(ctx, calls); err != nil {
		return nil, err
	}
	type cand struct {
		via byte
		old bool
	}
	cands := make([]map[uint64]cand, n)
	exactOld := make([]bool, n)
	for ci, c := range calls {
		reply, err := c.cmd.Text()
		if err != nil {
			return nil, err
		}
		d := decoder{s: reply}
		for _, i := range owners[ci] {
			out[i].Truncated += int(d.u32())
			r.stats.hot.Add(uint64(d.u16()))
			if ex, old := d.u48(), d.u8(); ex != 0 {
				out[i].ExactSeq, exactOld[i] = ex, old == 1
			}
			for range d.u16() {
				s, v := d.u48(), d.u8()
				if cands[i] == nil {
					cands[i] = map[uint64]cand{}
				}
				prev, ok := cands[i][s]
				cur := cand{via: v & 3, old: v&4 != 0 || prev.old}
				if ok && prev.via == 1 {
					cur.via = 1
				}
				cands[i][s] = cur
			}
		}
		if d.bad {
			return nil, fmt.Errorf("malformed buckets reply")
		}
	}

	// 4. resolve.
	refresh := map[uint64]bool{}
	for i := range out {
		for s, c := range cands[i] {
			refresh[s] = refresh[s] || (c.old && r.refresh)
		}
		if s := out[i].ExactSeq; s != 0 {
			refresh[s] = refresh[s] || (exactOld[i] && r.refresh)
		}
	}
	names := map[uint64]string{}
	if len(refresh) > 0 {
		bySeqShard := make([][]uint64, r.shards)
		for s := range refresh {
			sh := int(s % S)
			bySeqShard[sh] = append(bySeqShard[sh], s)
		}
		calls = calls[:0]
		var seqs [][]uint64
		for sh, list := range bySeqShard {
			for lo := 0; lo < len(list); lo += 4 * r.batch {
				chunk := list[lo:min(lo+4*r.batch, len(list))]
				args := r.header(sh, sweepBudget)
				for _, s := range chunk {
					f := "0"
					if refresh[s] {
						f = "1"
					}
					args = append(args, strconv.FormatUint(s, 10), f)
				}
				calls = append(calls, &call{s: r.scripts.resolve, keys: []string{r.clock[sh]}, args: args})
				seqs = append(seqs, chunk)
			}
		}
		if err := r.run(ctx, calls); err != nil {
			return nil, err
		}
		for ci, c := range calls {
			reply, err := c.cmd.Text()
			if err != nil {
				return nil, err
			}
			d := decoder{s: reply}
			for _, s := range seqs[ci] {
				if n := int32(d.u32()); n >= 0 {
					names[s] = d.take(int(n))
				}
			}
			if d.bad {
				return nil, fmt.Errorf("malformed resolve reply")
			}
		}
	}
	for i := range out {
		res := &out[i]
		for s, c := range cands[i] {
			if id, ok := names[s]; ok {
				res.Candidates = append(res.Candidates, Candidate{ID: id, Seq: s, Via: via(c.via)})
			}
		}
		sortCandidates(res.Candidates)
		if s := res.ExactSeq; s != 0 {
			if id, ok := names[s]; ok {
				res.Exact = id
			} else {
				res.ExactSeq = 0
			}
		}
	}
	return out, nil
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
