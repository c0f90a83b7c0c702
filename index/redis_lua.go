package index

// Server-side scripts. Each script is the prelude followed by one main
// part. They are loaded once (SCRIPT LOAD) and called with EVALSHA, with
// EVAL as the fallback when the server lost its script cache (restart,
// SCRIPT FLUSH, failover).
//
// Calling convention, shared by every script:
//
//	KEYS[1]  the shard's clock hash  <P>c
//	ARGV[1]  the shard's key prefix P = "<namespace>:v6:{<tag>}"
//	ARGV[2]  now, unix seconds (the caller's clock)
//	ARGV[3]  ARGV[4]  the shard's route range [glo, ghi): the keys whose
//	         top 22 bits (routeBits) fall in it live in this shard (for
//	         the sweep)
//	ARGV[5]  sweep budget: key names to give an expiry in this call
//	ARGV[6]  "1" when the caller has seen this shard's namespace before:
//	         a shard found without its clock hash then answers NDLOST
//	         instead of starting afresh (the data is gone)
//	ARGV[7…] the script's own arguments
//
// The store's constants (the namespace fingerprint FP, generation length
// L and retention R in seconds, AHEAD the most the caller's clock may run
// ahead of the server's (0: unbounded), NLIVE live generations, IB the
// first generation's group bits (from Capacity), MINB and GB the fewest
// and most group bits of a generation (GB is also the precision of the
// ops), SPLITA the characters of a passage op's 6 extra group bits, B bands, PT the
// passage table, the guards MAXB and MAXS, SIMK, S shards, REFRESH, MAXC
// candidates returned, PSPLIT = 2^PBITS) are compiled into the source by
// [scriptConstants], so a call parses no configuration. The key layout is
// described in doc.go. Bucket ops travel at full precision, their group
// as GB '0'/'1' digits (passage: one SPLITA character first) and their field as 4 bytes
// (appendOp); a generation's group is a prefix of the digits, cut and put
// into the key name as it is. Other numbers travel as decimal text. Lua numbers are doubles: every integer handled here stays below
// 2^53 (seqs are below 2^48).
const luaPrelude = `
local P, NOW, GLO, GHI, BUDGET = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local CLOCK = KEYS[1]
local sub = string.sub
local ST = redis.call('HMGET', CLOCK, 'f', 'g', 's', 'u', 'q', 'w', 'y', 'n', 't')
local FRESH = not ST[1]
if FRESH and (ARGV[6] == '1' or RO) then
  return redis.error_reply('NDLOST the namespace has no clock: it was deleted or the server lost its data')
end
if FRESH then
  redis.call('HSET', CLOCK, 'f', FP)
elseif ST[1] ~= FP then
  return redis.error_reply('NDPARAMS namespace was created with: ' .. ST[1])
end

-- The generation is monotonic per shard: the largest of the stored one and
-- the caller's clock, so a caller with a slow clock never writes into, or
-- reads relative to, a generation that others have closed.
--
-- OLD lists the older live generations that can hold data, oldest first:
-- those in which this shard was used (clock field w, kept when the
-- generation changes), so a store younger than its retention, or one that
-- was idle for a generation, reads no empty generation. DESC is the
-- current generation followed by OLD, newest first.
--
-- LB[h] is the group bits of generation h in this shard (clock field y,
-- "h:bits,…"): fixed by the first call in the generation, from the band
-- entries the shard's previous generation received (clock field n,
-- counted by the calls that insert) so that a band table's groups hold
-- about 64 buckets; IB (Capacity) for the first generation.
local LB = {}
for h, b in string.gmatch(ST[7] or '', '(%d+):(%d+)') do LB[tonumber(h)] = tonumber(b) end
local GEN = 0
local OLD, DESC = {}, {0}
if L > 0 and AHEAD > 0 then
  -- A caller's clock far ahead of the server's would move the generation
  -- forward for everyone: refuse it.
  local t = tonumber(redis.call('TIME')[1])
  if NOW > t + AHEAD then
    return redis.error_reply('NDCLOCK the caller\'s clock is ' .. string.format('%d', NOW - t) .. ' s ahead of the server\'s')
  end
end
if L > 0 then
  GEN = math.floor(NOW / L)
  local sg = tonumber(ST[2])
  if sg and sg > GEN then GEN = sg end
  local glive = GEN - NLIVE + 1
  local w = ST[6]
  if not w and not FRESH then
    -- A namespace written before w was kept: any live generation may
    -- hold data.
    local all = {}
    for h = glive, GEN - 1 do all[#all + 1] = h end
    w = table.concat(all, ',')
  end
  for h in string.gmatch(w or '', '%d+') do
    h = tonumber(h)
    if h >= glive and h < GEN and LB[h] then OLD[#OLD + 1] = h end
  end
  if sg and sg ~= GEN and sg >= glive and LB[sg] then OLD[#OLD + 1] = sg end
  local nw = table.concat(OLD, ',')
  if RO then -- read as a writer would, writing nothing
  elseif sg ~= GEN then redis.call('HSET', CLOCK, 'g', GEN, 'w', nw)
  elseif nw ~= ST[6] then redis.call('HSET', CLOCK, 'w', nw) end
  DESC[1] = GEN
  for i = #OLD, 1, -1 do DESC[#DESC + 1] = OLD[i] end
end
local EXP = (GEN + 1) * L + R
-- A read-only call (RO) reads a generation that no writer has started
-- yet (it has no layout) as the empty generation it is.
if RO and not LB[GEN] then table.remove(DESC, 1) end
-- RECORDS are the per-document record kinds: meta (id), features,
-- verdict, keys, source, lookup, origin and template.
local RECORDS = {'m', 'f', 'v', 'k', 's', 'l', 'o', 't'}

-- Numbers become key names through itos ('%d', an integer format): Lua's
-- own number-to-string conversion (a concatenation with a number) goes
-- through printf's %.14g, several times slower.
local function itos(x) return string.format('%d', x) end

-- The current generation's layout, fixed by the first call that sees it
-- (scripts run one at a time on a shard, so the first writer wins and
-- every member uses it). The previous generation's band entries n (this
-- shard's share: S/B of them are a document), extrapolated to the whole
-- generation when it was first written after it began (first write t),
-- give the documents to size for; the rule is groupBits's in Go.
if not LB[GEN] and not RO then
  local b = IB
  local sg, n, t0 = tonumber(ST[2]), tonumber(ST[8]), tonumber(ST[9])
  if L > 0 and sg and sg < GEN and n then
    local docs = n * S / B
    if t0 then
      local covered = (sg + 1) * L - t0
      if covered < L / 64 then covered = L / 64 end
      if covered < L then docs = docs * L / covered end
    end
    b = MINB
    while b < GB and 64 * 2 ^ b < docs do b = b + 1 end
  end
  LB[GEN] = b
  -- Kept: the layouts of live generations and of the closed ones the
  -- sweep has still to walk.
  local keep, lo = {}, GEN - NLIVE + 1
  local sw = tonumber(ST[3])
  if sw and sw < lo then lo = sw end
  for h, hb in pairs(LB) do
    if h >= lo then keep[#keep + 1] = itos(h) .. ':' .. itos(hb) end
  end
  redis.call('HSET', CLOCK, 'y', table.concat(keep, ','), 'n', 0, 't', NOW)
end
-- NADD counts the band entries this call inserts into GEN (countEntries).
local NADD = 0
local function countEntries()
  if NADD > 0 then redis.call('HINCRBY', CLOCK, 'n', NADD) end
end

-- BIN4 writes a hex digit as 4 binary digits (bin, for the sweep).
local BIN4 = {}
for i = 0, 15 do
  local d = ''
  for j = 3, 0, -1 do d = d .. (math.floor(i / 2 ^ j) % 2) end
  BIN4[string.format('%x', i)] = d
end
-- bin names group g of c bits (c ≤ 28) as the ops do: c binary digits.
local function bin(g, c)
  local s = string.gsub(string.format('%07x', g), '.', BIN4)
  return sub(s, 29 - c)
end

-- Key prefixes are built once per call and generation. A bucket group's
-- key is its table's prefix and the group's binary digits: the op's first
-- LB[h] digits (LB[h] + 1 characters in the passage table), cut from the op at
-- position p of ops. An id, I-Match or content group's key ends in the
-- decimal digits of the group: the top LB[h] bits of its 32-bit value x
-- (a number, or decimal text).
local KB, KI = {}, {}
local function tpre(h, t)
  local row = KB[h]
  if not row then row = {}; KB[h] = row end
  local p = row[t]
  if not p then p = P .. 'b' .. itos(h) .. ':' .. itos(t) .. ':'; row[t] = p end
  return p
end
local function tkey(h, t, ops, p)
  local c = LB[h]
  if t == PT then c = c + 1 end
  return tpre(h, t) .. sub(ops, p, p + c - 1)
end
-- GK[t] is the current generation's key prefix of table t and GC[t] one
-- less than the digits its groups take: tkey's for GEN, cached per call,
-- since every op names a key of the current generation (two function
-- calls and three table reads fewer per op).
local GK, GC = {}, {}
local function gentable(t)
  local c = LB[GEN]
  if t == PT then c = c + 1 end
  GK[t], GC[t] = tpre(GEN, t), c - 1
end
local function gpre(kind, h)
  local row = KI[kind]
  if not row then row = {}; KI[kind] = row end
  local p = row[h]
  if not p then p = P .. kind .. itos(h) .. ':'; row[h] = p end
  return p
end
local function gkey(kind, h, x)
  if type(x) == 'string' then x = tonumber(x) end
  return gpre(kind, h) .. itos(math.floor(x / 2 ^ (32 - LB[h])))
end
local function ikey(h, x) return gkey('i', h, x) end
local function xkey(h, x) return gkey('x', h, x) end
local function ckey(h, x) return gkey('e', h, x) end

-- Generation keys get their expiry when their generation has closed: the
-- sweep walks every key name a closed generation can have in this shard
-- (the band and SimHash tables, the PSPLIT parts of the passage table, ids,
-- digests, contents × the generation's groups that overlap the shard's
-- route range) and sets EXPIREAT (gen+1)·L + R, BUDGET names per call. A
-- key in the past is deleted. A generation without a layout was never
-- written in this shard: it has no keys.
local SWEPT = true
local function sweep(sw, u, budget)
  while budget > 0 and sw < GEN do
    local b = LB[sw]
    if not b then
      local nx = GEN
      for h in pairs(LB) do if h > sw and h < nx then nx = h end end
      sw, u = nx, 0
    else
      local exp = (sw + 1) * L + R
      local sh = 2 ^ (GB - b)
      local glo = math.floor(GLO / sh)
      local n = math.floor((GHI - 1) / sh) + 1 - glo
      if GHI <= GLO then n = 0 end
      local total = (PT + PSPLIT + 3) * n
      local stop = u + budget
      if stop > total then stop = total end
      for k = u, stop - 1 do
        local tt = math.floor(k / n)
        local g = glo + k % n
        local key
        if tt < PT then key = tpre(sw, tt) .. bin(g, b)
        elseif tt < PT + PSPLIT then key = tpre(sw, PT) .. sub(SPLITA, tt - PT + 1, tt - PT + 1) .. bin(g, b)
        elseif tt == PT + PSPLIT then key = gpre('i', sw) .. itos(g)
        elseif tt == PT + PSPLIT + 1 then key = gpre('x', sw) .. itos(g)
        else key = gpre('e', sw) .. itos(g) end
        redis.call('EXPIREAT', key, exp)
      end
      budget = budget - (stop - u)
      u = stop
      if u >= total then sw = sw + 1; u = 0 end
    end
  end
  redis.call('HSET', CLOCK, 's', sw, 'u', u)
  SWEPT = sw >= GEN
end
if L > 0 and not RO then
  local sw = tonumber(ST[3])
  if not sw then redis.call('HSET', CLOCK, 's', GEN)
  elseif sw < GEN then sweep(sw, tonumber(ST[4]) or 0, BUDGET) end
end

local function pop32(x)
  x = x - bit.band(bit.rshift(x, 1), 0x55555555)
  x = bit.band(x, 0x33333333) + bit.band(bit.rshift(x, 2), 0x33333333)
  x = bit.band(x + bit.rshift(x, 4), 0x0F0F0F0F)
  return x % 255
end

-- fnv32 is FNV-1a 32 (index.fnv32 in Go): it places an id in its group.
local function fnv32(s)
  local h = 2166136261
  for i = 1, #s do
    h = bit.bxor(h, string.byte(s, i))
    h = bit.tobit(bit.lshift(h, 24) + h * 403)
  end
  if h < 0 then h = h + 4294967296 end
  return h
end

local function lenstr(x)
  if x then return struct.pack('>i4', #x) .. x end
  return struct.pack('>i4', -1)
end

-- Per-document records live in hashes of 64 consecutive local seqs. The
-- field is returned as text from FLD: a number given to redis.call is
-- converted by Lua's own number-to-string conversion (printf's %.14g) and
-- interned on every call (an HGET with a numeric field cost ~1.5 µs more,
-- index/BENCHMARKS.md section 10). Seqs written as values go through itos
-- for the same reason (and %.14g would write a seq of 15 digits in
-- exponent form).
local FLD = {}
for i = 0, 63 do FLD[i] = itos(i) end
local function rkey(kind, s)
  local ls = math.floor(s / S)
  return P .. kind .. itos(math.floor(ls / 64)), FLD[ls % 64]
end

-- Resolution of seqs to external ids; false marks a deleted or expired
-- document (its meta record is gone).
local RCACHE = {}
local function resolve(s)
  local id = RCACHE[s]
  if id == nil then
    local k, f = rkey('m', s)
    id = redis.call('HGET', k, f)
    RCACHE[s] = id
  end
  return id
end

-- Deferred writes of per-document records, one HSET per record hash.
local WM, WF, WK, WL, WO = {}, {}, {}, {}, {}
local function defer(w, kind, s, v)
  local k, f = rkey(kind, s)
  local l = w[k]
  if not l then l = {}; w[k] = l end
  l[#l + 1] = f
  l[#l + 1] = v
end
local function flush(w)
  for k, l in pairs(w) do
    redis.call('HSET', k, unpack(l))
    if R > 0 and redis.call('EXPIREAT', k, EXP, 'NX') == 0 then
      redis.call('EXPIREAT', k, EXP, 'GT')
    end
  end
end

-- An id hash field holds the seq of the document stored under the id,
-- or, once that document is removed, '-' and its origin (Entry.Origin:
-- the topic's FNV-1a 32, the partition u32, the offset u64): the
-- removal's mark.
local function ismark(v) return sub(v, 1, 1) == '-' end
-- gone reports whether an entry from origin o re-reads a record stored
-- before the removal marked mark: the same topic and partition, at or
-- before the removed document's offset.
local function gone(o, mark)
  if #o ~= 16 or #mark ~= 17 or sub(o, 1, 8) ~= sub(mark, 2, 9) then return false end
  return sub(o, 9) <= sub(mark, 10)
end

-- register returns the stored seq of id and whether it was already
-- stored; otherwise, unless the entry (origin) re-reads the record of a
-- document removed since (the third result), it stores id → seq in the
-- current generation.
local function register(id, ig, seq, origin)
  local mark
  for _, h in ipairs(DESC) do -- newest first
    local s = redis.call('HGET', ikey(h, ig), id)
    if s and not ismark(s) then return tonumber(s), true, false end
    mark = mark or s
  end
  if mark and origin ~= '' and gone(origin, mark) then return 0, false, true end
  redis.call('HSET', ikey(GEN, ig), id, itos(seq))
  return seq, false, false
end

-- idSeq returns the seq of a live document stored under id (id group ig),
-- looked up newest generation first; nil for none.
local function idSeq(id, ig)
  for _, h in ipairs(DESC) do
    local s = redis.call('HGET', ikey(h, ig), id)
    if s then
      if ismark(s) then return nil end
      s = tonumber(s)
      if resolve(s) then return s end
      return nil
    end
  end
  return nil
end

-- liveSeq reports whether document s is stored and findable: its meta
-- record exists and its id maps to it in a live generation (a record hash
-- holds 64 documents and lives as long as the newest of them, so a
-- document's meta record may outlive its generation). It is what the
-- memory store's alive says of a Seq.
local function liveSeq(s)
  local id = resolve(s)
  if not id then return false end
  return idSeq(id, fnv32(id)) == s
end

local function verdict(s)
  local k, f = rkey('v', s)
  return redis.call('HGET', k, f)
end

-- Per-document lookup state.
local SELF, MODE, LOWER      -- MODE 0 insert, 1 look up only, 2 insert unless present
local LOCAL = false          -- records are in this shard: members can be resolved
local QHI, QLO = 0, 0        -- the document's SimHash halves
local CAND, HITS, LASTT, CORDER, OLDC, LIVEC, PEND, RFULL, TRUNC, HOT, HOTA, CHK, HOTD
local function begin(self, mode)
  SELF, MODE = self, mode
  CAND, HITS, LASTT, CORDER, OLDC, LIVEC, PEND, RFULL, TRUNC, HOT, HOTA, CHK = {}, {}, {}, {}, {}, {}, {}, {}, 0, 0, {}, {}
  HOTD = {}
end
-- addc counts a bucket op's hit (hit key hk) on candidate s: a member met
-- in several generations of one table, or of one anchor's bucket, counts
-- once. via: 1 LSH, 2 SimHash, 3 passage; the lowest met wins.
local function addc(s, via, hk)
  local v = CAND[s]
  if not v then CAND[s] = via; HITS[s] = 1; LASTT[s] = hk; CORDER[#CORDER + 1] = s
  else
    if via < v then CAND[s] = via end
    if LASTT[s] ~= hk then HITS[s] = HITS[s] + 1; LASTT[s] = hk end
  end
end
-- rank orders the candidates best first: most hits, then the most recent.
local function rank()
  table.sort(CORDER, function(a, b)
    if HITS[a] ~= HITS[b] then return HITS[a] > HITS[b] end
    return a > b
  end)
end

-- scan adds the members of a bucket value as candidates (hit key hk, via)
-- and returns whether SELF is among them. LSH and passage members are
-- 6-byte seqs; SimHash members are a 6-byte seq and the 8-byte
-- fingerprint, kept only within SIMK bits. Members are in the order they
-- were added: for a replay (MODE 2) a later document after SELF was added
-- after SELF's first attempt added it, so it saw SELF there and is no
-- candidate; one before it (or where SELF is absent) did not.
local function scan(val, w, old, hk, via)
  local present = false
  for p = 1, #val, w do
    local s, hi, lo
    if w == 6 then s = struct.unpack('>I6', val, p)
    else s, hi, lo = struct.unpack('>I6I4I4', val, p) end
    local near = w == 6
    if not near then
      local d = pop32(bit.bxor(hi, QHI)) -- most members fail on the first half
      near = d <= SIMK and d + pop32(bit.bxor(lo, QLO)) <= SIMK
    end
    if s == SELF then present = true
    elseif present and MODE == 2 and s > SELF then -- saw SELF
    elseif near and (not LOWER or s < SELF) then
      addc(s, via, hk)
      if old then old[#old + 1] = s; old[#old + 1] = string.sub(val, p, p + w - 1); OLDC[s] = true end
    end
  end
  return present
end

-- overflow counts a full bucket (hit key hk); for an anchor's bucket
-- (hk = PT + 1 + its index) the index joins HOTA, the hot anchors.
local function overflow(k, f, add, hk)
  HOT = HOT + 1
  if hk > PT then HOTA[#HOTA + 1] = hk - PT - 1 end
  if add then TRUNC = TRUNC + redis.call('HINCRBY', k, 'o' .. f, 1) - 1
  else TRUNC = TRUNC + (tonumber(redis.call('HGET', k, 'o' .. f)) or 0) end
end

-- A common key (LSH and passage tables: MAXB documents hold it) is an
-- 8-byte value: 'C', the 6-byte seq of its exemplar (the first document
-- that held it) and the documents that held or found it in this
-- generation, capped at 255. Member lists are multiples of 6 bytes.
local function iscommon(val, w) return w == 6 and #val % 6 == 2 end
-- NOEX is the exemplar of a common key whose exemplar was deleted: it
-- yields no candidate, and the next document to find the key in its
-- generation becomes the exemplar.
local NOEX = string.rep('\0', 6)
local function cmark(ex, n) return 'C' .. ex .. string.char(math.min(n, 255)) end

-- commonHit counts common key hk once (its anchor joins HOTA with the
-- documents that hold it: the most any generation counts) and adds its
-- exemplar as a candidate; old marks one found in an older generation
-- (for refresh). Returns the key's count.
local function commonHit(val, hk, via, old)
  local n = string.byte(val, 8)
  if not CHK[hk] then
    CHK[hk] = true
    HOT = HOT + 1
    if hk > PT then HOTA[#HOTA + 1] = hk - PT - 1 end
    HOTD[hk] = n
  elseif n > HOTD[hk] then HOTD[hk] = n end
  local s = struct.unpack('>I6', val, 2)
  if s ~= SELF and s ~= 0 and (not LOWER or s < SELF) then -- 0: exemplar deleted
    addc(s, via, hk)
    if old then OLDC[s] = true end
  end
  return n
end

-- hotList encodes HOTA: nhot u16 · nhot × (anchor index u16 · documents
-- u8), the index of the anchor among the document's distinct anchors, or
-- in cluster mode of the op among the call's ops of the document.
local function hotList()
  local p = {struct.pack('>I2', #HOTA)}
  for _, j in ipairs(HOTA) do p[#p + 1] = struct.pack('>I2B', j, HOTD[PT + 1 + j]) end
  return table.concat(p)
end

-- tableOp looks up (and unless MODE 1 inserts into) the bucket of table t
-- of the op at position op of ops (its group's digits, cut per
-- generation by tkey) and field f (4 bytes) in every live generation; its members count under hit key hk (the table, or one per
-- anchor of the passage table). The passage table holds about 64 anchors
-- per document, so it has PSPLIT times the groups (the caller moved the
-- top bits of its field into the group, in the same shard). A new bucket
-- costs one HSETNX (or an HGET and an HSET, see GUESS); an existing one is
-- read and rewritten after resolution (PEND). A common key costs one HGET
-- (two commands when HSETNX was tried first): its exemplar is the only candidate and it
-- takes no member; common in an older generation, it is marked common in
-- the current one too, with the document as its exemplar there (one that
-- lives as long as the mark).
-- GUESS[via] is a moving average, over the call, of whether the buckets
-- of a table kind (via: 1 LSH, 2 SimHash, 3 passage) existed (+) or were
-- new (−) when inserted into.
local GUESS = {0, 0, 0}
local function tableOp(t, ops, op, f, sim, me, hk)
  local via = sim and 2 or (t == PT and 3 or 1)
  local w = sim and 14 or 6
  local collect = REFRESH == 1 and MODE ~= 1
  local old, oc
  for i = 1, #OLD do
    local h = OLD[i]
    local val = redis.call('HGET', tkey(h, t, ops, op), f)
    if val then
      if iscommon(val, w) then
        oc = math.max(oc or 0, commonHit(val, hk, via, collect))
      else
        if collect then old = old or {} end
        scan(val, w, old, hk, via)
      end
    end
  end
  if not LB[GEN] then return end -- RO: no current generation yet
  local kp = GK[t]
  if not kp then gentable(t); kp = GK[t] end
  local k = kp .. sub(ops, op, op + GC[t])
  local lim = sim and MAXS or MAXB
  if MODE == 0 and t < B then NADD = NADD + 1 end
  if MODE == 1 then
    local val = redis.call('HGET', k, f)
    if val then
      if iscommon(val, w) then commonHit(val, hk, via, false); return end
      scan(val, w, nil, hk, via)
      if sim and #val >= w * lim then RFULL[#RFULL + 1] = {k, f, val, w, lim, hk} end
    end
    return
  end
  local val
  if not old and not oc and MODE == 0 then
    -- Which command comes first follows what this table kind's buckets
    -- were lately: mostly new, HSETNX (one command for a new bucket, three
    -- for an existing one); mostly existing (copies, templates), HGET
    -- (two for a new one, two for an existing one, one for a common key
    -- whose count is capped). Either order stores the same.
    if GUESS[via] > 0 then
      val = redis.call('HGET', k, f)
      if not val then
        GUESS[via] = GUESS[via] * 0.75 - 0.25
        redis.call('HSET', k, f, me)
        return
      end
    else
      if redis.call('HSETNX', k, f, me) == 1 then
        GUESS[via] = GUESS[via] * 0.75 - 0.25
        return
      end
      val = redis.call('HGET', k, f)
    end
    GUESS[via] = GUESS[via] * 0.75 + 0.25
  else
    val = redis.call('HGET', k, f)
  end
  val = val or ''
  if iscommon(val, w) then
    local n = commonHit(val, hk, via, false)
    local ex = sub(val, 2, 7)
    if ex == NOEX then
      redis.call('HSET', k, f, cmark(me, n + 1)) -- the deleted exemplar's successor
    elseif n < 255 then redis.call('HSET', k, f, cmark(ex, n + 1)) end
    return
  end
  if oc then
    scan(val, w, nil, hk, via)
    redis.call('HSET', k, f, cmark(me, oc + 1))
    return
  end
  local present = scan(val, w, nil, hk, via)
  PEND[#PEND + 1] = {k, f, val, w, lim, old, present, me, hk}
end

local function has(val, s, w)
  for p = 1, #val, w do
    if struct.unpack('>I6', val, p) == s then return true end
  end
  return false
end

-- finish counts the full buckets a replay looked up and rewrites the
-- pending buckets: members whose document is gone (dead) are dropped,
-- refreshed members of older generations are copied in (on a single node
-- only the candidates returned, whose records were refreshed; in cluster
-- mode, where records are resolved later, every one found), and the
-- document is appended unless the bucket is full.
-- live keeps the members of val whose document exists. Only a bucket that
-- looks full is checked member by member (SimHash members outside SIMK and
-- later members of a replay are not resolved otherwise), so that the guard
-- counts live documents, exactly as the memory store does.
local function live(val, w)
  if not LOCAL then return val end
  local parts = {}
  for p = 1, #val, w do
    local s = struct.unpack('>I6', val, p)
    if s == SELF or resolve(s) then parts[#parts + 1] = string.sub(val, p, p + w - 1) end
  end
  return table.concat(parts)
end

local function finish(dead)
  for _, pe in ipairs(RFULL) do
    local k, f, val, w, lim, hk = unpack(pe)
    if #live(val, w) >= w * lim then overflow(k, f, false, hk) end
  end
  for _, pe in ipairs(PEND) do
    local k, f, val, w, lim, old, present, me, hk = unpack(pe)
    local nv = val
    if dead then
      local parts, drop = {}, false
      for p = 1, #val, w do
        if dead[struct.unpack('>I6', val, p)] then drop = true
        else parts[#parts + 1] = string.sub(val, p, p + w - 1) end
      end
      if drop then nv = table.concat(parts) end
    end
    if old then
      for i = 1, #old, 2 do
        if not (dead and dead[old[i]]) and (not LOCAL or LIVEC[old[i]]) and #nv < w * lim and not has(nv, old[i], w) then
          nv = nv .. old[i + 1]
        end
      end
    end
    -- A key that reaches lim members with the document becomes common
    -- (LSH and passage tables); a SimHash bucket stops growing. Only live
    -- members count.
    local grow = w == 6 and w or 0
    if not present and #nv + grow >= w * lim then nv = live(nv, w) end
    if present then
      if nv ~= val then redis.call('HSET', k, f, nv) end
    elseif w == 6 and #nv + w >= w * lim then
      local ex = me
      if #nv > 0 then ex = sub(nv, 1, 6) end
      redis.call('HSET', k, f, cmark(ex, #nv / 6 + 1))
    elseif #nv >= w * lim then
      overflow(k, f, true, hk)
      if nv ~= val then redis.call('HSET', k, f, nv) end
    else
      redis.call('HSET', k, f, nv .. me)
    end
  end
end

-- exactOp looks up the I-Match digest d (and unless MODE 1 records SELF
-- as its first document). With check, a hit must resolve to a live
-- document (single node); otherwise resolution is left to the caller.
local function exactOp(d, check)
  local g = struct.unpack('>I4', d, 17)
  local f = string.sub(d, 1, 16)
  local found
  for _, h in ipairs(OLD) do
    local s = tonumber(redis.call('HGET', xkey(h, g), f))
    if s and s ~= SELF and (not LOWER or s < SELF) and (not check or resolve(s)) then found = s; break end
  end
  if found then
    if MODE ~= 1 then redis.call('HSETNX', xkey(GEN, g), f, itos(REFRESH == 1 and found or SELF)) end
    return found, true
  end
  if not LB[GEN] then return 0, false end -- RO: no current generation yet
  local k = xkey(GEN, g)
  if MODE == 1 then
    local s = tonumber(redis.call('HGET', k, f))
    if s and s ~= SELF and (not LOWER or s < SELF) and (not check or resolve(s)) then return s, false end
    return 0, false
  end
  if redis.call('HSETNX', k, f, itos(SELF)) == 1 then return 0, false end
  local s = tonumber(redis.call('HGET', k, f))
  if s ~= SELF and (not check or resolve(s)) then return s, false end
  if s ~= SELF then redis.call('HSET', k, f, itos(SELF)) end
  return 0, false
end

-- COPIES is how many recent exact copies a content lane entry keeps
-- (field f+) to take the representative's place when it is removed.
local COPIES = 4

-- copyOp looks up the content digest c (16 bytes: the field is its first
-- 12, the group its last 4). It returns the first earlier document with
-- that content in an older generation, else the current generation's
-- representative (0 for none); whether it was found in an older
-- generation; whether the entry is a copy of the current generation's
-- representative, which ends its lookup; and that representative. With
-- check, a hit must resolve to a live document (single node); otherwise
-- (cluster) the caller resolves and decides. Unless MODE 1, an entry that
-- finds no such representative becomes it (with REFRESH, the older
-- document found is carried forward instead); MODE 2 (a cluster replay
-- whose first attempt may have stopped half-way) writes only what that
-- attempt did not.
local function copyOp(c, check)
  local g = struct.unpack('>I4', c, 13)
  local f = string.sub(c, 1, 12)
  local function usable(s)
    return s and s ~= SELF and (not LOWER or s < SELF) and (not check or resolve(s))
  end
  local found, old = 0, false
  for _, h in ipairs(OLD) do
    local s = tonumber(redis.call('HGET', ckey(h, g), f))
    if usable(s) then found, old = s, true; break end
  end
  if not LB[GEN] then return found, old, found > 0, 0 end -- RO: no current generation yet
  local k = ckey(GEN, g)
  local v = redis.call('HMGET', k, f, f .. '+')
  local cur = tonumber(v[1])
  if usable(cur) then
    if found == 0 then found = cur end
    local me = struct.pack('>I6', SELF)
    local list = v[2] or ''
    local present = false
    if MODE == 2 then -- a replay: its first attempt may have added it
      for p = 1, #list, 6 do
        if sub(list, p, p + 5) == me then present = true; break end
      end
    end
    if MODE ~= 1 and not present then
      -- The entry holds the representative's content: one of the recent
      -- copies (field f+, the last COPIES seqs) that a delete of the
      -- representative makes the representative (laneRep).
      list = list .. me
      if #list > 6 * COPIES then list = sub(list, -6 * COPIES) end
      redis.call('HSET', k, f .. '+', list)
    end
    return found, old, true, cur
  end
  if MODE == 1 then return found, old, found > 0, cur or 0 end
  if MODE == 2 and cur == SELF then return found, old, false, cur end -- registered by its first attempt
  if REFRESH == 1 and found > 0 then redis.call('HSET', k, f, itos(found))
  else redis.call('HSET', k, f, itos(SELF)) end
  return found, old, false, cur or 0
end

-- refreshRecords restarts the lifetime of document s (found in an older
-- generation): its record hashes are extended and its id copied into the
-- current generation.
local function refreshRecords(s, id)
  for _, kind in ipairs(RECORDS) do
    local k = rkey(kind, s)
    redis.call('EXPIREAT', k, EXP, 'GT')
  end
  redis.call('HSET', ikey(GEN, fnv32(id)), id, itos(s))
end

-- A document's lookup record (recall.go) keeps what its insertion's
-- lookup found, for a replay that finds no verdict: version 1 · copy seq
-- u48 · imatch seq u48 · withheld u32 · common u16 · dropped u32 · ncand
-- u16 · ncand × (seq u48 · via u8 · hits u16) · nhot u16 · nhot × (anchor
-- index u16 · documents u8).
local function lookupRecord(cp, ex, trunc, hot, dropped, cands, hotl)
  return struct.pack('>BI6I6I4I2I4I2', 1, cp, ex, trunc, hot, dropped, #cands) .. table.concat(cands) .. hotl
end
-- recall reads document s's lookup record (false for none) and returns
-- its parts, the candidates resolved to ids (those gone left out), as the
-- reply of luaLookupInsert has them: copy seq, imatch seq, withheld, hot,
-- dropped, ncand, the candidates (seq u48 · via u8 · hits u16 · id), and
-- the hot list.
local LREC = {} -- lookup records written by this call (deferred)
local function lookupOf(s)
  if LREC[s] then return LREC[s] end
  local k, f = rkey('l', s)
  return redis.call('HGET', k, f)
end
local function recall(rec)
  local _, cp, ex, trunc, hot, dropped, n, p = struct.unpack('>BI6I6I4I2I4I2', rec)
  local cands, m = {}, 0
  for _ = 1, n do
    local c, v, h
    c, v, h, p = struct.unpack('>I6BI2', rec, p)
    local cid = liveSeq(c) and resolve(c)
    if cid then
      m = m + 1
      cands[#cands + 1] = struct.pack('>I6BI2', c, v, h) .. lenstr(cid)
    end
  end
  if cp > 0 and not liveSeq(cp) then cp = 0 end
  if ex > 0 and not liveSeq(ex) then ex = 0 end
  return cp, ex, trunc, hot, dropped, m, table.concat(cands), sub(rec, p)
end
`

