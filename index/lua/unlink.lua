-- luaUnlink removes documents' keys. ARGV[7] is the mode.
--
-- Mode 'u' (unlink): ARGV[8] is scanmax, ARGV[9] workmax, then per
-- document, ARGV[10…]:
--
--   seq id idg ops gops imatch content
--
-- ops are as in luaBuckets (table u16, then the op: group digits and
-- field), for the SimHash tables and records of version 3 and older;
-- gops are groups of the band and passage tables (table u16, then the
-- group digits, without a field: records of version 4); imatch and
-- content the digests or "". In every live generation the document's
-- member goes from each bucket of ops, and from every bucket of each
-- group of gops (the group hash is read whole, one HSCAN from cursor 0
-- with COUNT scanmax: a listpack, which a group of about 64 buckets is,
-- comes back whole; the seq names one document, so exactly its own
-- members go, several anchors in one group included); a hash field left
-- empty is deleted, a group left empty goes with it; a common key whose
-- exemplar it is keeps its mark and count with the exemplar NOEX; and
-- the I-Match and content lane entries that name it go. A group that
-- HSCAN did not return whole (more than about scanmax fields: a
-- generation sized for far fewer documents than it got) is returned with
-- its cursor, and the caller walks the rest in chunks (mode 's'). With an
-- id (not ""), the id mappings that name seq and the document's records
-- go too, unless a group of the document was returned. The call's work
-- is bounded: each bucket read counts 1, each group read 4 plus its
-- fields; once it reaches workmax, the call reads no more groups: the
-- document at hand stops before its next group (its lanes and id left
-- for a later call) and the documents after it are not started. Reply:
-- per document one byte, '1' when the id named a stored document, '0'
-- when not, '-' when no id was given, 'd' when a group was returned and
-- the id left for later, 'r' when it stopped before a group, 'n' when it
-- was not started; then per group returned 's', the document's position
-- in the call (u16), the key and the cursor (each an i32 length, then
-- the bytes), and per document stopped 'r', its position (u16) and the
-- offset in its gops of the group it stopped before (u32, from 1).
--
-- Mode 's' (scan): ARGV[8…] = (key cursor seq)×n: one HSCAN step
-- (COUNT 256) of each group hash from cursor, removing the document's
-- members from what it returns as mode 'u' does. Reply: per key the
-- next cursor (i32 length, then the cursor; "0" at the end).
local out, later = {}, {}
local find = string.find
local function lane(k, f, s)
  if tonumber(rcall('HGET', k, f)) == s then rcall('HDEL', k, f) end
