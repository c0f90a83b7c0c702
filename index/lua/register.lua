-- luaRegister is cluster phase 2, per id shard (a document's records
-- live in its id's shard). ARGV[7…], per document: id idg seq features
-- keys origin. Reply per document: status u8 (0 new, 1 replay, 3 gone:
-- a record read again after its document was removed) · seq u48 ·
-- verdict · lookup record (each i32 length, −1 = none; the lookup record
-- only for a replay without a verdict).
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
  out[#out + 1] = spack('>BI6', isgone and 3 or (replay and 1 or 0), self) .. lenstr(vd) .. lenstr(lrec)
end
flush(WM)
flush(WF)
flush(WK)
flush(WO)
return concat(out)
