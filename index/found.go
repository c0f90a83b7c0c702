package index

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Found records.
//
// Source records (sources.go) and template records (templates.go) are
// what a later document found out about an earlier one: that its text was
// copied whole, that part of it is its site's template. Each names its
// finder, the Seq of the document that found it, in its first 6 bytes
// (big-endian), and both follow one rule, so that what a document reads
// does not depend on which member wrote what when, or on a restart:
//
//   - of two records of one document the one with the lower finder is
//     kept, whichever is written first (a replayed batch changes nothing,
//     and two members racing leave what one uninterrupted run leaves);
//   - a document uses a record only when its finder came before it (a
//     lower Seq): the caller's part (pipeline/common.go,
//     pipeline/templaterec.go).
//
// They are read by Seq (nil: not stored; empty: none), written by Seq in
// one round trip on a single node, and removed and expired with their
// document. In Redis each is a record hash kind of its own (P s<n>,
// P t<n>), written by luaSeqRecordOnce.

// finderBytes is the length of a found record's finder: a Seq, 6 bytes
// big-endian.
const finderBytes = 6

// isFoundKind reports whether Redis record kind is a found record's
// ('s' source, 't' template), whose writes keep the lower finder's record.
func isFoundKind(kind string) bool { return kind == "s" || kind == "t" }

// appendFinder appends the finder by to dst.
func appendFinder(dst []byte, by uint64) []byte {
	return append(dst, byte(by>>40), byte(by>>32), byte(by>>24), byte(by>>16), byte(by>>8), byte(by))
}

// finderOf returns the finder of a found record (at least finderBytes
// long).
func finderOf(b []byte) uint64 {
	var by uint64
	for _, c := range b[:finderBytes] {
		by = by<<8 | uint64(c)
	}
	return by
}

// foundKind describes one kind of found record for checking a write.
type foundKind struct {
	name string // "source", "template"
	max  int    // bytes, finder included
	// body checks what follows the finder (at least one byte).
	body func(b []byte) error
}

// splitFound returns a found record's finder and body; a record without a
// finder or a body, or whose finder is 0, is an error.
func (k foundKind) split(b []byte) (by uint64, body []byte, err error) {
	if len(b) <= finderBytes {
		return 0, nil, fmt.Errorf("%w: %s record of %d bytes: no finder and body", ErrInvalid, k.name, len(b))
	}
	if by = finderOf(b); by == 0 {
		return 0, nil, fmt.Errorf("%w: %s record without a finder", ErrInvalid, k.name)
	}
	return by, b[finderBytes:], nil
}

// check validates a write of records recs for documents seqs.
func (k foundKind) check(seqs []uint64, recs [][]byte) error {
	if len(seqs) != len(recs) {
		return fmt.Errorf("%w: %d seqs, %d %s records", ErrInvalid, len(seqs), len(recs), k.name)
	}
	for i, c := range recs {
		if len(c) > k.max {
			return fmt.Errorf("%w: %s record of %d bytes for seq %d, want ≤ %d", ErrInvalid, k.name, len(c), seqs[i], k.max)
		}
		_, body, err := k.split(c)
		if err == nil {
			err = k.body(body)
		}
		if err != nil {
			return fmt.Errorf("%s of seq %d: %w", k.name, seqs[i], err)
		}
	}
	return nil
}

// readFound returns a found record of documents by Seq, as Sources does:
// nil when not stored, empty (not nil) when it has none.
func (m *Memory) readFound(ctx context.Context, seqs []uint64, field func(*memDoc) *[]byte) ([][]byte, error) {
	return m.records(ctx, seqs, func(d *memDoc) []byte { return storedFound(*field(d)) })
}

// storedFound returns a stored found record as reads give it: empty, not
// nil, when there is none.
func storedFound(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// recordFound writes found records of kind k, the lower finder's kept.
func (m *Memory) recordFound(ctx context.Context, k foundKind, seqs []uint64, recs [][]byte, field func(*memDoc) *[]byte) ([]bool, error) {
	if err := k.check(seqs, recs); err != nil {
		return nil, err
	}
	return m.eachDoc(ctx, seqs, func(i int, d *memDoc) {
		if cur := field(d); *cur == nil || finderOf(recs[i]) < finderOf(*cur) {
			*cur = append([]byte{}, recs[i]...)
		}
	})
}

// recordFound writes found records of kind k with script s (a
// luaSeqRecordOnce of a kind in foundKinds): one script call per record
// shard of the documents (one on a single node), all in one round trip.
func (r *Redis) recordFound(ctx context.Context, k foundKind, s *redis.Script, seqs []uint64, recs [][]byte) ([]bool, error) {
	what := "record " + k.name + "s"
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	if err := r.writable(what); err != nil {
		return nil, err
	}
	if err := k.check(seqs, recs); err != nil {
		return nil, err
	}
	return r.recordOnce(ctx, what, s, seqs, recs)
}

// recordNothing is a read-only store's write of found records of kind k:
// checked, nothing recorded, every document reported stored (as
// RecordVerdicts does).
func (r readOnly) recordNothing(k foundKind, seqs []uint64, recs [][]byte) ([]bool, error) {
	if err := k.check(seqs, recs); err != nil {
		return nil, err
	}
	stored := make([]bool, len(seqs))
	for i := range stored {
		stored[i] = true
	}
	return stored, nil
}
