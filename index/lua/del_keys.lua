-- luaDelKeys reads what a delete needs: ARGV[7…] = (id idg)×n. Reply per
-- id: seq u48 (0: not stored) · its keys record (i32 length, −1 = none:
-- a document written before keys records were kept).
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