// luaLookupInsert is the single-node LookupInsert: registration, the
// content lane, every table and the I-Match lane of every document,
// ranking, resolution and writes, each document in one atomic step, in
// order. ARGV[7] is the call's time budget in µs (0: none): once the
// documents decided so far have taken it, the call ends after the current
// document and leaves the rest to the caller's next round trip. The calls
// of one round trip (a pipeline) share KEYS[2], the round's stop key,
// which a call that ended early sets unless it is the round's last: the
// later calls then do nothing (reply ""), so no document is decided before
// an earlier one of the batch, and the last removes the key. ARGV[8]:
// bit 1 set when an earlier call of the round precedes this one, bit 2
// when this is the round's last (look-ups, flag 16, write nothing and do
// not depend on one another: each of their calls is sent as a round's
// last and only, so none sets or reads the key). ARGV[9…], per document:
//
//	id idg flags features keys ops [fingerprint] [digest] [content]
//
// idg is the id's 32-bit group value (decimal); ops the document's bucket
// ops (appendOp: the group's GB binary digits, after a SPLITA character for an anchor,
// then the field's 4 bytes): the B bands, then with a SimHash the k+1
// blocks, then one per distinct anchor; fingerprint the SimHash's 8 bytes. flags: 1 SimHash present,
// 2 I-Match digest present, 4 content digest present, 8 anchors present,
// 16 look up only (Lookup: nothing registered or written).
// Reply: one string holding the documents decided, u16, then per document
// (big-endian):
//
//	status u8 (0 new, 1 replay) · seq u48 · withheld u32 · hot u16 ·
//	verdict (i32 length, −1 = none) · copy seq u48 · copy id (i32 length) ·
//	imatch seq u48 · imatch id (i32 length) · dropped u32 · ncand u16 ·
//	ncand × (seq u48 · via u8 · hits u16 · id (i32 length)) ·
//	nhot u16 · nhot × (hot anchor u16 · documents u8)
//
// The candidates' features are not read here: the caller reads them with
// plain HMGETs after the call (readFeatures). A features value read in Lua
// becomes a Lua string, hashed byte by byte when it is interned and swept
// by the collector later, which cost more than the HGET itself.
const luaLookupInsert = luaPrelude + `
LOWER, LOCAL = true, true
local ORDER = tonumber(ARGV[8])
local LAST = ORDER >= 2
if ORDER % 2 == 1 and redis.call('EXISTS', KEYS[2]) == 1 then
  if LAST then redis.call('DEL', KEYS[2]) end
  return ''
end
local WMAX = tonumber(ARGV[7])
local function usec()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local T0 = WMAX > 0 and usec() or 0
local q = tonumber(ST[5]) or 0
local q0 = q
local out = {}
local a = 9
while a <= #ARGV do
  local id, ig, flags, feat, krec, origin = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2]), ARGV[a + 3], ARGV[a + 4], ARGV[a + 5]
  a = a + 6
  -- flags 16: look up only (Lookup): the document is not registered and
  -- nothing is written; it stands after every stored document.
  local check = math.floor(flags / 16) % 2 == 1
  local hasSim, hasIM = flags % 2 == 1, math.floor(flags / 2) % 2 == 1
  local hasC, hasA = math.floor(flags / 4) % 2 == 1, math.floor(flags / 8) % 2 == 1
  local ops = ARGV[a]
  a = a + 1
  local sa = a
  if hasSim then a = a + 1 end
  local da = a
  if hasIM then a = a + 1 end
  local ca = a
  if hasC then a = a + 1 end
  repeat -- one document; break: done with it
  local self, replay, isgone
  if check then
    -- A stored id is looked up as its replay is, without writing.
    self = idSeq(id, ig)
    if self then replay = true else self, replay = q + 1, false end
  else self, replay, isgone = register(id, ig, q + 1, origin) end
  if isgone then
    -- A record read again after its document was removed: nothing
    -- stored, nothing looked up (status 3).
    out[#out + 1] = struct.pack('>BI6I4I2', 3, 0, 0, 0) .. lenstr(false) .. struct.pack('>I6', 0) .. lenstr(false) ..
      struct.pack('>I6', 0) .. lenstr(false) .. struct.pack('>I4I2I2', 0, 0, 0)
    break
  end
  local vd, lrec = false, false
  if replay then
    vd = verdict(self)
    if not vd then lrec = lookupOf(self) end
  elseif not check then
    q = self
    RCACHE[self] = id
    defer(WM, 'm', self, id)
    if #origin > 0 then defer(WO, 'o', self, origin) end
  end
  begin(self, (replay or check) and 1 or 0)
  local skip = replay and (vd or lrec)
  local cp, cpold = 0, false
  if not skip and hasC then
    local stop
    cp, cpold, stop = copyOp(ARGV[ca], true)
    skip = stop
  end
  if not replay and not check and not skip then
    -- Even empty: the caller reads features with HMGET (readFeatures),
    -- where no record means a document removed meanwhile.
    defer(WF, 'f', self, feat)
    if #krec > 0 then defer(WK, 'k', self, krec) end
  elseif not replay and not check and hasC then
    -- An exact copy of a live representative (skip) keeps no features:
    -- it enters no bucket, so no lookup returns it as a candidate. Its
    -- keys record holds its content digest alone (version 4, flags
    -- 4|8: no bands, no anchors), for a delete to find its place among
    -- the lane's copies, or its lane entry once it represents them.
    defer(WK, 'k', self, string.char(4, 12, GB) .. ARGV[ca] .. string.char(0))
  end
  local ex, exold = 0, false
  if not skip then
    local me = struct.pack('>I6', self)
    local p = 1
    for t = 0, B - 1 do
      tableOp(t, ops, p, sub(ops, p + GB, p + GB + 3), false, me, t)
      p = p + GB + 4
    end
    if hasSim then
      QHI, QLO = struct.unpack('>I4I4', ARGV[sa])
      local sme = me .. ARGV[sa]
      for t = B, PT - 1 do
        tableOp(t, ops, p, sub(ops, p + GB, p + GB + 3), true, sme, t)
        p = p + GB + 4
      end
    end
    local j = 0
    local pw = GB + 1
    while p < #ops do
      j = j + 1
      tableOp(PT, ops, p, sub(ops, p + pw, p + pw + 3), false, me, PT + j)
      p = p + pw + 4
    end
    if hasIM then ex, exold = exactOp(ARGV[da], true) end
  end
  -- Resolve in rank order until MAXC live candidates; the dead ones met
  -- on the way are dropped from the pending buckets.
  rank()
  local dead, cands, lc, n, dropped = nil, {}, {}, 0, 0
  for i, s in ipairs(CORDER) do
    if n == MAXC then dropped = #CORDER - i + 1; break end
    local cid = resolve(s)
    if cid then
      n = n + 1
      LIVEC[s] = true
      lc[#lc + 1] = struct.pack('>I6BI2', s, CAND[s], HITS[s])
      cands[#cands + 1] = lc[#lc] .. lenstr(cid)
      if OLDC[s] then refreshRecords(s, cid) end
    else
      dead = dead or {}
      dead[s] = true
    end
  end
  finish(dead)
  local status, hotl, cand = replay and 1 or 0, '', table.concat(cands)
  if lrec then
    -- A replay without a verdict: what its first attempt was given.
    status = 2
    cp, ex, TRUNC, HOT, dropped, n, cand, hotl = recall(lrec)
  else
    hotl = hotList()
  end
  local exid = false
  if ex > 0 then
    exid = resolve(ex)
    if exold and REFRESH == 1 and exid and not check then refreshRecords(ex, exid) end
  end
  local cpid = false
  if cp > 0 then
    cpid = resolve(cp)
    if cpold and REFRESH == 1 and cpid and not check then refreshRecords(cp, cpid) end
  end
  if not exid then ex = 0 end
  if not cpid then cp = 0 end
  if not replay and not check then
    LREC[self] = lookupRecord(cp, ex, TRUNC, HOT, dropped, lc, hotl)
    defer(WL, 'l', self, LREC[self])
  end
  out[#out + 1] = struct.pack('>BI6I4I2', status, self, TRUNC, HOT) .. lenstr(vd) ..
    struct.pack('>I6', cp) .. lenstr(cpid) .. struct.pack('>I6', ex) .. lenstr(exid) ..
    struct.pack('>I4I2', dropped, n) .. cand .. hotl
  until true
  if WMAX > 0 and a <= #ARGV and usec() - T0 >= WMAX then
    -- PX: a round whose pipeline broke off does not leave it for long.
    if not LAST then redis.call('SET', KEYS[2], '1', 'PX', 60000) end
    break
  end
end
flush(WM)
flush(WF)
flush(WK)
flush(WL)
flush(WO)
countEntries()
if q ~= q0 then redis.call('HSET', CLOCK, 'q', q) end
return struct.pack('>I2', #out) .. table.concat(out)
`

