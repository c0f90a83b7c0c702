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
// A source record is written once (the first write wins, like a
// verdict), read with the candidates (Candidate.Source: the memory store
// and a single Redis node, in the round trip that reads the features) or
// by id (Store.Sources: Redis Cluster), and removed with its document
// (Remove, Delete, a generation's expiry). In Redis it is one more record
// hash kind, P s<n>, beside P f<n> and P v<n>.

// MaxSourceBytes bounds a source record: the hashes of at most MaxAnchors
// anchors.
const MaxSourceBytes = 4 * MaxAnchors

// AppendSource appends the source record of a copied text, its anchor
// hashes (sorted, distinct), to dst: 4 bytes each, big-endian. Sorted
// 32-bit hashes of ~50 anchors are ~2^26 apart, so delta varints would
// save nothing.
func AppendSource(dst []byte, hashes []uint32) []byte {
	for _, h := range hashes {
		dst = binary.BigEndian.AppendUint32(dst, h)
	}
	return dst
}

// DecodeSource returns the anchor hashes of a source record
// (AppendSource), appended to dst. A record that is not a whole number of
// hashes, or whose hashes are not increasing, is an error.
func DecodeSource(dst []uint32, b []byte) ([]uint32, error) {
	if len(b)%4 != 0 {
		return dst, fmt.Errorf("%w: source record of %d bytes: not a multiple of 4", ErrInvalid, len(b))
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

// checkSources validates a RecordSources call.
func checkSources(ids []string, copied [][]byte) error {
	if len(ids) != len(copied) {
		return fmt.Errorf("%w: %d ids, %d source records", ErrInvalid, len(ids), len(copied))
	}
	for i, c := range copied {
		switch {
		case len(c) == 0:
			return fmt.Errorf("%w: empty source record for %q", ErrInvalid, ids[i])
		case len(c) > MaxSourceBytes:
			return fmt.Errorf("%w: source record of %d bytes for %q, want ≤ %d", ErrInvalid, len(c), ids[i], MaxSourceBytes)
		}
		if _, err := DecodeSource(nil, c); err != nil {
			return fmt.Errorf("source of %q: %w", ids[i], err)
		}
	}
	return nil
}

// Sources implements [Store].
func (m *Memory) Sources(ctx context.Context, ids []string) ([][]byte, error) {
	return m.records(ctx, ids, func(d *memDoc) []byte { return d.source })
}

// RecordSources implements [Store].
func (m *Memory) RecordSources(ctx context.Context, ids []string, copied [][]byte) ([]bool, error) {
	if err := checkSources(ids, copied); err != nil {
		return nil, err
	}
	return m.eachDoc(ctx, ids, func(i int, d *memDoc) {
		if d.source == nil {
			d.source = append([]byte{}, copied[i]...)
		}
	})
}

// stored returns the stored features and source record of the live
// document h for a LookupInsert result (Candidate.Features and Source;
// the source empty, not nil, when it has none), or nils when it was
// deleted since it was found.
func (m *Memory) stored(h uint32) (features, source []byte) {
	l := m.docs.lock(h)
	l.Lock()
	defer l.Unlock()
	d := m.docs.get(h)
	if d.dead.Load() {
		return nil, nil
	}
	source = d.source
	if source == nil {
		source = []byte{}
	}
	return storedFeatures(d), source
}

// Sources of a read-only store are read as they are.

// RecordSources records nothing and reports every id as stored, as
// RecordVerdicts does.
func (r readOnly) RecordSources(_ context.Context, ids []string, copied [][]byte) ([]bool, error) {
	if err := checkSources(ids, copied); err != nil {
		return nil, err
	}
	stored := make([]bool, len(ids))
	for i := range stored {
		stored[i] = true
	}
	return stored, nil
}
