package index

import (
	"encoding/binary"
	"slices"

	"github.com/neardup/neardup/internal/bitstream"
)

// encodeKeysV3 returns e's keys record in version 3, as builds before
// version 4 wrote it.
func (r *Redis) encodeKeysV3(e *Entry) []byte {
	o := r.opBits()
	keys := anchorKeys(nil, e.Anchors)
	ops := make([]uint64, len(keys))
	for i, k := range keys {
		ops[i] = r.opValue(r.p.passageTable(), k)
	}
	slices.Sort(ops)
	ops = slices.Compact(ops)
	b := make([]byte, 3, 4+(o*len(e.Bands)+7)/8+8+20+16+binary.MaxVarintLen64+1+len(ops)*(o+2)/8)
	b[0], b[2] = keysPackedVersion, byte(o)
	w := bitstream.NewWriter(b)
	for t, k := range e.Bands {
		w.Bits(r.opValue(t, k), uint(o))
	}
	b = appendDigests(w.Flush(), e)
	return appendRiceSet(b, ops)
}

// encodeKeysV2 returns e's keys record in version 2, as builds before
// version 3 wrote it.
func (r *Redis) encodeKeysV2(e *Entry) []byte {
	w := r.opsWidth()
	anchors := anchorKeys(nil, e.Anchors)
	b := make([]byte, 3, 3+w*len(e.Bands)+8+20+16+binary.MaxVarintLen64+w*len(anchors))
	b[0], b[2] = keysOpsVersion, byte(w)
	put := func(v uint64) {
		for i := w - 1; i >= 0; i-- {
			b = append(b, byte(v>>(8*i)))
		}
	}
	for t, k := range e.Bands {
		put(r.opValue(t, k))
	}
	b = appendDigests(b, e)
	b = binary.AppendUvarint(b, uint64(len(anchors)))
	for _, k := range anchors {
		put(r.opValue(r.p.passageTable(), k))
	}
	return b
}