// luaRegister is cluster phase 2, per id shard (a document's records
// live in its id's shard). ARGV[7…], per document: id idg seq features
// keys origin. Reply per document: status u8 (0 new, 1 replay, 3 gone:
// a record read again after its document was removed) · seq u48 ·
// verdict · lookup record (each i32 length, −1 = none; the lookup record
// only for a replay without a verdict).
const luaRegister = luaPrelude + `
local out = {}
for a = 7, #ARGV, 6 do
  local id, ig, seq, feat, krec, origin = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2]), ARGV[a + 3], ARGV[a + 4], ARGV[a + 5]
  local self, replay, isgone = register(id, ig, seq, origin)
  local vd, lrec = false, false
  if isgone then
  elseif replay then
    vd = verdict(self)
    if not vd then lrec = lookupOf(self) end
  else
    if #origin > 0 then defer(WO, 'o', self, origin) end
    defer(WM, 'm', self, id)
    if #feat > 0 then defer(WF, 'f', self, feat) end
    if #krec > 0 then defer(WK, 'k', self, krec) end
  end
  out[#out + 1] = struct.pack('>BI6', isgone and 3 or (replay and 1 or 0), self) .. lenstr(vd) .. lenstr(lrec)
end
flush(WM)
flush(WF)
flush(WK)
flush(WO)
return table.concat(out)
`

