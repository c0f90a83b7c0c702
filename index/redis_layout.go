package index

import (
	"encoding/binary"
)

// groupBits is the level a generation starts at when its predecessor
// received docs documents: the fewest group bits (at least minGroupBits,
// at most maxGroupBits) for which a band table's groups hold at most
// splitLoad buckets each on average (the scripts' layout rule, in
// lua/prelude.lua, computes the same); the first generation starts at
// minGroupBits.
func groupBits(docs float64) uint {
	b := uint(minGroupBits)
	for b < maxGroupBits && float64(uint64(splitLoad)<<b) < docs {
		b++
	}
	return b
}

// routeBits is the precision at which keys are routed to shards: a bucket
// key's top 22 bits, an id's or digest's 32-bit group value's top 22 bits.
// Routing never depends on a generation's group bits, so a key's shard is
// the same in every generation.
const routeBits = maxGroupBits

// groupRange is the half-open range of routes (routeBits) stored in shard s.
func (r *Redis) groupRange(s int) (lo, hi uint64) {
	const n = 1 << routeBits
	S := uint64(r.shards)
	return (uint64(s)*n + S - 1) / S, (uint64(s+1)*n + S - 1) / S
}

// shardOfRoute is the shard of route x (< 2^routeBits).
func (r *Redis) shardOfRoute(x uint64) int { return int(x * uint64(r.shards) >> routeBits) }

// shardOfGroup is the shard of an id's or digest's 32-bit group value
// (idGroup, digestGroup, contentGroup).
func (r *Redis) shardOfGroup(g uint64) int { return r.shardOfRoute(g >> (32 - routeBits)) }

// bucketOp maps a 64-bit bucket key of table t to its op at full
// precision: the group is the key's top maxGroupBits bits and the field
// its bits minGroupBits…minGroupBits+47 (fieldBytes, 6 bytes), which
// overlap the group from its fifth bit on: a field carries the group
// digits a split of its group needs (luaPrelude's splitGroup). In the
// passage table passageSplitBits more bits of the key (its bits 33…38
// from the top) come first in the group (group = those bits·2^22 + the
// key's top 22 bits), so that table has 2^6 times the groups. A
// generation of level b uses the group's top b or b+1 bits (b + 6 or
// b + 7 in the passage table): the scripts cut them from the op (tkey in
// lua/prelude.lua). A bucket is named by the key's top 52 bits (58 in
// the passage table).
func (r *Redis) bucketOp(t int, key uint64) (group, field uint64) {
	group = key >> (64 - maxGroupBits)
	field = key >> (64 - minGroupBits - 8*fieldBytes) & (1<<(8*fieldBytes) - 1)
	if t == r.p.passageTable() {
		const low = fieldBits - passageSplitBits
		group |= (key >> low & (1<<passageSplitBits - 1)) << maxGroupBits
	}
	return group, field
}

// legacyOp is bucketOp of keys records of version 2 and 3 (layouts 6
// and older): the field is the key's low 31 bits, of which the passage
// table's top 6 are in its group.
func (r *Redis) legacyOp(t int, key uint64) (group uint64, field uint32) {
	group = key >> (64 - maxGroupBits)
	field = uint32(key & (1<<fieldBits - 1))
	if t == r.p.passageTable() {
		const low = fieldBits - passageSplitBits
		group |= uint64(field>>low) << maxGroupBits
		field &= 1<<low - 1
	}
	return group, field
}

// routeOf is the route of a full-precision group of table t (bucketOp): a
// bucket key's top 22 bits in every table.
func (r *Redis) routeOf(t int, group uint64) uint64 {
	return group & (1<<maxGroupBits - 1)
}

// splitAlphabet writes the passageSplitBits bits of a passage op's group
// as one character of a key name.
const splitAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_"

// opWidth is the widest op in a script argument: the group's digits, then
// the field as fieldBytes big-endian bytes (its hash field, binary).
const opWidth = 1 + maxGroupBits + fieldBytes

// appendOp appends the op of key in table t to b. The script cuts a
// generation's group from the digits as they are, with no number
// conversion in Lua (a tonumber, a division and a string.format per op
// cost about 1.1 µs where the cut costs 0.04 µs more than a fixed group:
// index/testdata/groupderive.lua).
func (r *Redis) appendOp(b []byte, t int, key uint64) []byte {
	g, f := r.bucketOp(t, key)
	return r.appendGroupField(b, t, g, f)
}

// appendGroupField appends the op of group g and field f of table t to b.
func (r *Redis) appendGroupField(b []byte, t int, g, f uint64) []byte {
	if t == r.p.passageTable() {
		b = append(b, splitAlphabet[g>>maxGroupBits])
	}
	// 22 digits: 6, then two bytes of 8, each a table row.
	const top = maxGroupBits % 8
	b = append(b, binDigits[g>>(maxGroupBits-top)&(1<<top-1)][8-top:]...)
	for i := maxGroupBits - top - 8; i >= 0; i -= 8 {
		b = append(b, binDigits[g>>i&0xff][:]...)
	}
	for i := fieldBytes - 1; i >= 0; i-- {
		b = append(b, byte(f>>(8*i)))
	}
	return b
}

// binDigits[v] is byte v as 8 binary digits, most significant first
// (appendGroupField writes a group a byte at a time).
var binDigits = func() (t [256][8]byte) {
	for v := range t {
		for i := range 8 {
			t[v][i] = '0' + byte(v>>(7-i)&1)
		}
	}
	return t
}()

// idGroup is an id's group value, FNV-1a 32 of the id: a generation of b
// group bits puts the id in group value>>(32−b) (gkey in redis_lua.go);
// the shard is shardOfGroup's.
func (r *Redis) idGroup(id string) uint64 { return uint64(fnv32(id)) }

// digestGroup places an I-Match digest by its last 4 bytes, as idGroup an
// id; its first 16 bytes are the hash field.
func (r *Redis) digestGroup(d []byte) uint64 { return uint64(binary.BigEndian.Uint32(d[16:])) }

// contentGroup places a content digest by its last 4 bytes, as idGroup an
// id; its first 12 bytes are the hash field.
func (r *Redis) contentGroup(c []byte) uint64 { return uint64(binary.BigEndian.Uint32(c[12:])) }
