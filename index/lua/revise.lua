-- luaRevise replaces verdicts, compare-and-set: ARGV[7…] = (seq has old
-- new)×n; has is "1" when old is the verdict expected, "0" when none is
-- expected. A replaced verdict drops the document's lookup record, as a
-- recorded one does. Reply: per seq one byte, '1' when replaced.
local out = {}
for a = 7, #ARGV, 4 do
  local s = tonumber(ARGV[a])
  local r = '0'
  if liveSeq(s) then
    local k, f = rkey('v', s)
    local cur = rcall('HGET', k, f)
    if (ARGV[a + 1] == '0' and not cur) or (ARGV[a + 1] == '1' and cur == ARGV[a + 2]) then
      rcall('HSET', k, f, ARGV[a + 3])
      local lk, lf = rkey('l', s)
      rcall('HDEL', lk, lf)
      if R > 0 then
        local exp = rcall('EXPIRETIME', (rkey('m', s)))
        if exp > 0 then rcall('EXPIREAT', k, exp, 'GT') end
      end
      r = '1'
    end
  end
  out[#out + 1] = r
end
return concat(out)
