package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
)

// luaDelKeys reads what a delete needs: ARGV[7…] = (id idg)×n. Reply per
// id: seq u48 (0: not stored) · its keys record (i32 length, −1 = none:
// a document written before keys records were kept).
const luaDelKeys = luaPrelude + `
local out = {}
for a = 7, #ARGV, 2 do
  local s = idSeq(ARGV[a], ARGV[a + 1])
  local kr = false
  if s then
    local k, f = rkey('k', s)
    kr = redis.call('HGET', k, f)
  end
  out[#out + 1] = struct.pack('>I6', s or 0) .. lenstr(kr)
end
return table.concat(out)
`

// luaUnlink removes documents' keys: ARGV[7…], per document:
//
//	seq id idg ops imatch content
//
// ops are as in luaBuckets (table u16, then the op); imatch
// and content the digests or "". In every live generation the document's
// member goes from each bucket (a hash field left empty is deleted, a
// group left empty goes with it), a common key whose exemplar it is keeps
// its mark and count with the exemplar NOEX, and the I-Match and content
// lane entries that name it go. With an id (not ""), the id mappings that
// name seq and the document's records go too. Reply: per document one
// byte, '1' when the id named a stored document, '0' when not, '-' when
// no id was given.
const luaUnlink = luaPrelude + `
local out = {}
local function lane(k, f, s)
  if tonumber(redis.call('HGET', k, f)) == s then redis.call('HDEL', k, f) end
end
local a = 7
while a <= #ARGV do
  local s, id, ig, ops, im, ct = tonumber(ARGV[a]), ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5]
  a = a + 6
  local me = struct.pack('>I6', s)
  local p = 1
  while p < #ops do
    local t = struct.unpack('>I2', ops, p)
    local w = (t >= B and t < PT) and 14 or 6
    local gw = GB
    if t == PT then gw = GB + 1 end
    local op, f = p + 2, sub(ops, p + 2 + gw, p + 5 + gw)
    p = p + 6 + gw
    for _, h in ipairs(DESC) do
      local k = tkey(h, t, ops, op)
      local val = redis.call('HGET', k, f)
      if val then
        if iscommon(val, w) then
          if sub(val, 2, 7) == me then redis.call('HSET', k, f, 'C' .. NOEX .. sub(val, 8, 8)) end
        else
          local parts, drop = {}, false
          for q = 1, #val, w do
            if sub(val, q, q + 5) == me then drop = true
            else parts[#parts + 1] = sub(val, q, q + w - 1) end
          end
          if drop then
            if #parts == 0 then redis.call('HDEL', k, f)
            else redis.call('HSET', k, f, table.concat(parts)) end
          end
        end
      end
    end
  end
  if #im > 0 then
    local g, f = struct.unpack('>I4', im, 17), sub(im, 1, 16)
    for _, h in ipairs(DESC) do lane(xkey(h, g), f, s) end
  end
  if #ct > 0 then
    local g, f = struct.unpack('>I4', ct, 13), sub(ct, 1, 12)
    for _, h in ipairs(DESC) do lane(ckey(h, g), f, s) end
  end
  local r = '-'
  if #id > 0 then
    r = '0'
    if resolve(s) == id then r = '1' end
    for _, h in ipairs(DESC) do lane(ikey(h, ig), id, s) end
    for _, kind in ipairs({'m', 'f', 'v', 'k', 's'}) do
      local k, f = rkey(kind, s)
      redis.call('HDEL', k, f)
    end
    RCACHE[s] = false -- the same id twice in one call: removed once
  end
  out[#out + 1] = r
end
return table.concat(out)
`

// luaRevise replaces verdicts, compare-and-set: ARGV[7…] = (id idg has
// old new)×n; has is "1" when old is the verdict expected, "0" when none
// is expected. Reply: per id one byte, '1' when replaced.
const luaRevise = luaPrelude + `
local out = {}
for a = 7, #ARGV, 5 do
  local s = idSeq(ARGV[a], ARGV[a + 1])
  local r = '0'
  if s then
    local k, f = rkey('v', s)
    local cur = redis.call('HGET', k, f)
    if (ARGV[a + 2] == '0' and not cur) or (ARGV[a + 2] == '1' and cur == ARGV[a + 3]) then
      redis.call('HSET', k, f, ARGV[a + 4])
      if R > 0 then
        local exp = redis.call('EXPIRETIME', (rkey('m', s)))
        if exp > 0 then redis.call('EXPIREAT', k, exp, 'GT') end
      end
      r = '1'
    end
  end
  out[#out + 1] = r
end
return table.concat(out)
`

// Delete implements [Store].
func (r *Redis) Delete(ctx context.Context, ids ...string) error {
	_, err := r.Remove(ctx, ids)
	return err
}