// luaBuckets is cluster phase 3, per bucket shard. ARGV[7…], per document:
// seq mode fingerprint ops digest-or-"": fingerprint the SimHash's 8 bytes
// (zeros for none), ops: each the table t u16 (PT for an anchor), then
// the op as in luaLookupInsert.
// Reply per document: withheld u32 · hot u16 · imatch seq u48 ·
// imatch-in-older-generation u8 · ncand u16 · (seq u48 · via u8 · hits
// u16)×ncand · nhot u16 · (op u16)×nhot, via bit 4 marking a candidate
// found in an older generation; a hot op is the index among the
// document's ops in this call of an anchor whose bucket is full.
// Every table and every anchor's bucket lives in one shard, so a
// document's hits are the sum over shards.
const luaBuckets = luaPrelude + `
LOWER = false
local out = {}
local a = 7
while a <= #ARGV do
  local self, mode = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  QHI, QLO = struct.unpack('>I4I4', ARGV[a + 2])
  local ops = ARGV[a + 3]
  a = a + 4
  begin(self, mode)
  local me = struct.pack('>I6', self)
  local sme = me .. ARGV[a - 2]
  local i = 0
  local p = 1
  while p < #ops do
    local t = struct.unpack('>I2', ops, p)
    local sim = t >= B and t < PT
    local hk = t
    local gw = GB
    if t == PT then hk = PT + 1 + i; gw = GB + 1 end
    tableOp(t, ops, p + 2, sub(ops, p + 2 + gw, p + 5 + gw), sim, sim and sme or me, hk)
    i = i + 1
    p = p + 6 + gw
  end
  local ex, exold = 0, false
  if #ARGV[a] > 0 then ex, exold = exactOp(ARGV[a], false) end
  a = a + 1
  finish(nil)
  local parts = {}
  for _, s in ipairs(CORDER) do
    local via = CAND[s]
    if OLDC[s] then via = via + 4 end
    parts[#parts + 1] = struct.pack('>I6BI2', s, via, HITS[s])
  end
  out[#out + 1] = struct.pack('>I4I2I6BI2', TRUNC, HOT, ex, exold and 1 or 0, #CORDER) .. table.concat(parts) .. hotList()
end
countEntries()
return table.concat(out)
`

