-- luaSupersede marks a namespace's clock of the previous layout version
-- (KEYS[1]) as superseded (ARGV[1]), keeping its fingerprint in field
-- f<version> (ARGV[2]): members of older builds compare field f with
-- their fingerprint on every call, so from then on they fail with a
-- parameters mismatch instead of deciding against an index the new
-- members no longer read (each layout version keeps its keys under a
-- prefix of its own).
local f = redis.call('HGET', KEYS[1], 'f')
if f and string.sub(f, 1, 10) ~= 'superseded' then
  redis.call('HSET', KEYS[1], 'f', ARGV[1], 'f' .. ARGV[2], f)
end
return 0
