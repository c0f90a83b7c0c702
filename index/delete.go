package index

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// Deletion removes every key of a document, which needs the document's
// bucket keys: they come from its band signature and anchors, which the
// stored features do not hold. Each document therefore keeps a keys
// record (Redis: the 'k' record next to 'm', 'f' and 'v'; memory: in its
// record), written with the document:
//
//	byte     keysVersion (1)
//	byte     flags: 1 SimHash, 2 I-Match digest, 4 content digest
//	Bands × 8 bytes  the LSH band keys, little-endian
//	8 bytes  SimHash fingerprint (flag 1)
//	20 bytes I-Match digest (flag 2)
//	16 bytes content digest (flag 4)
//	varint   n, then n × 8 bytes: the distinct anchors, ascending
//
// 2 + 8·Bands + 8 + 20 + 16 (those present) + 1 + 8·(distinct anchors)
// bytes: 279 at 30 bands with I-Match and content digests and no anchors,
// 362 bytes of Redis memory with the hashes' overhead (the records are
// longer than listpack's 64-byte values); 679 and 810 with 50 anchors
// (BenchmarkKeysRecordBytes).
const keysVersion = 1

// encodeKeys returns e's keys record.
func encodeKeys(e *Entry) []byte {
	anchors := slices.Compact(slices.Sorted(slices.Values(e.Anchors)))
	n := 2 + 8*len(e.Bands) + 8 + 20 + 16 + binary.MaxVarintLen64 + 8*len(anchors)
	b := make([]byte, 2, n)
	b[0] = keysVersion
	for _, k := range e.Bands {
		b = binary.LittleEndian.AppendUint64(b, k)
	}
	if e.HasSimHash {
		b[1] |= 1
		b = binary.LittleEndian.AppendUint64(b, e.SimHash)
	}
	if e.HasIMatch {
		b[1] |= 2
		b = append(b, e.IMatch[:]...)
	}
	if e.HasContent {
		b[1] |= 4
		b = append(b, e.Content[:]...)
	}
	b = binary.AppendUvarint(b, uint64(len(anchors)))
	for _, a := range anchors {
		b = binary.LittleEndian.AppendUint64(b, a)
	}
	return b
}

// decodeKeys is encodeKeys's inverse: an Entry with id and the keys
// (Features empty).
func decodeKeys(id string, bands int, b []byte) (Entry, error) {
	e := Entry{ID: id}
	bad := func(why string) (Entry, error) {
		return Entry{}, fmt.Errorf("index: keys record of %q: %s", id, why)
	}
	if len(b) < 2 || b[0] != keysVersion {
		return bad("unknown version")
	}
	flags := b[1]
	b = b[2:]
	if len(b) < 8*bands {
		return bad("short band keys")
	}
	e.Bands = make([]uint64, bands)
	for i := range e.Bands {
		e.Bands[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	b = b[8*bands:]
	if flags&1 != 0 {
		if len(b) < 8 {
			return bad("short SimHash")
		}
		e.SimHash, e.HasSimHash, b = binary.LittleEndian.Uint64(b), true, b[8:]
	}
	if flags&2 != 0 {
		if len(b) < len(e.IMatch) {
			return bad("short I-Match digest")
		}
		e.HasIMatch, b = true, b[copy(e.IMatch[:], b):]
	}
	if flags&4 != 0 {
		if len(b) < len(e.Content) {
			return bad("short content digest")
		}
		e.HasContent, b = true, b[copy(e.Content[:], b):]
	}
	n, w := binary.Uvarint(b)
	if w <= 0 || n > MaxAnchors || uint64(len(b)-w) != 8*n {
		return bad("bad anchors")
	}
	b = b[w:]
	e.Anchors = make([]uint64, n)
	for i := range e.Anchors {
		e.Anchors[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return e, nil
}

// keysOf returns the keys of e the stores use: the SimHash block keys and
// the anchor keys (distinct, mixed), as LookupInsert computes them.
func keysOf(e *Entry, simK int) (sim, anchors []uint64) {
	if e.HasSimHash {
		sim = simBlockKeys(nil, e.SimHash, simK)
	}
	return sim, anchorKeys(nil, e.Anchors)
}