// Remove implements [Store]. It reads the documents' seqs and keys
// records (one round trip), then removes their bucket members and lane
// entries and, last, their ids and records: on a single node in one
// script call (two round trips in all), in cluster mode per bucket shard
// and then per id shard (three). A failure half-way leaves the id, so
// the delete can be retried; a bucket member left behind by a concurrent
// lookup that carried it forward (RefreshOnMatch) names a deleted
// document and is dropped lazily, as members of expired documents are.
func (r *Redis) Remove(ctx context.Context, ids []string) ([]bool, error) {
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
	calls, idx := r.byIDShard(ids, r.scripts.delKeys, func(args []any, i int) []any {
		return append(args, ids[i], r.idGroup(ids[i]))
	})
	if err := r.run(ctx, calls); err != nil {
		return nil, r.wrap(ctx, "delete", err)
	}
	seqs, keys := make([]uint64, len(ids)), make([][]byte, len(ids))
	for ci, c := range calls {
		reply, err := c.cmd.Text()
		if err != nil {
			return nil, r.wrap(ctx, "delete", err)
		}
		d := decoder{s: reply}
		for _, i := range idx[ci] {
			seqs[i], keys[i] = d.u48(), d.bytes()
		}
		if d.bad {
			return nil, fmt.Errorf("index: delete: malformed script reply")
		}
	}

	type part struct {
		doc  int // −1: no id in this part
		args []any
	}
	buckets := make([][]part, r.shards) // cluster: bucket and lane parts
	idParts := make([][]part, r.shards)
	var sim []uint64
	for i, id := range ids {
		if seqs[i] == 0 {
			continue
		}
		ops := make([][]byte, r.shards)
		var im, ct [][]byte
		im, ct = make([][]byte, r.shards), make([][]byte, r.shards)
		if keys[i] != nil {
			k, err := r.decodeKeyOps(id, keys[i])
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
			}
			e := &k.e
			add := func(t int, g uint64, f uint32) {
				sh := r.shardOfRoute(r.routeOf(t, g))
				ops[sh] = r.appendGroupField(binary.BigEndian.AppendUint16(ops[sh], uint16(t)), t, g, f)
			}
			for t, v := range k.bands {
				g, f := r.opOf(t, v)
				add(t, g, f)
			}
			if e.HasSimHash {
				sim = simBlockKeys(sim[:0], e.SimHash, r.p.SimHashK)
				for j, key := range sim {
					g, f := r.bucketOp(r.p.Bands+j, key)
					add(r.p.Bands+j, g, f)
				}
			}
			for _, v := range k.anchors {
				g, f := r.opOf(r.p.passageTable(), v)
				add(r.p.passageTable(), g, f)
			}
			if e.HasIMatch {
				im[r.shardOfGroup(r.digestGroup(e.IMatch[:]))] = e.IMatch[:]
			}
			if e.HasContent {
				ct[r.shardOfGroup(r.contentGroup(e.Content[:]))] = e.Content[:]
			}
		}
		ish := r.shardOfGroup(r.idGroup(id))
		for sh := range r.shards {
			single := !r.cluster && sh == ish
			if len(ops[sh]) == 0 && im[sh] == nil && ct[sh] == nil && !single {
				continue
			}
			p := part{doc: -1, args: []any{seqs[i], "", 0, ops[sh], im[sh], ct[sh]}}
			if single {
				p = part{doc: i, args: []any{seqs[i], id, r.idGroup(id), ops[sh], im[sh], ct[sh]}}
			}
			buckets[sh] = append(buckets[sh], p)
		}
		if r.cluster {
			idParts[ish] = append(idParts[ish], part{doc: i, args: []any{seqs[i], id, r.idGroup(id), "", "", ""}})
		}
	}
	for _, phase := range [][][]part{buckets, idParts} {
		calls, owners := shardCalls(r, r.scripts.unlink, sweepBudget, phase, func(args []any, p part) []any {
			return append(args, p.args...)
		})
		if len(calls) == 0 {
			continue
		}
		if err := r.run(ctx, calls); err != nil {
			return nil, r.wrap(ctx, "delete", err)
		}
		for ci, c := range calls {
			reply, err := c.cmd.Text()
			if err != nil || len(reply) != len(owners[ci]) {
				return nil, r.wrap(ctx, "delete", errors.Join(err, errors.New("malformed script reply")))
			}
			for k, p := range owners[ci] {
				if p.doc >= 0 && reply[k] == '1' {
					removed[p.doc] = true
				}
			}
		}
	}
	return removed, nil
}

// ReviseVerdicts implements [Store]: one script call per shard of the ids
// (one on a single node), in one round trip.
func (r *Redis) ReviseVerdicts(ctx context.Context, ids []string, old, verdicts [][]byte) ([]bool, error) {
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	if len(ids) != len(verdicts) || len(ids) != len(old) {
		return nil, fmt.Errorf("%w: %d ids, %d old, %d verdicts", ErrInvalid, len(ids), len(old), len(verdicts))
	}
	revised := make([]bool, len(ids))
	if len(ids) == 0 {
		return revised, nil
	}
	calls, idx := r.byIDShard(ids, r.scripts.revise, func(args []any, i int) []any {
		has := "1"
		if old[i] == nil {
			has = "0"
		}
		return append(args, ids[i], r.idGroup(ids[i]), has, old[i], verdicts[i])
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
