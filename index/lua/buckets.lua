-- luaBuckets is cluster phase 3, per bucket shard. ARGV[7…], per document:
-- seq mode fingerprint ops digest-or-"": fingerprint the SimHash's 8 bytes
-- (zeros for none), ops: each the table t u16 (PT for an anchor), then
-- the op as in luaLookupInsert.
-- Reply per document: withheld u32 · hot u16 · imatch seq u48 ·
-- imatch-in-older-generation u8 · ncand u16 · (seq u48 · via u8 · hits
-- u16)×ncand · nhot u16 · (op u16)×nhot, via bit 4 marking a candidate
-- found in an older generation; a hot op is the index among the
-- document's ops in this call of an anchor whose bucket is full.
-- Every table and every anchor's bucket lives in one shard, so a
-- document's hits are the sum over shards.
LOWER = false
local out = {}
local a = 7
while a <= #ARGV do
  local self, mode = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  QHI, QLO = sunpack('>I4I4', ARGV[a + 2])
  local ops = ARGV[a + 3]
  a = a + 4
  begin(self, mode)
  local me = spack('>I6', self)
  local sme = me .. ARGV[a - 2]
  local i = 0
  local p = 1
  while p < #ops do
    local t = sunpack('>I2', ops, p)
    local sim = t >= B and t < PT
    local hk = t
    local gw = GB
    if t == PT then hk = PT + 1 + i; gw = GB + 1 end
    tableOp(t, ops, p + 2, sub(ops, p + 2 + gw, p + 1 + gw + FW), sim, sim and sme or me, hk)
    i = i + 1
    p = p + 2 + gw + FW
  end
  local ex, exold = 0, false
  if #ARGV[a] > 0 then ex, exold = exactOp(ARGV[a], false) end
  a = a + 1
  finish(nil)
  local parts = {}
  for _, s in ipairs(CORDER) do
    local via = CAND[s]
    if OLDC[s] then via = via + 4 end
    parts[#parts + 1] = spack('>I6BI2', s, via, HITS[s])
  end
  out[#out + 1] = spack('>I4I2I6BI2', TRUNC, HOT, ex, exold and 1 or 0, #CORDER) .. concat(parts) .. hotList()
end
countEntries()
return concat(out)
