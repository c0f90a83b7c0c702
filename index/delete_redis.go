package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
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

// luaUnlink removes documents' keys. ARGV[7] is the mode.
//
// Mode 'u' (unlink): ARGV[8] is scanmax, ARGV[9] workmax, then per
// document, ARGV[10…]:
//
//	seq id idg ops gops imatch content
//
// ops are as in luaBuckets (table u16, then the op: group digits and
// field), for the SimHash tables and records of version 3 and older;
// gops are groups of the band and passage tables (table u16, then the
// group digits, without a field: records of version 4); imatch and
// content the digests or "". In every live generation the document's
// member goes from each bucket of ops, and from every bucket of each
// group of gops (the group hash is read whole, one HSCAN from cursor 0
// with COUNT scanmax: a listpack, which a group of about 64 buckets is,
// comes back whole; the seq names one document, so exactly its own
// members go, several anchors in one group included); a hash field left
// empty is deleted, a group left empty goes with it; a common key whose
// exemplar it is keeps its mark and count with the exemplar NOEX; and
// the I-Match and content lane entries that name it go. A group that
// HSCAN did not return whole (more than about scanmax fields: a
// generation sized for far fewer documents than it got) is returned with
// its cursor, and the caller walks the rest in chunks (mode 's'). With an
// id (not ""), the id mappings that name seq and the document's records
// go too, unless a group of the document was returned. The call's work
// is bounded: each bucket read counts 1, each group read 4 plus its
// fields; once it reaches workmax, the call reads no more groups: the
// document at hand stops before its next group (its lanes and id left
// for a later call) and the documents after it are not started. Reply:
// per document one byte, '1' when the id named a stored document, '0'
// when not, '-' when no id was given, 'd' when a group was returned and
// the id left for later, 'r' when it stopped before a group, 'n' when it
// was not started; then per group returned 's', the document's position
// in the call (u16), the key and the cursor (each an i32 length, then
// the bytes), and per document stopped 'r', its position (u16) and the
// offset in its gops of the group it stopped before (u32, from 1).
//
// Mode 's' (scan): ARGV[8…] = (key cursor seq)×n: one HSCAN step
// (COUNT 256) of each group hash from cursor, removing the document's
// members from what it returns as mode 'u' does. Reply: per key the
// next cursor (i32 length, then the cursor; "0" at the end).
const luaUnlink = luaPrelude + `
local out, later = {}, {}
local find = string.find
local function lane(k, f, s)
  if tonumber(redis.call('HGET', k, f)) == s then redis.call('HDEL', k, f) end
end
-- laneRep takes seq s out of content lane entry f of hash k: the recent
-- copies (field f+, copyOp) drop it and the copies gone; when s is the
-- representative, the newest copy left takes its place, so later copies
-- of a text still stored find it. In cluster mode (S > 1) the copies'
-- records live in other shards: the list keeps them (a copy removed
-- leaves the list itself, by its own keys record), and a copy that
-- expired meanwhile is a representative readers find dead.
local function laneRep(k, f, s)
  local v = redis.call('HMGET', k, f, f .. '+')
  local list, keep = v[2] or '', {}
  for p = 1, #list - 5, 6 do
    local c = struct.unpack('>I6', list, p)
    if c ~= s and (S > 1 or resolve(c)) then keep[#keep + 1] = sub(list, p, p + 5) end
  end
  if tonumber(v[1]) == s then
    local nx = table.remove(keep)
    if nx then redis.call('HSET', k, f, itos(struct.unpack('>I6', nx)))
    else redis.call('HDEL', k, f) end
  end
  local nl = table.concat(keep)
  if nl ~= list then
    if #nl == 0 then redis.call('HDEL', k, f .. '+') else redis.call('HSET', k, f .. '+', nl) end
  end
end
-- drop removes member me from field f, of value val, of the band or
-- passage group k, where find found it at q: the 6-byte entries equal to
-- it, or the exemplar of a common mark.
local function drop(k, f, val, me, q)
  if iscommon(val, 6) then
    if sub(val, 2, 7) == me then redis.call('HSET', k, f, 'C' .. NOEX .. sub(val, 8, 8)) end
    return
  end
  local cut = false
  while q do
    if (q - 1) % 6 == 0 then
      val, cut = sub(val, 1, q - 1) .. sub(val, q + 6), true
    else
      q = q + 1
    end
    q = find(val, me, q, true)
  end
  if cut then
    if #val == 0 then redis.call('HDEL', k, f) else redis.call('HSET', k, f, val) end
  end
end
-- dropAll applies drop to the fields and values fv (HGETALL, HSCAN) of
-- group k that hold me; the guard's o-fields (5 bytes) are left. Most
-- values do not hold me: a plain find each.
local function dropAll(k, fv, me)
  for i = 2, #fv, 2 do
    local q = find(fv[i], me, 1, true)
    if q and #fv[i - 1] == 4 then drop(k, fv[i - 1], fv[i], me, q) end
  end
end
if ARGV[7] == 's' then
  for a = 8, #ARGV, 3 do
    local k, me = ARGV[a], struct.pack('>I6', tonumber(ARGV[a + 2]))
    local r = redis.call('HSCAN', k, ARGV[a + 1], 'COUNT', 256)
    dropAll(k, r[2], me)
    out[#out + 1] = lenstr(r[1])
  end
  return table.concat(out)
end
if ARGV[7] ~= 'u' then return redis.error_reply('ERR unlink: unknown mode') end
local SCANMAX, WORKMAX = tonumber(ARGV[8]), tonumber(ARGV[9])
local WORK = 0
local a, doc = 10, 0
while a <= #ARGV do
  local s, id, ig, ops, gops, im, ct = tonumber(ARGV[a]), ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6]
  a = a + 7
  if WORK >= WORKMAX then
    out[#out + 1] = 'n'
  else
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
        WORK = WORK + 1
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
    local deferred, stop = false, false
    p = 1
    while p < #gops do
      if WORK >= WORKMAX then stop = true; break end
      local t = struct.unpack('>I2', gops, p)
      if t >= B and t < PT then return redis.error_reply('ERR unlink: a SimHash table by group') end
      local op = p + 2
      p = op + GB
      if t == PT then p = p + 1 end
      for _, h in ipairs(DESC) do
        local k = tkey(h, t, gops, op)
        local r = redis.call('HSCAN', k, 0, 'COUNT', SCANMAX)
        WORK = WORK + 4 + #r[2] / 2
        dropAll(k, r[2], me)
        if r[1] ~= '0' then
          later[#later + 1] = 's' .. struct.pack('>I2', doc) .. lenstr(k) .. lenstr(r[1])
          deferred = true
        end
      end
    end
    if stop then
      later[#later + 1] = 'r' .. struct.pack('>I2I4', doc, p)
      out[#out + 1] = 'r'
    else
      if #im > 0 then
        local g, f = struct.unpack('>I4', im, 17), sub(im, 1, 16)
        for _, h in ipairs(DESC) do lane(xkey(h, g), f, s) end
      end
      if #ct > 0 then
        local g, f = struct.unpack('>I4', ct, 13), sub(ct, 1, 12)
        for _, h in ipairs(DESC) do laneRep(ckey(h, g), f, s) end
      end
      local r = '-'
      if #id > 0 and deferred then
        r = 'd'
      elseif #id > 0 then
        r = '0'
        if resolve(s) == id then r = '1' end
        for _, h in ipairs(DESC) do lane(ikey(h, ig), id, s) end
        -- The id keeps the removed document's origin as its mark: a
        -- record read again from before it is not stored again.
        local ok, of = rkey('o', s)
        local origin = r == '1' and redis.call('HGET', ok, of)
        if origin then redis.call('HSET', ikey(GEN, ig), id, '-' .. origin) end
        for _, kind in ipairs(RECORDS) do
          local k, f = rkey(kind, s)
          redis.call('HDEL', k, f)
        end
        RCACHE[s] = false -- the same id twice in one call: removed once
      end
      out[#out + 1] = r
    end
  end
  doc = doc + 1
end
return table.concat(out) .. table.concat(later)
`

