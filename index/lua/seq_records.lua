-- luaSeqRecords reads one per-document record kind KIND ('f' features,
-- 'v' verdict, 's' source, 't' template; set by the line Go puts before
-- the prelude) of documents by Seq: ARGV[7…] = seqs. Reply: an array, per
-- seq the record as a bulk string of its own: nil for a document that is
-- not stored (its meta record is gone), "" for one without that record.
local out = {}
for a = 7, #ARGV do
  local s = tonumber(ARGV[a])
  local v = false
  if s and s > 0 and liveSeq(s) then
    local k, f = rkey(KIND, s)
    v = rcall('HGET', k, f) or ''
  end
  out[#out + 1] = v
end
return out
