-- luaCopies is the content lane of cluster phase 2, per content shard.
-- ARGV[7…], per document: seq mode content. Reply per document: found seq
-- u48 · found-in-older-generation u8 · current representative seq u48
-- (0 = none). The caller resolves both and decides: a live earlier
-- representative makes the document a copy, which skips the buckets.
LOWER = false
local out = {}
for a = 7, #ARGV, 3 do
  begin(tonumber(ARGV[a]), tonumber(ARGV[a + 1]))
  local found, old, _, cur = copyOp(ARGV[a + 2], false)
  out[#out + 1] = spack('>I6BI6', found, old and 1 or 0, cur)
end
return concat(out)