// luaCopies is the content lane of cluster phase 2, per content shard.
// ARGV[7…], per document: seq mode content. Reply per document: found seq
// u48 · found-in-older-generation u8 · current representative seq u48
// (0 = none). The caller resolves both and decides: a live earlier
// representative makes the document a copy, which skips the buckets.
const luaCopies = luaPrelude + `
LOWER = false
local out = {}
for a = 7, #ARGV, 3 do
  begin(tonumber(ARGV[a]), tonumber(ARGV[a + 1]))
  local found, old, _, cur = copyOp(ARGV[a + 2], false)
  out[#out + 1] = struct.pack('>I6BI6', found, old and 1 or 0, cur)
end
return table.concat(out)
`

// luaResolve is cluster phase 4, per record shard: ARGV[7…] = (seq
// refresh)×n. Reply: per seq its id (i32 length, −1 = gone).
const luaResolve = luaPrelude + `
local out = {}
for a = 7, #ARGV, 2 do
  local s = tonumber(ARGV[a])
  local id = resolve(s)
  if id and ARGV[a + 1] == '1' then refreshRecords(s, id) end
  out[#out + 1] = lenstr(id)
end
return table.concat(out)
`

// luaFeatures returns the features of documents: ARGV[7…] = seqs.
// Reply: an array, per seq its features as a bulk string of its own (nil
// = not stored, "" = stored without features).
var luaFeatures = luaSeqRecords("f")

