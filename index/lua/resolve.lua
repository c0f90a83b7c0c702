-- luaResolve is cluster phase 4, per record shard: ARGV[7…] = (seq
-- refresh)×n. Reply: per seq its id (i32 length, −1 = gone).
local out = {}
for a = 7, #ARGV, 2 do
  local s = tonumber(ARGV[a])
  local id = resolve(s)
  if id and ARGV[a + 1] == '1' then refreshRecords(s, id) end
  out[#out + 1] = lenstr(id)
end
return concat(out)
