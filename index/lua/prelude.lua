-- Server-side scripts. Each script is the prelude followed by one main
-- part. They are loaded once (SCRIPT LOAD) and called with EVALSHA, with
-- EVAL as the fallback when the server lost its script cache (restart,
-- SCRIPT FLUSH, failover).
--
-- Calling convention, shared by every script:
--
--   KEYS[1]  the shard's clock hash  <P>c
--   ARGV[1]  the shard's key prefix P = "<namespace>:v7:{<tag>}"
--   ARGV[2]  now, unix seconds (the caller's clock)
--   ARGV[3]  ARGV[4]  the shard's route range [glo, ghi): the keys whose
--            top 22 bits (routeBits) fall in it live in this shard (for
--            the sweep and the bucket groups' splits)
--   ARGV[5]  sweep budget: key names to give an expiry in this call
--   ARGV[6]  "1" when the caller has seen this shard's namespace before:
--            a shard found without its clock hash then answers NDLOST
--            instead of starting afresh (the data is gone)
--   ARGV[7…] the script's own arguments
--
-- The store's constants (the namespace fingerprint FP, generation length
-- L and retention R in seconds, AHEAD the most the caller's clock may run
-- ahead of the server's (0: unbounded), NLIVE live generations, MINB and
-- GB the fewest and most group bits of a generation (MINB the first
-- generation's level; GB is also the precision of the ops), SPLITA the characters of a passage op's 6 extra group bits, B bands, PT the
-- passage table, the guards COMMON_DOCS and MAXS, SIMK, S shards, REFRESH, MAXC
-- candidates returned, PSPLIT = 2^PBITS, FW the bytes of a bucket's field,
-- LOAD the band entries per group at which groups split) are compiled into the source by
-- [scriptConstants], so a call parses no configuration. The key layout is
-- described in doc.go. Bucket ops travel at full precision, their group
-- as GB '0'/'1' digits (passage: one SPLITA character first) and their field as FW bytes
-- (appendOp); a generation's group is a prefix of the digits, cut and put
-- into the key name as it is. Other numbers travel as decimal text. Lua numbers are doubles: every integer handled here stays below
-- 2^53 (seqs are below 2^48).
-- The globals a call uses most, as locals: a global is a table look-up
-- by name on every use.
local rcall, spack, sunpack, floor, concat = redis.call, struct.pack, struct.unpack, math.floor, table.concat
local tonumber = tonumber
local P, NOW, GLO, GHI, BUDGET = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local CLOCK = KEYS[1]
local sub, byte, band, bxor = string.sub, string.byte, bit.band, bit.bxor
local ST = rcall('HMGET', CLOCK, 'f', 'g', 's', 'u', 'q', 'w', 'y', 'n', 't')
local FRESH = not ST[1]
if FRESH and (ARGV[6] == '1' or RO) then
  return redis.error_reply('NDLOST the namespace has no clock: it was deleted or the server lost its data')
end
if FRESH then
  rcall('HSET', CLOCK, 'f', FP)
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
-- BL[h] and BS[h] are the level and split count of generation h's
-- groups in this shard (bucket groups, ids and lanes alike), LB[h] the
-- level it started at (clock field y, "h:start:level:splits,…"; "h:b" is
-- a layout of level b that never split). The first call in the
-- generation fixes the start, from the band entries the shard's previous
-- generation received (clock field n, counted by the calls that insert),
-- so that a band table's groups hold about LOAD buckets; MINB for the
-- first generation. The groups then grow with the generation (linear
-- hashing, splitGroup): of the shard's groups at level BL[h], the first
-- BS[h] have split into two each at BL[h] + 1 bits.
local LB, BL, BS = {}, {}, {}
for h, b, l, n in string.gmatch(ST[7] or '', '(%d+):(%d+):?(%d*):?(%d*)') do
  h = tonumber(h)
  LB[h] = tonumber(b)
  BL[h], BS[h] = tonumber(l) or LB[h], tonumber(n) or 0
end
local GEN = 0
local OLD, DESC = {}, {0}
if L > 0 and AHEAD > 0 then
  -- A caller's clock far ahead of the server's would move the generation
  -- forward for everyone: refuse it.
  local t = tonumber(rcall('TIME')[1])
  if NOW > t + AHEAD then
    return redis.error_reply('NDCLOCK the caller\'s clock is ' .. string.format('%d', NOW - t) .. ' s ahead of the server\'s')
  end
end
if L > 0 then
  GEN = floor(NOW / L)
  local sg = tonumber(ST[2])
  if sg and sg > GEN then GEN = sg end
  local glive = GEN - NLIVE + 1
  local w = ST[6]
  if not w and not FRESH then
    -- A namespace written before w was kept: any live generation may
    -- hold data.
    local all = {}
    for h = glive, GEN - 1 do all[#all + 1] = h end
    w = concat(all, ',')
  end
  for h in string.gmatch(w or '', '%d+') do
    h = tonumber(h)
    if h >= glive and h < GEN and LB[h] then OLD[#OLD + 1] = h end
  end
  if sg and sg ~= GEN and sg >= glive and LB[sg] then OLD[#OLD + 1] = sg end
  local nw = concat(OLD, ',')
  if RO then -- read as a writer would, writing nothing
  elseif sg ~= GEN then rcall('HSET', CLOCK, 'g', GEN, 'w', nw)
  elseif nw ~= ST[6] then rcall('HSET', CLOCK, 'w', nw) end
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
-- FLD[n] is itos(n) for n < 64: the fields of the record hashes (below)
-- and the tables' numbers in key names. A literal for the reason BIN4 is.
local FLD = {[0] = '0',
  '1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12', '13', '14', '15',
  '16', '17', '18', '19', '20', '21', '22', '23', '24', '25', '26', '27', '28', '29', '30', '31',
  '32', '33', '34', '35', '36', '37', '38', '39', '40', '41', '42', '43', '44', '45', '46', '47',
  '48', '49', '50', '51', '52', '53', '54', '55', '56', '57', '58', '59', '60', '61', '62', '63'}
-- hstr is itos of a generation number, cached for the call: every key of
-- a generation names it.
local HSTR = {}
local function hstr(h)
  local x = HSTR[h]
  if not x then x = itos(h); HSTR[h] = x end
  return x
end

-- The current generation's layout, fixed by the first call that sees it
-- (scripts run one at a time on a shard, so the first writer wins and
-- every member uses it). The previous generation's band entries n (this
-- shard's share: S/B of them are a document), extrapolated to the whole
-- generation when it was first written after it began (first write t),
-- give the documents to size for; the rule is groupBits's in Go.
-- layouts returns clock field y: the layouts of live generations and of
-- the closed ones the sweep has still to walk.
local function layouts()
  local keep, lo = {}, GEN - NLIVE + 1
  local sw = tonumber(ST[3])
  if sw and sw < lo then lo = sw end
  for h, hb in pairs(LB) do
    if h >= lo then keep[#keep + 1] = itos(h) .. ':' .. itos(hb) .. ':' .. itos(BL[h]) .. ':' .. itos(BS[h]) end
  end
  return concat(keep, ',')
end
if not LB[GEN] and not RO then
  local l = MINB
  local sg, n, t0 = tonumber(ST[2]), tonumber(ST[8]), tonumber(ST[9])
  if L > 0 and sg and sg < GEN and n then
    local docs = n * S / B
    if t0 then
      local covered = (sg + 1) * L - t0
      if covered < L / 64 then covered = L / 64 end
      if covered < L then docs = docs * L / covered end
    end
    while l < GB and LOAD * 2 ^ l < docs do l = l + 1 end
  end
  LB[GEN], BL[GEN], BS[GEN] = l, l, 0
  rcall('HSET', CLOCK, 'y', layouts(), 'n', 0, 't', NOW)
end
-- NADD counts the band entries this call inserts into GEN (countEntries).
local NADD = 0

-- BIN4 writes a hex digit as 4 binary digits (bin, for the sweep). A
-- literal: built with a loop, it cost more than the rest of a call's setup
-- (every call runs the prelude).
local BIN4 = {
  ['0'] = '0000', ['1'] = '0001', ['2'] = '0010', ['3'] = '0011',
  ['4'] = '0100', ['5'] = '0101', ['6'] = '0110', ['7'] = '0111',
  ['8'] = '1000', ['9'] = '1001', a = '1010', b = '1011',
  c = '1100', d = '1101', e = '1110', f = '1111',
}
-- bin names group g of c bits (c ≤ 28) as the ops do: c binary digits.
local function bin(g, c)
  local s = string.gsub(string.format('%07x', g), '.', BIN4)
  return sub(s, 29 - c)
end

-- Key prefixes are built once per call and generation. A bucket group's
-- key is its table's prefix and the group's binary digits: the op's first
-- BL[h] digits, or BL[h] + 1 when those name a group that has split (one
-- character more in the passage table), cut from the op at position p of
-- ops. An id, I-Match or content group's key ends in the decimal digits
-- of 2^c + the group, its 32-bit value x's top c bits (x a number, or
-- decimal text; c is BL[h] or BL[h] + 1 alike).
local KB, KI = {}, {}
local function tpre(h, t)
  local row = KB[h]
  if not row then row = {}; KB[h] = row end
  local p = row[t]
  if not p then p = P .. 'b' .. hstr(h) .. ':' .. (FLD[t] or itos(t)) .. ':'; row[t] = p end
  return p
end
-- SPLITD[h] is the digits of generation h's first group at level BL[h]
-- that has not split, in this shard (nil: none has): an op whose first
-- BL[h] digits sort below it names a split group. The shard's groups at
-- level l are those of its routes, from GLO / 2^(GB - l) on. SPLIT0[h]
-- is SPLITD[h] and a '0': an op's first BL[h] + 1 digits sort below it
-- exactly when its first BL[h] sort below SPLITD[h], so the op's longer
-- group is cut once and compared as it is (SPLITP[h][c]: the same after
-- a passage op's first character, byte c).
local SPLITD, SPLIT0, SPLITP = {}, {}, {}
local function shardGroup(l) return floor(GLO / 2 ^ (GB - l)) end
local function setSplit(h)
  if BS[h] > 0 then SPLITD[h] = bin(shardGroup(BL[h]) + BS[h], BL[h]) else SPLITD[h] = nil end
  SPLIT0[h] = SPLITD[h] and SPLITD[h] .. '0'
  SPLITP[h] = {}
end
for h in pairs(BL) do setSplit(h) end
-- gdig returns the group part of the op at p of table t in generation h.
local function gdig(h, t, ops, p)
  local e = p + BL[h]
  local s0 = SPLIT0[h]
  if t == PT then
    e = e + 1
    if s0 then
      local row, c = SPLITP[h], byte(ops, p)
      local sc = row[c]
      if not sc then sc = sub(ops, p, p) .. s0; row[c] = sc end
      local d = sub(ops, p, e)
      if d < sc then return d end
    end
  elseif s0 then
    local d = sub(ops, p, e)
    if d < s0 then return d end
  end
  return sub(ops, p, e - 1)
end
local function tkey(h, t, ops, p) return tpre(h, t) .. gdig(h, t, ops, p) end
-- GK[t] is the current generation's key prefix of table t: tpre's for
-- GEN, cached per call, since every op names a key of the current
-- generation.
local GK = {}
local function gentable(t) GK[t] = tpre(GEN, t) end
local function gpre(kind, h)
  local row = KI[kind]
  if not row then row = {}; KI[kind] = row end
  local p = row[h]
  if not p then p = P .. kind .. hstr(h) .. ':'; row[h] = p end
  return p
end
-- GKC caches gkey's key names per prefix and group, for the call.
local GKC = {}
local function gkey(kind, h, x)
  if type(x) == 'string' then x = tonumber(x) end
  local c = BL[h]
  local g = floor(x / 2 ^ (32 - c))
  if BS[h] > 0 and g < shardGroup(c) + BS[h] then
    c = c + 1
    g = floor(x / 2 ^ (32 - c))
  end
  local p, n = gpre(kind, h), 2 ^ c + g
  local row = GKC[p]
  if not row then row = {}; GKC[p] = row end
  local k = row[n]
  if not k then k = p .. itos(n); row[n] = k end
  return k
end
local function ikey(h, x) return gkey('i', h, x) end
local function xkey(h, x) return gkey('x', h, x) end
local function ckey(h, x) return gkey('e', h, x) end

-- Generation keys get their expiry when their generation has closed: the
-- sweep walks every key name a closed generation can have in this shard
-- (the band and SimHash tables, the PSPLIT parts of the passage table,
-- ids, digests and contents × the shard's groups at the generation's
-- last level and splits) and sets EXPIREAT (gen+1)·L + R, BUDGET names
-- per call. A
-- key in the past is deleted. A generation without a layout was never
-- written in this shard: it has no keys.
local SWEPT = true
local function sweep(sw, u, budget)
  while budget > 0 and sw < GEN do
    local b = BL[sw]
    if not b then
      local nx = GEN
      for h in pairs(LB) do if h > sw and h < nx then nx = h end end
      sw, u = nx, 0
    else
      local exp = (sw + 1) * L + R
      -- The shard's groups: m at level l, of which the first bs split.
      local l, bs = b, BS[sw]
      local blo = shardGroup(l)
      local m = floor((GHI - 1) / 2 ^ (GB - l)) + 1 - blo
      if GHI <= GLO then m = 0 end
      local nb = m + bs
      local total = (PT + PSPLIT + 3) * nb
      local stop = u + budget
      if stop > total then stop = total end
      for k = u, stop - 1 do
        local tt, i = floor(k / nb), k % nb
        local g, c = blo + bs + i, l
        if i >= m - bs then g, c = 2 * blo + i - (m - bs), l + 1 end
        local key
        if tt < PT then key = tpre(sw, tt) .. bin(g, c)
        elseif tt < PT + PSPLIT then key = tpre(sw, PT) .. sub(SPLITA, tt - PT + 1, tt - PT + 1) .. bin(g, c)
        else key = gpre(sub('ixe', tt - PT - PSPLIT + 1, tt - PT - PSPLIT + 1), sw) .. itos(2 ^ c + g) end
        rcall('EXPIREAT', key, exp)
      end
      budget = budget - (stop - u)
      u = stop
      if u >= total then sw = sw + 1; u = 0 end
    end
  end
  rcall('HSET', CLOCK, 's', sw, 'u', u)
  SWEPT = sw >= GEN
end
if L > 0 and not RO then
  local sw = tonumber(ST[3])
  if not sw then rcall('HSET', CLOCK, 's', GEN)
  elseif sw < GEN then sweep(sw, tonumber(ST[4]) or 0, BUDGET) end
end

local function pop32(x)
  x = x - bit.band(bit.rshift(x, 1), 0x55555555)
  x = bit.band(x, 0x33333333) + bit.band(bit.rshift(x, 2), 0x33333333)
  x = bit.band(x + bit.rshift(x, 4), 0x0F0F0F0F)
  return x % 255
end

-- fnv32 is FNV-1a 32 (index.fnv32 in Go): it places an id in its group.
-- A split hashes every id of a group, so it is written for speed: the
-- bytes are read 4,096 at a time (string.byte returns them on Lua's C
-- stack), the xor touches the low byte only, and the product by 16777619
-- = 2^24 + 403, modulo 2^32, is exact in a double: (h mod 2^8)·2^24 +
-- h·403 < 2^42.
local function fnv32(s)
  local h, n = 2166136261, #s
  for i = 1, n, 4096 do
    local bs = {byte(s, i, math.min(i + 4095, n))}
    for j = 1, #bs do
      local lo = h % 256
      h = h - lo + bxor(lo, bs[j])
      h = ((h % 256) * 16777216 + h * 403) % 4294967296
    end
  end
  return h
end

local function lenstr(x)
  if x then return spack('>i4', #x) .. x end
  return spack('>i4', -1)
end

-- Linear growth. A generation's bucket groups split one at a time as its
-- band entries grow, so that a band table's groups hold about LOAD
-- buckets on average (LOAD/2 to 2·LOAD) whatever the documents stored:
-- the shard's groups at level BL split in order, each into the two groups
-- of one more digit, and when all have, the level is one more. A split
-- moves the fields of one group of every table (the PSPLIT parts of the
-- passage table too) and of the ids and lanes by their bit for the next
-- digit (side): a bucket's field holds the key's bits from MINB on (FW
-- bytes; an overflow count is 'o' and a field), an I-Match field the
-- whole digest, a content field the whole digest (and '+' for its
-- copies), an id is hashed (fnv32). A hash in listpack encoding (the
-- common case) is copied whole and each copy loses the other side's
-- fields (COPY, RENAME, HDEL): only its field names pass through Lua, not
-- its values, and the halves keep the fields' order and the encoding a
-- listpack would have. A hash in hashtable encoding (a value over
-- hash-max-listpack-value, or too many fields) is read whole and written
-- as two, so that a half that fits a listpack is one.
local function hdel(k, fs)
  -- In chunks of 512 fields: unpack's arguments live on Lua's C stack.
  for i = 1, #fs, 512 do rcall('HDEL', k, unpack(fs, i, math.min(i + 511, #fs))) end
end
--
-- A field's side is its bit for the next digit, at byte pos of the field
-- (negative: from its end); the bits above it in that byte are digits
-- every field of the group shares (its group's last ones), so the field
-- is on side 1 exactly when that byte is at least lo, one comparison.
-- An id (side, a function) is hashed.
local function splitKey(src, d0, d1, pos, lo, side)
  local enc = rcall('OBJECT', 'ENCODING', src)
  if not enc then return end
  if enc == 'listpack' then
    local r = rcall('HKEYS', src)
    local a, b, na, nb = {}, {}, 0, 0
    for i = 1, #r do
      local f = r[i]
      local one
      if side then one = side(f) else one = byte(f, pos) >= lo end
      if one then nb = nb + 1; b[nb] = f else na = na + 1; a[na] = f end
    end
    if nb == 0 then rcall('RENAME', src, d0)
    elseif na == 0 then rcall('RENAME', src, d1)
    else
      rcall('COPY', src, d1, 'REPLACE')
      rcall('RENAME', src, d0)
      hdel(d0, b)
      hdel(d1, a)
    end
    return
  end
  local r = rcall('HGETALL', src)
  local a, b = {}, {}
  for i = 1, #r, 2 do
    local f = r[i]
    local dst = a
    local one
    if side then one = side(f) else one = byte(f, pos) >= lo end
    if one then dst = b end
    dst[#dst + 1] = f
    dst[#dst + 1] = r[i + 1]
  end
  if #b == 0 then rcall('RENAME', src, d0)
  elseif #a == 0 then rcall('RENAME', src, d1)
  else
    rcall('DEL', src)
    -- In chunks of 256 fields: unpack's arguments live on Lua's C stack.
    for _, dv in ipairs({{d0, a}, {d1, b}}) do
      local d, fv = dv[1], dv[2]
      for i = 1, #fv, 512 do rcall('HSET', d, unpack(fv, i, math.min(i + 511, #fv))) end
    end
  end
end
-- splitGroup splits generation h's next group (BL[h], BS[h]). A bucket
-- field holds the key's bits from MINB on: the next digit is bit l − MINB
-- of the field, at the same place from the end of an overflow count's
-- field ('o' and the field). An I-Match or content field holds the 32-bit
-- value at bytes 17 and 13 (a content lane's copies, field f+, too).
local function splitGroup(h)
  local l = BL[h]
  local g = shardGroup(l) + BS[h]
  local d = bin(g, l)
  -- lo: the group's last s digits, then a 1, in a byte.
  local function low(s) return (g % 2 ^ s) * 2 ^ (8 - s) + 2 ^ (7 - s) end
  local fpos, flo = floor((l - MINB) / 8) + 1 - FW - 1, low((l - MINB) % 8)
  for t = 0, PT - 1 do
    local k = tpre(h, t) .. d
    splitKey(k, k .. '0', k .. '1', fpos, flo)
  end
  local pp = tpre(h, PT)
  for c = 1, PSPLIT do
    local k = pp .. sub(SPLITA, c, c) .. d
    splitKey(k, k .. '0', k .. '1', fpos, flo)
  end
  local half = 2 ^ (31 - l)
  local vpos, vlo = floor(l / 8), low(l % 8)
  local sides = {
    i = {0, 0, function(f) return floor(fnv32(f) / half) % 2 == 1 end},
    x = {17 + vpos, vlo},
    e = {13 + vpos, vlo},
  }
  for kind, sd in pairs(sides) do
    local p = gpre(kind, h)
    splitKey(p .. itos(2 ^ l + g), p .. itos(2 ^ (l + 1) + 2 * g), p .. itos(2 ^ (l + 1) + 2 * g + 1), sd[1], sd[2], sd[3])
  end
end
-- countEntries adds the band entries this call inserted into GEN to its
-- count (clock field n), then splits the generation's groups while a
-- band table's groups in this shard hold more than LOAD entries on
-- average: one group a call, two when the shard is still a whole group
-- behind (a call of many documents; a split moves about PT + PSPLIT + 3
-- hashes of LOAD/2 to 2·LOAD fields, a few ms), so a shard ends a call
-- less than a group behind. It runs last, after every bucket of the call
-- is written.
local function countEntries()
  if NADD == 0 then return end
  local n = rcall('HINCRBY', CLOCK, 'n', NADD) / B
  local split = 0
  while BL[GEN] < GB and split < 2 do
    local l = BL[GEN]
    local m = floor((GHI - 1) / 2 ^ (GB - l)) + 1 - shardGroup(l)
    local behind = n / LOAD - (m + BS[GEN])
    if behind <= 0 or (split == 1 and behind < 1) then break end
    splitGroup(GEN)
    split = split + 1
    BS[GEN] = BS[GEN] + 1
    if BS[GEN] >= m then BL[GEN], BS[GEN] = l + 1, 0 end
  end
  if split > 0 then
    setSplit(GEN)
    rcall('HSET', CLOCK, 'y', layouts())
  end
end


-- Per-document records live in hashes of 64 consecutive local seqs. The
-- field is returned as text from FLD: a number given to redis.call is
-- converted by Lua's own number-to-string conversion (printf's %.14g) and
-- interned on every call (an HGET with a numeric field cost ~1.5 µs more,
-- index/BENCHMARKS.md section 10). Seqs written as values go through itos
-- for the same reason (and %.14g would write a seq of 15 digits in
-- exponent form).
-- RKC caches the record hashes' key names per kind and hash number, for
-- the call (a call's documents share a few hashes).
local RKC = {}
local function rkey(kind, s)
  local ls = floor(s / S)
  local n = floor(ls / 64)
  local row = RKC[kind]
  if not row then row = {}; RKC[kind] = row end
  local k = row[n]
  if not k then k = P .. kind .. itos(n); row[n] = k end
  return k, FLD[ls % 64]
end

-- Resolution of seqs to external ids; false marks a deleted or expired
-- document (its meta record is gone).
local RCACHE = {}
local function resolve(s)
  local id = RCACHE[s]
  if id == nil then
    local k, f = rkey('m', s)
    id = rcall('HGET', k, f)
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
-- extend makes key k live at least until exp (unix seconds): one command
-- when it already does, as a record hash written again in its generation
-- mostly does (EXPIRETIME: -1 none, -2 no key).
local function extend(k, exp)
  local e = rcall('EXPIRETIME', k)
  if e < exp and e ~= -2 then rcall('EXPIREAT', k, exp) end
end
local function flush(w)
  for k, l in pairs(w) do
    rcall('HSET', k, unpack(l))
    if R > 0 then extend(k, EXP) end
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
    local s = rcall('HGET', ikey(h, ig), id)
    if s and not ismark(s) then return tonumber(s), true, false end
    mark = mark or s
  end
  if mark and origin ~= '' and gone(origin, mark) then return 0, false, true end
  rcall('HSET', ikey(GEN, ig), id, itos(seq))
  return seq, false, false
end

-- idSeq returns the seq of a live document stored under id (id group ig),
-- looked up newest generation first; nil for none.
local function idSeq(id, ig)
  for _, h in ipairs(DESC) do
    local s = rcall('HGET', ikey(h, ig), id)
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
  return rcall('HGET', k, f)
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
    if w == 6 then s = sunpack('>I6', val, p)
    else s, hi, lo = sunpack('>I6I4I4', val, p) end
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
  if add then TRUNC = TRUNC + rcall('HINCRBY', k, 'o' .. f, 1) - 1
  else TRUNC = TRUNC + (tonumber(rcall('HGET', k, 'o' .. f)) or 0) end
end

-- A common key (LSH and passage tables: COMMON_DOCS documents hold it) is an
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
  local s = sunpack('>I6', val, 2)
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
  local p = {spack('>I2', #HOTA)}
  for _, j in ipairs(HOTA) do p[#p + 1] = spack('>I2B', j, HOTD[PT + 1 + j]) end
  return concat(p)
end

-- tableOp looks up (and unless MODE 1 inserts into) the bucket of table t
-- of the op at position op of ops (its group's digits, cut per
-- generation by tkey) and field f (FW bytes) in every live generation; its members count under hit key hk (the table, or one per
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
    local val = rcall('HGET', tkey(h, t, ops, op), f)
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
  local k = kp .. gdig(GEN, t, ops, op)
  local lim = sim and MAXS or COMMON_DOCS
  if MODE == 0 and t < B then NADD = NADD + 1 end
  if MODE == 1 then
    local val = rcall('HGET', k, f)
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
      val = rcall('HGET', k, f)
      if not val then
        GUESS[via] = GUESS[via] * 0.75 - 0.25
        rcall('HSET', k, f, me)
        return
      end
    else
      if rcall('HSETNX', k, f, me) == 1 then
        GUESS[via] = GUESS[via] * 0.75 - 0.25
        return
      end
      val = rcall('HGET', k, f)
    end
    GUESS[via] = GUESS[via] * 0.75 + 0.25
  else
    val = rcall('HGET', k, f)
  end
  val = val or ''
  if iscommon(val, w) then
    local n = commonHit(val, hk, via, false)
    local ex = sub(val, 2, 7)
    if ex == NOEX then
      rcall('HSET', k, f, cmark(me, n + 1)) -- the deleted exemplar's successor
    elseif n < 255 then rcall('HSET', k, f, cmark(ex, n + 1)) end
    return
  end
  if oc then
    scan(val, w, nil, hk, via)
    rcall('HSET', k, f, cmark(me, oc + 1))
    return
  end
  local present = scan(val, w, nil, hk, via)
  PEND[#PEND + 1] = {k, f, val, w, lim, old, present, me, hk}
end

local function has(val, s, w)
  for p = 1, #val, w do
    if sunpack('>I6', val, p) == s then return true end
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
    local s = sunpack('>I6', val, p)
    if s == SELF or resolve(s) then parts[#parts + 1] = string.sub(val, p, p + w - 1) end
  end
  return concat(parts)
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
        if dead[sunpack('>I6', val, p)] then drop = true
        else parts[#parts + 1] = string.sub(val, p, p + w - 1) end
      end
      if drop then nv = concat(parts) end
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
      if nv ~= val then rcall('HSET', k, f, nv) end
    elseif w == 6 and #nv + w >= w * lim then
      local ex = me
      if #nv > 0 then ex = sub(nv, 1, 6) end
      rcall('HSET', k, f, cmark(ex, #nv / 6 + 1))
    elseif #nv >= w * lim then
      overflow(k, f, true, hk)
      if nv ~= val then rcall('HSET', k, f, nv) end
    else
      rcall('HSET', k, f, nv .. me)
    end
  end
end

-- exactOp looks up the I-Match digest d (and unless MODE 1 records SELF
-- as its first document). With check, a hit must resolve to a live
-- document (single node); otherwise resolution is left to the caller.
local function exactOp(d, check)
  local g = sunpack('>I4', d, 17)
  local f = d
  local found
  for _, h in ipairs(OLD) do
    local s = tonumber(rcall('HGET', xkey(h, g), f))
    if s and s ~= SELF and (not LOWER or s < SELF) and (not check or resolve(s)) then found = s; break end
  end
  if found then
    if MODE ~= 1 then rcall('HSETNX', xkey(GEN, g), f, itos(REFRESH == 1 and found or SELF)) end
    return found, true
  end
  if not LB[GEN] then return 0, false end -- RO: no current generation yet
  local k = xkey(GEN, g)
  if MODE == 1 then
    local s = tonumber(rcall('HGET', k, f))
    if s and s ~= SELF and (not LOWER or s < SELF) and (not check or resolve(s)) then return s, false end
    return 0, false
  end
  if rcall('HSETNX', k, f, itos(SELF)) == 1 then return 0, false end
  local s = tonumber(rcall('HGET', k, f))
  if s ~= SELF and (not check or resolve(s)) then return s, false end
  if s ~= SELF then rcall('HSET', k, f, itos(SELF)) end
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
  local g = sunpack('>I4', c, 13)
  local f = c
  local function usable(s)
    return s and s ~= SELF and (not LOWER or s < SELF) and (not check or resolve(s))
  end
  local found, old = 0, false
  for _, h in ipairs(OLD) do
    local s = tonumber(rcall('HGET', ckey(h, g), f))
    if usable(s) then found, old = s, true; break end
  end
  if not LB[GEN] then return found, old, found > 0, 0 end -- RO: no current generation yet
  local k = ckey(GEN, g)
  local v = rcall('HMGET', k, f, f .. '+')
  local cur = tonumber(v[1])
  if usable(cur) then
    if found == 0 then found = cur end
    local me = spack('>I6', SELF)
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
      rcall('HSET', k, f .. '+', list)
    end
    return found, old, true, cur
  end
  if MODE == 1 then return found, old, found > 0, cur or 0 end
  if MODE == 2 and cur == SELF then return found, old, false, cur end -- registered by its first attempt
  if REFRESH == 1 and found > 0 then rcall('HSET', k, f, itos(found))
  else rcall('HSET', k, f, itos(SELF)) end
  return found, old, false, cur or 0
end

-- refreshRecords restarts the lifetime of document s (found in an older
-- generation): its record hashes are extended and its id copied into the
-- current generation.
local function refreshRecords(s, id)
  for _, kind in ipairs(RECORDS) do
    local k = rkey(kind, s)
    rcall('EXPIREAT', k, EXP, 'GT')
  end
  rcall('HSET', ikey(GEN, fnv32(id)), id, itos(s))
end

-- A document's lookup record (recall.go) keeps what its insertion's
-- lookup found, for a replay that finds no verdict: version 1 · copy seq
-- u48 · imatch seq u48 · withheld u32 · common u16 · dropped u32 · ncand
-- u16 · ncand × (seq u48 · via u8 · hits u16) · nhot u16 · nhot × (anchor
-- index u16 · documents u8).
local function lookupRecord(cp, ex, trunc, hot, dropped, cands, hotl)
  return spack('>BI6I6I4I2I4I2', 1, cp, ex, trunc, hot, dropped, #cands) .. concat(cands) .. hotl
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
  return rcall('HGET', k, f)
end
local function recall(rec)
  local _, cp, ex, trunc, hot, dropped, n, p = sunpack('>BI6I6I4I2I4I2', rec)
  local cands, m = {}, 0
  for _ = 1, n do
    local c, v, h
    c, v, h, p = sunpack('>I6BI2', rec, p)
    local cid = liveSeq(c) and resolve(c)
    if cid then
      m = m + 1
      cands[#cands + 1] = spack('>I6BI2', c, v, h) .. lenstr(cid)
    end
  end
  if cp > 0 and not liveSeq(cp) then cp = 0 end
  if ex > 0 and not liveSeq(ex) then ex = 0 end
  return cp, ex, trunc, hot, dropped, m, concat(cands), sub(rec, p)
end
