package index

import (
	"context"
	"encoding/binary"
	"fmt"
)

// Source records.
//
// A text copied whole by many documents makes its keys common, like a
// site's template; what tells the two apart is who holds them (see
// pipeline/common.go, "Widely copied texts"). The document a text was
// first found copied whole from is its source, and the caller records,
// with the source document, the anchor hashes of its copied text:
// against a source, a later document's common passage is evidence.
// Recorded in the index, next to the document's features and verdict,
// every member of a consumer group, and a member after a restart, knows
// every source the stream has found, so results do not depend on which
// member saw which document.
//
// A source record names its finder (the document that found the text
// copied whole): of two records of one document the earlier finder's is
// kept, whichever is written first, and a document reads a source only
// when its finder came before it (a lower Seq), so that a replay after a
// crash, or a member that joins late, uses exactly the sources one
// uninterrupted run would. It is read with the candidates
// (Candidate.Source: the memory store and a single Redis node, in the
// round trip that reads the features) or by Seq (Store.Sources: Redis
// Cluster), and removed with its document (Remove, Delete, a generation's
// expiry). In Redis it is one more record hash kind, P s<n>, beside
// P f<n> and P v<n>.

// MaxSourceBytes bounds a source record: the finder's Seq and the hashes
// of at most MaxAnchors anchors.
const MaxSourceBytes = finderBytes + 4*MaxAnchors

// sourceKind is the source records' kind of found record (found.go).
var sourceKind = foundKind{name: "source", max: MaxSourceBytes, body: func(b []byte) error {
	_, err := decodeSourceHashes(nil, b)
	return err
}}

// AppendSource appends the source record of a copied text to dst: by, the
// Seq of the document that found it copied whole (its finder), 6 bytes
// big-endian, then the text's anchor hashes (sorted, distinct), 4 bytes
// each, big-endian. Sorted 32-bit hashes of ~50 anchors are ~2^26 apart,
// so delta varints would save nothing. The finder's Seq makes a source
// the same for every document whatever the order records are written in:
// a document uses a source found by an earlier document only (lower Seq),
// and of two finders the earlier one's record is kept (found.go).
func AppendSource(dst []byte, by uint64, hashes []uint32) []byte {
	dst = appendFinder(dst, by)
	for _, h := range hashes {
		dst = binary.BigEndian.AppendUint32(dst, h)
	}
	return dst
}

// DecodeSource returns the finder's Seq and the anchor hashes of a source
// record (AppendSource), the hashes appended to dst. A record shorter than
// the finder's Seq, that is not a whole number of hashes after it, whose
// finder is 0 or whose hashes are not increasing, is an error.
func DecodeSource(dst []uint32, b []byte) (by uint64, hashes []uint32, err error) {
	if len(b) < finderBytes || (len(b)-finderBytes)%4 != 0 {
		return 0, dst, fmt.Errorf("%w: source record of %d bytes: not 6 + a multiple of 4", ErrInvalid, len(b))
	}
	if by = finderOf(b); by == 0 {
		return 0, dst, fmt.Errorf("%w: source record without a finder", ErrInvalid)
	}
	if dst, err = decodeSourceHashes(dst, b[finderBytes:]); err != nil {
		return 0, dst, err
	}
	return by, dst, nil
}

// decodeSourceHashes appends the hashes of a source record's body to dst.
func decodeSourceHashes(dst []uint32, b []byte) ([]uint32, error) {
	if len(b)%4 != 0 {
		return dst, fmt.Errorf("%w: source record: %d bytes of hashes, not a multiple of 4", ErrInvalid, len(b))
	}
	for i := 0; i < len(b); i += 4 {
		h := binary.BigEndian.Uint32(b[i:])
		if i > 0 && h <= binary.BigEndian.Uint32(b[i-4:]) {
			return dst, fmt.Errorf("%w: source record: hash %d of %d not above the one before", ErrInvalid, i/4, len(b)/4)
		}
		dst = append(dst, h)
	}
	return dst, nil
}

// Sources implements [Store].
func (m *Memory) Sources(ctx context.Context, seqs []uint64) ([][]byte, error) {
	return m.readFound(ctx, seqs, func(d *memDoc) *[]byte { return &d.source })
}

// RecordSources implements [Store].
func (m *Memory) RecordSources(ctx context.Context, seqs []uint64, copied [][]byte) ([]bool, error) {
	return m.recordFound(ctx, sourceKind, seqs, copied, func(d *memDoc) *[]byte { return &d.source })
}

// stored returns the stored features, source record and verdict of the
// live document h for a LookupInsert result (Candidate.Features, Source
// and Verdict; the source and verdict empty, not nil, when it has none),
// or nils when it was deleted since it was found.
func (m *Memory) stored(h uint32) (features, source, verdict []byte) {
	l := m.docs.lock(h)
	l.Lock()
	defer l.Unlock()
	d := m.docs.get(h)
	if d.dead.Load() {
		return nil, nil, nil
	}
	return storedFeatures(d), storedFound(d.source), storedVerdict(d)
}

// Sources of a read-only store are read as they are.

// RecordSources records nothing and reports every document as stored,
// as RecordVerdicts does.
func (r readOnly) RecordSources(_ context.Context, seqs []uint64, copied [][]byte) ([]bool, error) {
	return r.recordNothing(sourceKind, seqs, copied)
}
