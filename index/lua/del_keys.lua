-- luaDelKeys reads what a delete needs: ARGV[7…] = (id idg)×n. Reply per
-- id: seq u48 (0: not stored) · its keys record (i32 length, −1 = none:
-- a document written before keys records were kept): its 'k' record, or
-- else its features record when that carries the keys record (first byte
-- 0, featKeys), whole.
local out = {}
for a = 7, #ARGV, 2 do
  local s = idSeq(ARGV[a], ARGV[a + 1])
  local kr = false
  if s then
    local k, f = rkey('k', s)
    kr = rcall('HGET', k, f)
    if not kr then
      k, f = rkey('f', s)
      kr = rcall('HGET', k, f)
      if kr and byte(kr, 1) ~= 0 then kr = false end
    end
  end
  out[#out + 1] = spack('>I6', s or 0) .. lenstr(kr)
end
return concat(out)