// luaRevise replaces verdicts, compare-and-set: ARGV[7…] = (seq has old
// new)×n; has is "1" when old is the verdict expected, "0" when none is
// expected. A replaced verdict drops the document's lookup record, as a
// recorded one does. Reply: per seq one byte, '1' when replaced.
const luaRevise = luaPrelude + `
local out = {}
for a = 7, #ARGV, 4 do
  local s = tonumber(ARGV[a])
  local r = '0'
  if liveSeq(s) then
    local k, f = rkey('v', s)
    local cur = redis.call('HGET', k, f)
    if (ARGV[a + 1] == '0' and not cur) or (ARGV[a + 1] == '1' and cur == ARGV[a + 2]) then
      redis.call('HSET', k, f, ARGV[a + 3])
      local lk, lf = rkey('l', s)
      redis.call('HDEL', lk, lf)
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
// script calls of at most workMax work (luaUnlink).
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

	buckets := make([][]unlinkPart, r.shards) // bucket and lane parts
	idParts := make([][]unlinkPart, r.shards)
	idPart := func(i int) unlinkPart {
		return unlinkPart{doc: i, args: []any{seqs[i], ids[i], r.idGroup(ids[i]), "", "", "", ""}, cost: 1}
	}
	var sim []uint64
	for i, id := range ids {
		if seqs[i] == 0 {
			continue
		}
		ops := make([][]byte, r.shards)
		gops := make([][][]byte, r.shards) // per shard, chunks of at most unlinkGroupOps group ops
		ngops := make([]int, r.shards)
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
			addGroup := func(t int, g uint64) {
				sh := r.shardOfRoute(r.routeOf(t, g))
				if ngops[sh]%unlinkGroupOps == 0 {
					gops[sh] = append(gops[sh], nil)
				}
				ngops[sh]++
				c := &gops[sh][len(gops[sh])-1]
				*c = r.appendGroupField(binary.BigEndian.AppendUint16(*c, uint16(t)), t, g, 0)
				*c = (*c)[:len(*c)-4] // the group's digits, without a field
			}
			if k.groups {
				for t, g := range k.bands {
					addGroup(t, g)
				}
			} else {
				for t, v := range k.bands {
					g, f := r.opOf(t, v)
					add(t, g, f)
				}
			}
			if e.HasSimHash {
				sim = simBlockKeys(sim[:0], e.SimHash, r.p.SimHashK)
				for j, key := range sim {
					g, f := r.bucketOp(r.p.Bands+j, key)
					add(r.p.Bands+j, g, f)
				}
			}
			for _, v := range k.anchors {
				if k.groups {
					addGroup(r.p.passageTable(), v)
				} else {
					g, f := r.opOf(r.p.passageTable(), v)
					add(r.p.passageTable(), g, f)
				}
			}
			if e.HasIMatch {
				im[r.shardOfGroup(r.digestGroup(e.IMatch[:]))] = e.IMatch[:]
			}
			if e.HasContent {
				ct[r.shardOfGroup(r.contentGroup(e.Content[:]))] = e.Content[:]
			}
		}
		ish := r.shardOfGroup(r.idGroup(id))
		idLater := r.cluster
		for sh := range r.shards {
			single := !r.cluster && sh == ish
			if len(ops[sh]) == 0 && im[sh] == nil && ct[sh] == nil && len(gops[sh]) == 0 && !single {
				continue
			}
			chunks := gops[sh]
			if len(chunks) == 0 {
				chunks = [][]byte{nil}
			}
			// On a single node the id goes with the document's members when
			// they fit in one part, else in a later round trip.
			withID := single && len(chunks) == 1
			if single && !withID {
				idLater = true
			}
			for c, g := range chunks {
				n := min(unlinkGroupOps, ngops[sh]-c*unlinkGroupOps)
				p := unlinkPart{doc: -1, args: []any{seqs[i], "", 0, "", g, "", ""}, cost: 1 + max(n, 0)}
				if c == 0 {
					p.args[3], p.args[5], p.args[6] = ops[sh], im[sh], ct[sh]
				}
				if withID {
					p.doc, p.args[1], p.args[2] = i, id, r.idGroup(id)
				}
				buckets[sh] = append(buckets[sh], p)
			}
		}
		if idLater {
			idParts[ish] = append(idParts[ish], idPart(i))
		}
	}

	// The members; then the groups too large to read whole; then the ids
	// left for later.
	var scans [][]unlinkScan
	// run runs the parts until every one is done: a part a call stopped
	// (its work bound) or did not start goes again, from where it stopped.
	run := func(pending [][]unlinkPart) error {
		for {
			calls, owners, shards := r.unlinkCalls(scanMax, workMax, pending)
			if len(calls) == 0 {
				return nil
			}
			if err := r.runBounded(ctx, calls); err != nil {
				return err
			}
			pending = make([][]unlinkPart, r.shards)
			malformed := fmt.Errorf("index: delete: malformed script reply")
			for ci, c := range calls {
				reply, err := c.cmd.Text()
				if err != nil || len(reply) < len(owners[ci]) {
					return r.wrap(ctx, "delete", errors.Join(err, errors.New("malformed script reply")))
				}
				sh, own := shards[ci], owners[ci]
				for k, p := range own {
					switch {
					case p.doc >= 0 && reply[k] == '1':
						removed[p.doc] = true
					case p.doc >= 0 && (reply[k] == 'd' || reply[k] == 'r'):
						ish := r.shardOfGroup(r.idGroup(ids[p.doc]))
						idParts[ish] = append(idParts[ish], idPart(p.doc))
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
						if scans == nil {
							scans = make([][]unlinkScan, r.shards)
						}
						scans[sh] = append(scans[sh], unlinkScan{key: key, cursor: cursor, seq: own[k].args[0].(uint64)})
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
			}
		}
	}
	if err := run(buckets); err != nil {
		return nil, err
	}
	if err := r.unlinkScans(ctx, scans); err != nil {
		return nil, err
	}
	if err := run(idParts); err != nil {
		return nil, err
	}
	return removed, nil
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