// luaVerdicts returns the recorded verdicts of documents, as luaFeatures
// does features ("" when none is recorded yet).
var luaVerdicts = luaSeqRecords("v")

// luaSeqRecords reads one per-document record kind ('f' features, 'v'
// verdict, 's' source, 't' template) of documents by Seq: nil for a document that is
// not stored (its meta record is gone), "" for one without that record.
func luaSeqRecords(kind string) string {
	return luaPrelude + `
local out = {}
for a = 7, #ARGV do
  local s = tonumber(ARGV[a])
  local v = false
  if s and s > 0 and liveSeq(s) then
    local k, f = rkey('` + kind + `', s)
    v = redis.call('HGET', k, f) or ''
  end
  out[#out + 1] = v
end
return out
`
}

// luaVerdict records verdicts: ARGV[7…] = (seq verdict)×n, first write
// wins; recording a verdict drops the document's lookup record. Reply:
// per seq one byte, 1 when stored or already set, 0 when the document is
// not stored.
var luaVerdict = luaSeqRecordOnce("v")

// luaSeqRecordOnce writes one per-document record kind ('v' verdict, 's'
// source, 't' template) of documents by Seq, with the expiry of the
// document's meta record: a verdict when none is recorded (the first write
// wins), a found record (found.go) when none is recorded or its finder
// (the first 6 bytes, big-endian) comes after the new one's.
func luaSeqRecordOnce(kind string) string {
	write := `redis.call('HSETNX', k, f, ARGV[a + 1])
    local lk, lf = rkey('l', s)
    lrm[lk] = lrm[lk] or {}
    table.insert(lrm[lk], lf)`
	if isFoundKind(kind) {
		write = `local cur = redis.call('HGET', k, f)
    if not cur or struct.unpack('>I6', ARGV[a + 1]) < struct.unpack('>I6', cur) then
      redis.call('HSET', k, f, ARGV[a + 1])
    end`
	}
	return luaPrelude + `
local out, exps, lrm = {}, {}, {}
for a = 7, #ARGV, 2 do
  local s = tonumber(ARGV[a])
  if s and s > 0 and liveSeq(s) then
    local k, f = rkey('` + kind + `', s)
    ` + write + `
    if R > 0 and not exps[k] then
      exps[k] = true
      local exp = redis.call('EXPIRETIME', (rkey('m', s)))
      if exp > 0 and redis.call('EXPIREAT', k, exp, 'NX') == 0 then redis.call('EXPIREAT', k, exp, 'GT') end
    end
    out[#out + 1] = '1'
  else
    out[#out + 1] = '0'
  end
end
for k, fs in pairs(lrm) do redis.call('HDEL', k, unpack(fs)) end
return table.concat(out)
`
}

