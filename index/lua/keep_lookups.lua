-- luaKeepLookups writes the lookup records of documents inserted in
-- cluster mode (per record shard, after their lookups were resolved):
-- ARGV[7…] = (seq record)×n, for documents still stored with no verdict
-- recorded yet. Reply: "".
for a = 7, #ARGV, 2 do
  local s = tonumber(ARGV[a])
  if liveSeq(s) and not verdict(s) then defer(WL, 'l', s, ARGV[a + 1]) end
end
flush(WL)
return ''
