package index

import (
	"sync/atomic"

	"github.com/neardup/neardup/sketch"
)

// bucketHints remembers the bucket keys a single-node store inserted
// lately, so that the lookup-insert script can pick the cheaper first
// command per op: a bucket that exists costs one HGET (then the HSET that
// appends the document, as always), a new one one HSETNX; the wrong guess
// costs one command more (HSETNX then HGET, or HGET then HSET). Both
// orders store the same, so a hint changes the commands, never a result.
//
// It is a direct-mapped table of 2^hintBits slots (4 bytes each), a slot
// holding a 32-bit tag of the last (generation, table, key) hashed to it:
// no false "seen" beyond a tag collision (2^-32), and a key is forgotten
// when a later one takes its slot, so it remembers about the last 2^hintBits
// keys (the last ~25,000 documents of 80 ops at half its slots). A key
// another process inserted is not known here; the script's per-call guess
// (GUESS in redis_lua.go) learns from the ops without a hint.
type bucketHints struct {
	slots []atomic.Uint32
}

// hintBits sizes bucketHints: 2^21 slots, 8 MiB.
const hintBits = 21

func newBucketHints() *bucketHints {
	return &bucketHints{slots: make([]atomic.Uint32, 1<<hintBits)}
}

// hintSlot names one bucket in bucketHints: its slot and tag.
type hintSlot struct {
	i   uint32
	tag uint32
}

// slot is the slot of the bucket of group g and field f (bucketOp) of
// table t in generation gen.
func (h *bucketHints) slot(gen int64, t int, g uint64, f uint32) hintSlot {
	x := sketch.Mix64(sketch.Mix64(g<<32|uint64(f)) ^ uint64(t)*0xbf58476d1ce4e5b9 ^ uint64(gen)*0x9e3779b97f4a7c15)
	return hintSlot{i: uint32(x & (1<<hintBits - 1)), tag: uint32(x>>32) | 1} // tag 0: an empty slot
}

// seen reports whether s was marked (and not taken by another since).
func (h *bucketHints) seen(s hintSlot) bool { return h.slots[s.i].Load() == s.tag }

// mark records s. Concurrent callers may lose a mark: a hint is only a
// guess.
func (h *bucketHints) mark(s hintSlot) { h.slots[s.i].Store(s.tag) }
