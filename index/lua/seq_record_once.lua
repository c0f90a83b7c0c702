-- luaSeqRecordOnce writes one per-document record kind KIND ('v'
-- verdict, 's' source, 't' template; set, with FOUND, by the line Go puts
-- before the prelude) of documents by Seq: ARGV[7…] = (seq record)×n,
-- with the expiry of the document's meta record. A verdict is written when
-- none is recorded (the first write wins) and drops the document's lookup
-- record; a found record (FOUND: found.go) when none is recorded or its
-- finder (the first 6 bytes, big-endian) comes after the new one's.
-- Reply: per seq one byte, 1 when stored or already set, 0 when the
-- document is not stored.
local out, exps, lrm = {}, {}, {}
for a = 7, #ARGV, 2 do
  local s = tonumber(ARGV[a])
  if s and s > 0 and liveSeq(s) then
    local k, f = rkey(KIND, s)
    if FOUND then
      local cur = rcall('HGET', k, f)
      if not cur or sunpack('>I6', ARGV[a + 1]) < sunpack('>I6', cur) then
        rcall('HSET', k, f, ARGV[a + 1])
      end
    else
      rcall('HSETNX', k, f, ARGV[a + 1])
      local lk, lf = rkey('l', s)
      lrm[lk] = lrm[lk] or {}
      table.insert(lrm[lk], lf)
    end
    if R > 0 and not exps[k] then
      exps[k] = true
      local exp = rcall('EXPIRETIME', (rkey('m', s)))
      if exp > 0 then extend(k, exp) end
    end
    out[#out + 1] = '1'
  else
    out[#out + 1] = '0'
  end
end
for k, fs in pairs(lrm) do rcall('HDEL', k, unpack(fs)) end
return concat(out)
