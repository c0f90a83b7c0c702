-- luaIDs looks ids up as a replay does, for Lookup in cluster mode (per
-- id shard, writing nothing): ARGV[7…] = (id idg)×n. Reply per id: seq
-- u48 (0: not stored) · verdict · lookup record (each i32 length, −1 =
-- none; the lookup record only when there is no verdict).
local out = {}
for a = 7, #ARGV, 2 do
  local s = idSeq(ARGV[a], ARGV[a + 1])
  local vd, lrec = false, false
  if s then
    vd = verdict(s)
    if not vd then lrec = lookupOf(s) end
  end
  out[#out + 1] = spack('>I6', s or 0) .. lenstr(vd) .. lenstr(lrec)
end
return concat(out)
