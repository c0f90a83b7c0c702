-- luacheck configuration for the server-side scripts (luacheck index/lua).
-- Each script runs in Redis 7 (Lua 5.1) as: the store's constants (a line
-- of locals written by Redis.scriptConstants), for the record scripts the
-- KIND and FOUND locals, then prelude.lua, then the script's own file; so
-- a script's file reads the prelude's top-level locals as globals here.
-- index/lua_test.go checks these lists against prelude.lua and the
-- constants line.
std = 'lua51'
max_line_length = false
-- An empty branch of an if states a case that needs nothing
-- (register.lua: a document found gone).
ignore = {'542'}
read_globals = {
  -- Redis's scripting API.
  'redis', 'KEYS', 'ARGV', 'struct', 'cjson', 'cmsgpack', 'bit',
  -- The store's constants (Redis.scriptConstants).
  'FP', 'SPLITA', 'RO', 'L', 'R', 'NLIVE', 'MINB', 'GB', 'B', 'PT',
  'COMMON_DOCS', 'MAXS', 'SIMK', 'S', 'REFRESH', 'MAXC', 'PSPLIT', 'AHEAD',
  'FW', 'LOAD',
  -- The record scripts' kind (luaSeqRecords, luaSeqRecordOnce).
  'KIND', 'FOUND',
}
-- The prelude's top-level locals, which the scripts after it use (and
-- some set: the per-document state).
local prelude = {
  'rcall', 'spack', 'sunpack', 'floor', 'concat', 'tonumber',
  'P', 'NOW', 'GLO', 'GHI', 'BUDGET', 'CLOCK', 'sub', 'byte', 'band', 'bxor', 'ST', 'FRESH', 'LB',
  'BL', 'BS', 'layouts', 'SPLITD', 'SPLIT0', 'SPLITP', 'shardGroup', 'setSplit', 'gdig',
  'hdel', 'splitKey', 'splitGroup',
  'GEN', 'OLD', 'DESC', 'EXP', 'RECORDS', 'itos', 'NADD', 'countEntries',
  'BIN4', 'bin', 'KB', 'KI', 'tpre', 'tkey', 'GK', 'gentable', 'gpre',
  'gkey', 'ikey', 'xkey', 'ckey', 'SWEPT', 'sweep', 'pop32', 'fnv32',
  'lenstr', 'FLD', 'HSTR', 'hstr', 'GKC', 'RKC', 'rkey', 'RCACHE', 'resolve', 'WM', 'WF', 'WK', 'WL', 'WO',
  'defer', 'extend', 'flush', 'ismark', 'gone', 'register', 'idSeq', 'liveSeq',
  'verdict', 'SELF', 'MODE', 'LOWER', 'LOCAL', 'QHI', 'QLO', 'CAND', 'HITS',
  'LASTT', 'CORDER', 'OLDC', 'LIVEC', 'PEND', 'RFULL', 'TRUNC', 'HOT',
  'HOTA', 'CHK', 'HOTD', 'begin', 'addc', 'rank', 'scan', 'overflow',
  'iscommon', 'NOEX', 'cmark', 'commonHit', 'hotList', 'GUESS', 'tableOp',
  'has', 'live', 'finish', 'exactOp', 'COPIES', 'copyOp', 'refreshRecords',
  'lookupRecord', 'LREC', 'lookupOf', 'recall',
}
-- The prelude is a library for the scripts: what it defines and they use
-- is unused, and what they set (LOWER) never set, as luacheck sees it.
files['prelude.lua'] = {unused = false, ignore = {'221'}}
for _, f in ipairs({'buckets', 'copies', 'del_keys', 'ids', 'keep_lookups', 'lookup_insert', 'maintain',
    'register', 'resolve', 'revise', 'seq_record_once', 'seq_records', 'unlink'}) do
  files[f .. '.lua'] = {globals = prelude}
end
