package pipeline

import (
	"bytes"
	"hash/maphash"
	"sync"

	"github.com/neardup/neardup/sketch"
)

// featCache keeps the decoded stored features of recent candidates, keyed
// by their stored bytes, so that a candidate found again (in a
// duplicate-dense stream the first members of a cluster are candidates of
// every later copy) is decoded once instead of once per batch. Decoding a
// 5 KB page's features (shingles and passage section) costs about as much
// as verifying it.
//
// The key is the stored bytes themselves (a hash of their header to find
// the entry, then a byte comparison), not the id: equal bytes decode to equal features
// whatever document holds them, and a document deleted and stored again
// under its id with other text can never be served its old features.
//
// It holds two generations of at most max bytes each (decoded size plus
// the key): an entry found in the old generation moves to the current
// one, and when the current one is full the old one is dropped. The
// verifier workers use it concurrently (verify.Job.Load), each decoding
// outside the lock; the features it returns are shared read-only and must
// not be modified.
type featCache struct {
	seed maphash.Seed
	max  int

	mu       sync.Mutex
	cur, old map[uint64]*featEntry
	curBytes int
	// hits and misses count lookups, for tests and benchmarks.
	hits, misses int
}

type featEntry struct {
	raw  []byte
	f    *sketch.Features // nil: the bytes do not decode
	size int
}

// defaultFeatCacheBytes bounds one generation of featCache: about 1,600
// decoded features of 5 KB pages (~10 KB each with their key); the cache
// holds at most twice this.
const defaultFeatCacheBytes = 16 << 20

// keyPrefix is how many of the stored bytes featCache hashes to find an
// entry: the header, which holds the content digest of the document's
// text (sketch's encoding: version, flags, token count, digest), so that
// features of different texts hash apart without hashing kilobytes; equal
// prefixes of different bytes are told apart by the comparison.
const keyPrefix = 48

func newFeatCache(max int) *featCache {
	return &featCache{seed: maphash.MakeSeed(), max: max, cur: map[uint64]*featEntry{}, old: map[uint64]*featEntry{}}
}

// decode returns the features raw decodes to (nil when it does not
// decode), from the cache when the same bytes were decoded recently.
func (c *featCache) decode(raw []byte) *sketch.Features {
	if c == nil || c.max <= 0 {
		return decodeFeatures(raw)
	}
	h := maphash.Bytes(c.seed, raw[:min(len(raw), keyPrefix)])
	c.mu.Lock()
	if e, ok := c.cur[h]; ok && bytes.Equal(e.raw, raw) {
		c.hits++
		c.mu.Unlock()
		return e.f
	}
	if e, ok := c.old[h]; ok && bytes.Equal(e.raw, raw) {
		c.hits++
		delete(c.old, h)
		c.add(h, e)
		c.mu.Unlock()
		return e.f
	}
	c.misses++
	c.mu.Unlock()
	// Decoded outside the lock: two workers missing the same bytes at
	// once both decode them, and the second entry replaces the first.
	e := &featEntry{raw: bytes.Clone(raw), f: decodeFeatures(raw)}
	e.size = len(raw) + decodedSize(e.f)
	c.mu.Lock()
	c.add(h, e)
	c.mu.Unlock()
	return e.f
}

// add stores e under h; c.mu must be held.
func (c *featCache) add(h uint64, e *featEntry) {
	if e.size > c.max {
		return
	}
	if prev, ok := c.cur[h]; ok {
		c.curBytes -= prev.size // decoded twice at once: replaced
	}
	if c.curBytes+e.size > c.max {
		c.old, c.cur, c.curBytes = c.cur, make(map[uint64]*featEntry, len(c.cur)), 0
	}
	c.cur[h] = e
	c.curBytes += e.size
}

// decodedSize estimates the heap bytes of decoded features.
func decodedSize(f *sketch.Features) int {
	if f == nil {
		return 64
	}
	p := &f.Passage
	n := 256 + 8*cap(f.Shingles) + 8*cap(f.Signature) + 16*cap(f.Unique) + cap(f.Text) +
		cap(p.Fp) + 16*cap(p.Anchors) + 4*(cap(p.Starts)+cap(p.Ends))
	for _, s := range f.Sentences.Items {
		n += 64 + 8*cap(s.Keys) + cap(s.Sig) + cap(s.Text)
	}
	return n
}