end
-- laneRep takes seq s out of content lane entry f of hash k: the recent
-- copies (field f+, copyOp) drop it and the copies gone; when s is the
-- representative, the newest copy left takes its place, so later copies
-- of a text still stored find it. In cluster mode (S > 1) the copies'
-- records live in other shards: the list keeps them (a copy removed
-- leaves the list itself, by its own keys record), and a copy that
-- expired meanwhile is a representative readers find dead.
local function laneRep(k, f, s)
  local v = rcall('HMGET', k, f, f .. '+')
  local list, keep = v[2] or '', {}
  for p = 1, #list - 5, 6 do
    local c = sunpack('>I6', list, p)
    if c ~= s and (S > 1 or resolve(c)) then keep[#keep + 1] = sub(list, p, p + 5) end
  end
  if tonumber(v[1]) == s then
    local nx = table.remove(keep)
    if nx then rcall('HSET', k, f, itos(sunpack('>I6', nx)))
    else rcall('HDEL', k, f) end
  end
  local nl = concat(keep)
  if nl ~= list then
    if #nl == 0 then rcall('HDEL', k, f .. '+') else rcall('HSET', k, f .. '+', nl) end
  end
end
-- drop removes member me from field f, of value val, of the band or
-- passage group k, where find found it at q: the 6-byte entries equal to
-- it, or the exemplar of a common mark.
local function drop(k, f, val, me, q)
  if iscommon(val, 6) then
    if sub(val, 2, 7) == me then rcall('HSET', k, f, 'C' .. NOEX .. sub(val, 8, 8)) end
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
    if #val == 0 then rcall('HDEL', k, f) else rcall('HSET', k, f, val) end
  end
end
-- dropAll applies drop to the fields and values fv (HGETALL, HSCAN) of
-- group k that hold me; the guard's o-fields (FW + 1 bytes) are left. Most
-- values do not hold me: a plain find each.
local function dropAll(k, fv, me)
  for i = 2, #fv, 2 do
    local q = find(fv[i], me, 1, true)
    if q and #fv[i - 1] == FW then drop(k, fv[i - 1], fv[i], me, q) end
  end
end
if ARGV[7] == 's' then
  for a = 8, #ARGV, 3 do
    local k, me = ARGV[a], spack('>I6', tonumber(ARGV[a + 2]))
    local r = rcall('HSCAN', k, ARGV[a + 1], 'COUNT', 256)
    dropAll(k, r[2], me)
    out[#out + 1] = lenstr(r[1])
  end
  return concat(out)
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
    local me = spack('>I6', s)
    local p = 1
    while p < #ops do
      local t = sunpack('>I2', ops, p)
      local w = (t >= B and t < PT) and 14 or 6
      local gw = GB
      if t == PT then gw = GB + 1 end
      local op, f = p + 2, sub(ops, p + 2 + gw, p + 1 + gw + FW)
      p = p + 2 + gw + FW
      for _, h in ipairs(DESC) do
        local k = tkey(h, t, ops, op)
        local val = rcall('HGET', k, f)
        WORK = WORK + 1
        if val then
          if iscommon(val, w) then
            if sub(val, 2, 7) == me then rcall('HSET', k, f, 'C' .. NOEX .. sub(val, 8, 8)) end
          else
            local parts, found = {}, false
            for q = 1, #val, w do
              if sub(val, q, q + 5) == me then found = true
              else parts[#parts + 1] = sub(val, q, q + w - 1) end
            end
            if found then
              if #parts == 0 then rcall('HDEL', k, f)
              else rcall('HSET', k, f, concat(parts)) end
            end
          end
        end
      end
    end
    local deferred, stop = false, false
    p = 1
    while p < #gops do
      if WORK >= WORKMAX then stop = true; break end
      local t = sunpack('>I2', gops, p)
      if t >= B and t < PT then return redis.error_reply('ERR unlink: a SimHash table by group') end
      local op = p + 2
      p = op + GB
      if t == PT then p = p + 1 end
      for _, h in ipairs(DESC) do
        local k = tkey(h, t, gops, op)
        local r = rcall('HSCAN', k, 0, 'COUNT', SCANMAX)
        WORK = WORK + 4 + #r[2] / 2
        dropAll(k, r[2], me)
        if r[1] ~= '0' then
          later[#later + 1] = 's' .. spack('>I2', doc) .. lenstr(k) .. lenstr(r[1])
          deferred = true
        end
      end
    end
    if stop then
      later[#later + 1] = 'r' .. spack('>I2I4', doc, p)
      out[#out + 1] = 'r'
    else
      if #im > 0 then
        local g, f = sunpack('>I4', im, 17), im
        for _, h in ipairs(DESC) do lane(xkey(h, g), f, s) end
      end
      if #ct > 0 then
        local g, f = sunpack('>I4', ct, 13), ct
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
        local origin = r == '1' and rcall('HGET', ok, of)
        if origin then rcall('HSET', ikey(GEN, ig), id, '-' .. origin) end
        for _, kind in ipairs(RECORDS) do
          local k, f = rkey(kind, s)
          rcall('HDEL', k, f)
        end
        RCACHE[s] = false -- the same id twice in one call: removed once
      end
      out[#out + 1] = r
    end
  end
  doc = doc + 1
end
return concat(out) .. concat(later)