// luaIDs looks ids up as a replay does, for Lookup in cluster mode (per
// id shard, writing nothing): ARGV[7…] = (id idg)×n. Reply per id: seq
// u48 (0: not stored) · verdict · lookup record (each i32 length, −1 =
// none; the lookup record only when there is no verdict).
const luaIDs = luaPrelude + `
local out = {}
for a = 7, #ARGV, 2 do
  local s = idSeq(ARGV[a], ARGV[a + 1])
  local vd, lrec = false, false
  if s then
    vd = verdict(s)
    if not vd then lrec = lookupOf(s) end
  end
  out[#out + 1] = struct.pack('>I6', s or 0) .. lenstr(vd) .. lenstr(lrec)
end
return table.concat(out)
`

// luaKeepLookups writes the lookup records of documents inserted in
// cluster mode (per record shard, after their lookups were resolved):
// ARGV[7…] = (seq record)×n, for documents still stored with no verdict
// recorded yet. Reply: "".
const luaKeepLookups = luaPrelude + `
for a = 7, #ARGV, 2 do
  local s = tonumber(ARGV[a])
  if liveSeq(s) and not verdict(s) then defer(WL, 'l', s, ARGV[a + 1]) end
end
flush(WL)
return ''
`

// luaMaintain runs the expiry sweep with the budget of ARGV[5] and reports
// 1 when no closed generation is left without expiry.
const luaMaintain = luaPrelude + `
if SWEPT then return 1 end
return 0
`
