-- luaLookupInsert is the single-node LookupInsert: registration, the
-- content lane, every table and the I-Match lane of every document,
-- ranking, resolution and writes, each document in one atomic step, in
-- order. ARGV[7] is the call's time budget in µs (0: none): once the
-- documents decided so far have taken it, the call ends after the current
-- document and leaves the rest to the caller's next round trip. The calls
-- of one round trip (a pipeline) share KEYS[2], the round's stop key,
-- which a call that ended early sets unless it is the round's last: the
-- later calls then do nothing (reply ""), so no document is decided before
-- an earlier one of the batch, and the last removes the key. ARGV[8]:
-- bit 1 set when an earlier call of the round precedes this one, bit 2
-- when this is the round's last (look-ups, flag 16, write nothing and do
-- not depend on one another: each of their calls is sent as a round's
-- last and only, so none sets or reads the key). ARGV[9…], per document:
--
--   id idg flags features keys ops [fingerprint] [digest] [content]
--
-- idg is the id's 32-bit group value (decimal); ops the document's bucket
-- ops (appendOp: the group's GB binary digits, after a SPLITA character for an anchor,
-- then the field's FW bytes): the B bands, then with a SimHash the k+1
-- blocks, then one per distinct anchor; fingerprint the SimHash's 8 bytes. flags: 1 SimHash present,
-- 2 I-Match digest present, 4 content digest present, 8 anchors present,
-- 16 look up only (Lookup: nothing registered or written).
-- Reply: one string holding the documents decided, u16, then per document
-- (big-endian):
--
--   status u8 (0 new, 1 replay) · seq u48 · withheld u32 · hot u16 ·
--   verdict (i32 length, −1 = none) · copy seq u48 · copy id (i32 length) ·
--   imatch seq u48 · imatch id (i32 length) · dropped u32 · ncand u16 ·
--   ncand × (seq u48 · via u8 · hits u16 · id (i32 length)) ·
--   nhot u16 · nhot × (hot anchor u16 · documents u8)
--
-- The candidates' features are not read here: the caller reads them with
-- plain HMGETs after the call (readFeatures). A features value read in Lua
-- becomes a Lua string, hashed byte by byte when it is interned and swept
-- by the collector later, which cost more than the HGET itself.
LOWER, LOCAL = true, true
local ORDER = tonumber(ARGV[8])
local LAST = ORDER >= 2
if ORDER % 2 == 1 and rcall('EXISTS', KEYS[2]) == 1 then
  if LAST then rcall('DEL', KEYS[2]) end
  return ''
end
local WMAX = tonumber(ARGV[7])
local function usec()
  local t = rcall('TIME')
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
  local check = floor(flags / 16) % 2 == 1
  local hasSim, hasIM = flags % 2 == 1, floor(flags / 2) % 2 == 1
  local hasC = floor(flags / 4) % 2 == 1
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
    out[#out + 1] = spack('>BI6I4I2', 3, 0, 0, 0) .. lenstr(false) .. spack('>I6', 0) .. lenstr(false) ..
      spack('>I6', 0) .. lenstr(false) .. spack('>I4I2I2', 0, 0, 0)
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
    local me = spack('>I6', self)
    local p = 1
    for t = 0, B - 1 do
      tableOp(t, ops, p, sub(ops, p + GB, p + GB + FW - 1), false, me, t)
      p = p + GB + FW
    end
    if hasSim then
      QHI, QLO = sunpack('>I4I4', ARGV[sa])
      local sme = me .. ARGV[sa]
      for t = B, PT - 1 do
        tableOp(t, ops, p, sub(ops, p + GB, p + GB + FW - 1), true, sme, t)
        p = p + GB + FW
      end
    end
    local j = 0
    local pw = GB + 1
    while p < #ops do
      j = j + 1
      tableOp(PT, ops, p, sub(ops, p + pw, p + pw + FW - 1), false, me, PT + j)
      p = p + pw + FW
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
      lc[#lc + 1] = spack('>I6BI2', s, CAND[s], HITS[s])
      cands[#cands + 1] = lc[#lc] .. lenstr(cid)
      if OLDC[s] then refreshRecords(s, cid) end
    else
      dead = dead or {}
      dead[s] = true
    end
  end
  finish(dead)
  local status, cand = replay and 1 or 0, concat(cands)
  local hotl
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
  out[#out + 1] = spack('>BI6I4I2', status, self, TRUNC, HOT) .. lenstr(vd) ..
    spack('>I6', cp) .. lenstr(cpid) .. spack('>I6', ex) .. lenstr(exid) ..
    spack('>I4I2', dropped, n) .. cand .. hotl
  until true
  if WMAX > 0 and a <= #ARGV and usec() - T0 >= WMAX then
    -- PX: a round whose pipeline broke off does not leave it for long.
    if not LAST then rcall('SET', KEYS[2], '1', 'PX', 60000) end
    break
  end
end
flush(WM)
flush(WF)
flush(WK)
flush(WL)
flush(WO)
countEntries()
if q ~= q0 then rcall('HSET', CLOCK, 'q', q) end
return spack('>I2', #out) .. concat(out)
