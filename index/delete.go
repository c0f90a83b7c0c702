package index

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/neardup/neardup/internal/bitstream"
)

// Deletion removes every key of a document, which needs the document's
// bucket keys: they come from its band signature and anchors, which the
// stored features do not hold. Each document therefore keeps a keys
// record (Redis: framed before the features in the 'f' record, featKeys,
// or for an exact copy the 'k' record next to 'm' and 'v'; memory: in its
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
// (BenchmarkKeysRecordBytes). The memory store keeps this version; Redis
// writes version 4 (keysGroupsVersion) and reads all four.
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
	b = appendDigests(b, e)
	b = binary.AppendUvarint(b, uint64(len(anchors)))
	for _, a := range anchors {
		b = binary.LittleEndian.AppendUint64(b, a)
	}
	return b
}

// laneOnly flags a keys record (version 1 and 4) that holds no band keys
// and no anchors, only digests: an exact copy's, which enters no bucket
// and needs its content digest for the lane (laneRep).
const laneOnly = 8

// encodeLaneKeys returns the memory store's keys record of an exact copy:
// its content digest alone.
func encodeLaneKeys(e *Entry) []byte {
	b := appendDigests([]byte{keysVersion, 0}, &Entry{Content: e.Content, HasContent: e.HasContent})
	b[1] |= laneOnly
	return binary.AppendUvarint(b, 0)
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
	if flags&laneOnly != 0 {
		bands = 0
	}
	if len(b) < 8*bands {
		return bad("short band keys")
	}
	e.Bands = make([]uint64, bands)
	for i := range e.Bands {
		e.Bands[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	b = b[8*bands:]
	b, why := decodeDigests(&e, flags, b)
	if why != "" {
		return bad(why)
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

// keysOpsVersion is Redis's keys record: the bucket keys as the ops they
// are in the store's layout (bucketOp), so each takes the bits the layout
// keeps of it, not 8 bytes:
//
//	byte     keysOpsVersion (2)
//	byte     flags: 1 SimHash, 2 I-Match digest, 4 content digest
//	byte     w, the bytes of one op: ⌈(group bits + 31) / 8⌉ (6 at the
//	         default Capacity)
//	Bands × w bytes  the band keys' ops, big-endian: group · 2^31 + field
//	8 bytes  SimHash fingerprint (flag 1)
//	20 bytes I-Match digest (flag 2)
//	16 bytes content digest (flag 4)
//	varint   n, then n × w bytes: the distinct anchor keys' ops (group ·
//	         2^25 + field: the passage table's group carries 6 more bits
//	         and its field 6 fewer)
//
// 3 + w·Bands + 8 + 20 + 16 (those present) + 1 + w·(distinct anchors)
// bytes: 220 at 30 bands with I-Match and content digests and no anchors,
// 520 with 50 anchors, at w = 6 (version 1: 279 and 679); in Redis memory
// 266 and 682 bytes per document (version 1: 362 and 810).
const keysOpsVersion = 2

// opsWidth is w of the store's keys records.
func (r *Redis) opsWidth() int { return (r.opBits() + 7) / 8 }

// opValue packs the op of key in table t: its group above its field.
func (r *Redis) opValue(t int, key uint64) uint64 {
	g, f := r.legacyOp(t, key)
	if t == r.p.passageTable() {
		return g<<(fieldBits-passageSplitBits) | uint64(f) // g has passageSplitBits more bits
	}
	return g<<fieldBits | uint64(f)
}

// opOf is opValue's inverse.
func (r *Redis) opOf(t int, v uint64) (group uint64, field uint32) {
	if t == r.p.passageTable() {
		return v >> (fieldBits - passageSplitBits), uint32(v & (1<<(fieldBits-passageSplitBits) - 1))
	}
	return v >> fieldBits, uint32(v & (1<<fieldBits - 1))
}

// keysPackedVersion is Redis's keys record since version 3: the ops of
// version 2 at the bits they take, not in whole bytes, and the anchors'
// ops sorted and Rice-coded:
//
//	byte     keysPackedVersion (3)
//	byte     flags: 1 SimHash, 2 I-Match digest, 4 content digest
//	byte     o, the bits of one op: group bits + 31 (45 at the default
//	         Capacity)
//	Bands × o bits  the band keys' ops, most significant bit first,
//	         padded to a whole byte
//	8 bytes  SimHash fingerprint (flag 1)
//	20 bytes I-Match digest (flag 2)
//	16 bytes content digest (flag 4)
//	varint   n, the distinct anchor keys' ops; when n > 0, byte k and the
//	         Rice codes (k) of the gaps between the sorted ops (the first
//	         from 0), padded to a whole byte
//
// About 4 + ⌈o·Bands/8⌉ + 8 + 20 + 16 (those present) + 1 + n·(o −
// log2 n + 1.6)/8 bytes: 209 at 30 bands with I-Match and content digests
// and no anchors, 466 with 50 anchors at o = 45 (version 2: 220 and 520);
// in Redis memory 266 and 554 bytes per document (version 2: 266 and 682;
// BenchmarkKeysRecordBytes). Since layout version 5 the ops are kept at
// full precision, o = 53 (opBits), so that a record decodes in every
// generation whatever its group bits: 203 bytes without anchors and 554
// with 50 (TestKeyOpsRecord's log, SimHash included; 173 and 474 at o =
// 45). Keys records are read only by Go (deletes), never by the scripts.
const keysPackedVersion = 3

// opBits is o of the store's keys records (version 3).
// Since schema version 5 ops are kept at full precision (maxGroupBits +
// 31 = 53 bits), so that a record decodes for every generation a document
// lives in, whatever its group bits.
func (r *Redis) opBits() int { return maxGroupBits + fieldBits }

// keysGroupsVersion is Redis's keys record since version 4: the groups of
// the document's band and passage buckets, without their fields. A
// generation's group is a prefix of the full-precision group (bucketOp),
// so the groups decode in every generation whatever its group bits; a
// delete reads each group hash and removes the document's seq from every
// member list in it (luaUnlink), which finds exactly its own members as a
// seq names one document:
//
//	byte     keysGroupsVersion (4)
//	byte     flags: 1 SimHash, 2 I-Match digest, 4 content digest
//	byte     g, the bits of a band group (maxGroupBits, 22)
//	Bands × g bits  the band keys' groups, most significant bit first,
//	         padded to a whole byte
//	8 bytes  SimHash fingerprint (flag 1; its block keys are computed
//	         from it, fields included)
//	20 bytes I-Match digest (flag 2)
//	16 bytes content digest (flag 4)
//	varint   n, the distinct passage groups (g + passageSplitBits = 28
//	         bits: the passage table's group carries 6 bits of the key's
//	         field); when n > 0, byte k and the Rice codes (k) of the gaps
//	         between the sorted groups (the first from 0), padded to a
//	         whole byte
//
// About 4 + ⌈22·Bands/8⌉ + 8 + 20 + 16 (those present) + 1 + n·(28 −
// log2 n + 1.6)/8 bytes: 131 at 30 bands with SimHash, I-Match and
// content digests and no anchors, 282 with 50 anchors (version 3: 203
// and 554; TestKeyOpsRecord logs them).
const keysGroupsVersion = 4

// passageGroupBits is the width of a passage group in a version 4 record.
const passageGroupBits = maxGroupBits + passageSplitBits

// encodeKeys returns e's keys record in the store's layout (version 4).
func (r *Redis) encodeKeys(e *Entry) []byte {
	pt := r.p.passageTable()
	keys := anchorKeys(nil, e.Anchors)
	groups := make([]uint64, len(keys))
	for i, k := range keys {
		groups[i], _ = r.bucketOp(pt, k)
	}
	slices.Sort(groups)
	groups = slices.Compact(groups)
	b := make([]byte, 3, 4+(maxGroupBits*len(e.Bands)+7)/8+8+20+16+binary.MaxVarintLen64+1+len(groups)*(passageGroupBits+2)/8)
	b[0], b[2] = keysGroupsVersion, maxGroupBits
	w := bitstream.NewWriter(b)
	for t, k := range e.Bands {
		g, _ := r.bucketOp(t, k)
		w.Bits(g, maxGroupBits)
	}
	b = appendDigests(w.Flush(), e)
	return appendRiceSet(b, groups)
}

// appendRiceSet appends the sorted distinct values vs to b: their count
// (varint), then, when there are any, byte k and the Rice codes (k) of
// the gaps between them (the first from 0), padded to a whole byte.
// readRiceSet reads them back.
func appendRiceSet(b []byte, vs []uint64) []byte {
	b = binary.AppendUvarint(b, uint64(len(vs)))
	if len(vs) == 0 {
		return b
	}
	k := bitstream.RiceParam(vs[len(vs)-1], len(vs))
	b = append(b, byte(k))
	w := bitstream.NewWriter(b)
	var prev uint64
	for _, v := range vs {
		w.Rice(v-prev, k)
		prev = v
	}
	return w.Flush()
}

// readRiceSet reads what appendRiceSet wrote of values below 2^o, and
// nothing more: b must end with them. It returns the values ascending,
// or why not.
func readRiceSet(b []byte, o int) ([]uint64, string) {
	n, nw := binary.Uvarint(b)
	// Each value takes at least a bit: n ≤ 8 × the bytes left.
	if nw <= 0 || n > MaxAnchors || n > 8*uint64(len(b)-nw) {
		return nil, "bad anchors"
	}
	b = b[nw:]
	if n == 0 {
		if len(b) != 0 {
			return nil, "trailing bytes"
		}
		return nil, ""
	}
	rk := int(b[0])
	if rk >= o {
		return nil, "bad anchors' Rice parameter"
	}
	br := bitReader{b: b[1:]}
	vs := make([]uint64, n)
	var v uint64
	for i := range vs {
		gap, ok := br.rice(rk, 1<<o)
		v += gap
		if !ok || v >= 1<<o || (i > 0 && gap == 0) {
			return nil, "bad anchor op"
		}
		vs[i] = v
	}
	if br.used() != len(b)-1 {
		return nil, "trailing bytes"
	}
	return vs, ""
}

// keyOps is a decoded keys record of the Redis store: the op values of
// the bands and anchors (opValue), or with groups (version 4) their
// full-precision groups (bucketOp; the anchors' distinct, ascending), and
// the entry's other keys.
type keyOps struct {
	bands, anchors []uint64
	groups         bool
	e              Entry // SimHash, I-Match and content digests
}

// decodeKeyOps reads a keys record of any version: version 1 (written
// before version 2, or by the memory store) is converted to ops; the
// anchors' ops of version 3 and the passage groups of version 4 come
// back sorted.
func (r *Redis) decodeKeyOps(id string, b []byte) (keyOps, error) {
	if len(b) > 0 && b[0] == keysVersion {
		e, err := decodeKeys(id, r.p.Bands, b)
		if err != nil {
			return keyOps{}, err
		}
		k := keyOps{e: e}
		for t, key := range e.Bands {
			k.bands = append(k.bands, r.opValue(t, key))
		}
		for _, key := range anchorKeys(nil, e.Anchors) {
			k.anchors = append(k.anchors, r.opValue(r.p.passageTable(), key))
		}
		return k, nil
	}
	bad := func(why string) (keyOps, error) {
		return keyOps{}, fmt.Errorf("index: keys record of %q: %s", id, why)
	}
	if len(b) > 0 && b[0] == keysGroupsVersion {
		k, why := r.decodeGroupKeys(id, b)
		if why != "" {
			return bad(why)
		}
		return k, nil
	}
	if len(b) > 0 && b[0] == keysPackedVersion {
		k, why := r.decodePackedKeys(id, b)
		if why != "" {
			return bad(why)
		}
		return k, nil
	}
	if len(b) < 3 || b[0] != keysOpsVersion {
		return bad("unknown version")
	}
	flags, w := b[1], int(b[2])
	if w != r.opsWidth() {
		return bad(fmt.Sprintf("ops of %d bytes, want %d", w, r.opsWidth()))
	}
	b = b[3:]
	get := func() uint64 {
		var v uint64
		for _, c := range b[:w] {
			v = v<<8 | uint64(c)
		}
		b = b[w:]
		return v
	}
	if len(b) < w*r.p.Bands {
		return bad("short band keys")
	}
	k := keyOps{e: Entry{ID: id}, bands: make([]uint64, r.p.Bands)}
	for i := range k.bands {
		k.bands[i] = get()
	}
	e := &k.e
	b, why := decodeDigests(e, flags, b)
	if why != "" {
		return bad(why)
	}
	n, nw := binary.Uvarint(b)
	if nw <= 0 || n > MaxAnchors || uint64(len(b)-nw) != uint64(w)*n {
		return bad("bad anchors")
	}
	b = b[nw:]
	k.anchors = make([]uint64, n)
	for i := range k.anchors {
		k.anchors[i] = get()
	}
	return k, nil
}

// decodePackedKeys reads a keys record of version 3, or says why not.
func (r *Redis) decodePackedKeys(id string, b []byte) (keyOps, string) {
	return r.decodeBitKeys(id, b, r.opBits(), r.opBits(), "ops", false)
}

// decodeGroupKeys reads a keys record of version 4, or says why not.
func (r *Redis) decodeGroupKeys(id string, b []byte) (keyOps, string) {
	return r.decodeBitKeys(id, b, maxGroupBits, passageGroupBits, "groups", true)
}

// decodeBitKeys reads the layout versions 3 and 4 share: a header whose
// third byte is w, the bits of a band value; the bands' values at w bits
// each; the digests; the Rice-coded set of anchor values of aw bits.
// groups says the values are groups (version 4), not ops.
func (r *Redis) decodeBitKeys(id string, b []byte, w, aw int, what string, groups bool) (keyOps, string) {
	if len(b) < 3 {
		return keyOps{}, "short header"
	}
	flags, got := b[1], int(b[2])
	if got != w {
		return keyOps{}, fmt.Sprintf("%s of %d bits, want %d", what, got, w)
	}
	b = b[3:]
	nb, bands := (w*r.p.Bands+7)/8, r.p.Bands
	if flags&laneOnly != 0 {
		// An exact copy's record: its content digest alone.
		nb, bands = 0, 0
	}
	if len(b) < nb {
		return keyOps{}, "short band " + what
	}
	k := keyOps{e: Entry{ID: id}, bands: make([]uint64, bands), groups: groups}
	br := bitReader{b: b[:nb]}
	for i := range k.bands {
		k.bands[i] = br.read(w)
	}
	b, why := decodeDigests(&k.e, flags, b[nb:])
	if why != "" {
		return keyOps{}, why
	}
	k.anchors, why = readRiceSet(b, aw)
	return k, why
}

// appendDigests appends e's SimHash, I-Match and content digests to a
// keys record b, setting their flags (1, 2, 4) in b[1]; decodeDigests
// reads them back.
func appendDigests(b []byte, e *Entry) []byte {
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
	return b
}

// decodeDigests reads the SimHash, I-Match and content digests a keys
// record holds (flags 1, 2, 4) into e and returns the rest of b, or why
// the record is short.
func decodeDigests(e *Entry, flags byte, b []byte) ([]byte, string) {
	if flags&1 != 0 {
		if len(b) < 8 {
			return nil, "short SimHash"
		}
		e.SimHash, e.HasSimHash, b = binary.LittleEndian.Uint64(b), true, b[8:]
	}
	if flags&2 != 0 {
		if len(b) < len(e.IMatch) {
			return nil, "short I-Match digest"
		}
		e.HasIMatch, b = true, b[copy(e.IMatch[:], b):]
	}
	if flags&4 != 0 {
		if len(b) < len(e.Content) {
			return nil, "short content digest"
		}
		e.HasContent, b = true, b[copy(e.Content[:], b):]
	}
	return b, ""
}

// KeysRecordSizes splits a keys record of any version (one carried in a
// features record, index.CarriedKeys, included), of a store with
// bands bands, into the bytes of its parts: the header (version, flags,
// op width), the band keys, the SimHash, I-Match and content digests, and
// the anchor keys (version 4: the passage groups) with their count. It reads what bench/bytesbench
// reports.
func KeysRecordSizes(b []byte, bands int) (header, bandKeys, digests, anchors int, err error) {
	bad := func(why string) (int, int, int, int, error) {
		return 0, 0, 0, 0, fmt.Errorf("index: keys record: %s", why)
	}
	w := 8
	switch {
	case len(b) >= 2 && b[0] == keysVersion:
		header, bandKeys = 2, 8*bands
	case len(b) >= 3 && b[0] == keysOpsVersion:
		header, w = 3, int(b[2])
		bandKeys = w * bands
	case len(b) >= 3 && b[0] == keysPackedVersion:
		header, w = 3, 0 // anchors Rice-coded
		bandKeys = (int(b[2])*bands + 7) / 8
	case len(b) >= 3 && b[0] == keysGroupsVersion:
		header, w = 3, 0 // passage groups Rice-coded
		bandKeys = (int(b[2])*bands + 7) / 8
	default:
		return bad("unknown version")
	}
	if b[1]&laneOnly != 0 {
		bandKeys = 0
	}
	if len(b)-header < bandKeys {
		return bad("short band keys")
	}
	var e Entry
	rest, why := decodeDigests(&e, b[1], b[header+bandKeys:])
	if b[1]&(7*digestRefs) != 0 {
		// A record carried in a features record: digests or their
		// offsets in the features.
		rest, why = b[header+bandKeys:], ""
		for i, n := range digestLens {
			switch {
			case b[1]&(digestRefs<<i) != 0:
				if _, w := binary.Uvarint(rest); w > 0 {
					rest = rest[w:]
				} else {
					why = "bad digest offset"
				}
			case b[1]&(1<<i) != 0:
				if len(rest) >= n {
					rest = rest[n:]
				} else {
					why = "short digest"
				}
			}
		}
	}
	if why != "" {
		return bad(why)
	}
	digests = len(b) - header - bandKeys - len(rest)
	if w == 0 {
		o := int(b[2])
		if b[0] == keysGroupsVersion {
			o += passageSplitBits
		}
		if _, why := readRiceSet(rest, o); why != "" {
			return bad(why)
		}
		return header, bandKeys, digests, len(rest), nil
	}
	n, nw := binary.Uvarint(rest)
	if nw <= 0 || uint64(len(rest)-nw) != uint64(w)*n {
		return bad("bad anchors")
	}
	return header, bandKeys, digests, len(rest), nil
}
