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
const MaxSourceBytes = sourceHeader + 4*MaxAnchors

// sourceHeader is the bytes of a source record before its hashes: the
// finder's Seq, 6 bytes big-endian.
const sourceHeader = 6

// AppendSource appends the source record of a copied text to dst: by, the
// Seq of the document that found it copied whole (its finder), 6 bytes
// big-endian, then the text's anchor hashes (sorted, distinct), 4 bytes
// each, big-endian. Sorted 32-bit hashes of ~50 anchors are ~2^26 apart,
// so delta varints would save nothing. The finder's Seq makes a source
// the same for every document whatever the order records are written in:
// a document uses a source found by an earlier document only (lower Seq),
// and of two finders the earlier one's record is kept (RecordSources).
func AppendSource(dst []byte, by uint64, hashes []uint32) []byte {
	dst = append(dst, byte(by>>40), byte(by>>32), byte(by>>24), byte(by>>16), byte(by>>8), byte(by))
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
	if len(b) < sourceHeader || (len(b)-sourceHeader)%4 != 0 {
		return 0, dst, fmt.Errorf("%w: source record of %d bytes: not 6 + a multiple of 4", ErrInvalid, len(b))
	}
	for _, c := range b[:sourceHeader] {
		by = by<<8 | uint64(c)
	}
	if by == 0 {
		return 0, dst, fmt.Errorf("%w: source record without a finder", ErrInvalid)
	}
	b = b[sourceHeader:]
	for i := 0; i < len(b); i += 4 {
		h := binary.BigEndian.Uint32(b[i:])
		if i > 0 && h <= binary.BigEndian.Uint32(b[i-4:]) {
			return 0, dst, fmt.Errorf("%w: source record: hash %d of %d not above the one before", ErrInvalid, i/4, len(b)/4)
		}
		dst = append(dst, h)
	}
	return by, dst, nil
}

// sourceFinder is the finder's Seq of a valid source record.
func sourceFinder(b []byte) uint64 {
	var by uint64
	for _, c := range b[:sourceHeader] {
		by = by<<8 | uint64(c)
	}
	return by
}

// checkSources validates a RecordSources call.
func checkSources(seqs []uint64, copied [][]byte) error {
	if len(seqs) != len(copied) {
		return fmt.Errorf("%w: %d seqs, %d source records", ErrInvalid, len(seqs), len(copied))
	}
	for i, c := range copied {
		switch {
		case len(c) <= sourceHeader:
			return fmt.Errorf("%w: empty source record for seq %d", ErrInvalid, seqs[i])
		case len(c) > MaxSourceBytes:
			return fmt.Errorf("%w: source record of %d bytes for seq %d, want ≤ %d", ErrInvalid, len(c), seqs[i], MaxSourceBytes)
		}
		if _, _, err := DecodeSource(nil, c); err != nil {
			return fmt.Errorf("source of seq %d: %w", seqs[i], err)
		}
	}
	return nil
}

// Sources implements [Store].
func (m *Memory) Sources(ctx context.Context, seqs []uint64) ([][]byte, error) {
	return m.records(ctx, seqs, storedSource)
}

// storedSource returns d's source record as Sources does: empty, not nil,
// when it has none. The document lock is held.
func storedSource(d *memDoc) []byte {
	if d.source == nil {
		return []byte{}
	}
	return d.source
}

// RecordSources implements [Store].
func (m *Memory) RecordSources(ctx context.Context, seqs []uint64, copied [][]byte) ([]bool, error) {
	if err := checkSources(seqs, copied); err != nil {
		return nil, err
	}
	return m.eachDoc(ctx, seqs, func(i int, d *memDoc) {
		if d.source == nil || sourceFinder(copied[i]) < sourceFinder(d.source) {
			d.source = append([]byte{}, copied[i]...)
		}
	})
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
	return storedFeatures(d), storedSource(d), storedVerdict(d)
}

// Sources of a read-only store are read as they are.

// RecordSources records nothing and reports every document as stored,
// as RecordVerdicts does.
func (r readOnly) RecordSources(_ context.Context, seqs []uint64, copied [][]byte) ([]bool, error) {
	if err := checkSources(seqs, copied); err != nil {
		return nil, err
	}
	stored := make([]bool, len(seqs))
	for i := range stored {
		stored[i] = true
	}
	return stored, nil
}
