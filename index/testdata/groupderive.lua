local mode, b = ARGV[1], tonumber(ARGV[2])
local sub = string.sub
local ops = {}
local bin, hex = {}, {}
for i = 1, 70 do
  local s = ''
  for j = 1, 22 do s = s .. (((i * 7 + j * 3) % 5 < 2) and '1' or '0') end
  bin[#bin + 1] = s .. 'abcd'
  hex[#hex + 1] = string.format('%07x', (i * 2654435761) % 268435456) .. 'abcd'
end
local binops, hexops = table.concat(bin), table.concat(hex)
local D = 2 ^ (28 - b)
local P = 'ns:v5:{0}b5:3:'
local t0 = redis.call('TIME')
local n = 0
for r = 1, 20000 do
  if mode == 'bin' then
    for p = 1, #binops, 26 do local k = P .. sub(binops, p, p + b - 1); n = n + #k end
  elseif mode == 'hex' then
    for p = 1, #hexops, 11 do local k = P .. string.format('%x', math.floor(tonumber(sub(hexops, p, p + 6), 16) / D)); n = n + #k end
  else
    for p = 1, #hexops, 11 do local k = P .. sub(hexops, p, p + 6); n = n + #k end
  end
end
local t1 = redis.call('TIME')
return {(t1[1] - t0[1]) * 1e6 + (t1[2] - t0[2]), n}
