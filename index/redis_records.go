package index

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Features implements [Store].
func (r *Redis) Features(ctx context.Context, seqs []uint64) ([][]byte, error) {
	return r.records(ctx, "features", r.scripts.features, seqs)
}

// Verdicts implements [Store].
func (r *Redis) Verdicts(ctx context.Context, seqs []uint64) ([][]byte, error) {
	return r.records(ctx, "verdicts", r.scripts.verdicts, seqs)
}

// records runs a per-document record script (luaSeqRecords) over seqs:
// nil for a document that is not stored, else its record ("" for none).
func (r *Redis) records(ctx context.Context, what string, s *redis.Script, seqs []uint64) ([][]byte, error) {
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	out := make([][]byte, len(seqs))
	calls, idx := r.bySeqShard(seqs, s, func(args []any, i int) []any {
		return append(args, strconv.FormatUint(seqs[i], 10))
	})
	if err := r.run(ctx, calls); err != nil {
		return nil, r.wrap(ctx, what, err)
	}
	for ci, c := range calls {
		reply, err := c.cmd.Slice()
		if err != nil {
			return nil, r.wrap(ctx, what, err)
		}
		if len(reply) != len(idx[ci]) {
			return nil, fmt.Errorf("index: %s: malformed script reply (%d values for %d seqs)", what, len(reply), len(idx[ci]))
		}
		for k, i := range idx[ci] {
			switch v := reply[k].(type) {
			case nil:
			case string:
				out[i] = []byte(v)
			default:
				return nil, fmt.Errorf("index: %s: malformed script reply (%T)", what, v)
			}
		}
	}
	return out, nil
}

// RecordVerdicts implements [Store]: one script call per record shard of
// the documents (one on a single node), all in one round trip.
func (r *Redis) RecordVerdicts(ctx context.Context, seqs []uint64, verdicts [][]byte) ([]bool, error) {
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	if err := r.writable("record verdicts"); err != nil {
		return nil, err
	}
	if len(seqs) != len(verdicts) {
		return nil, fmt.Errorf("%w: %d seqs, %d verdicts", ErrInvalid, len(seqs), len(verdicts))
	}
	return r.recordOnce(ctx, "record verdicts", r.scripts.verdict, seqs, verdicts)
}

// recordOnce runs a record-writing script (luaSeqRecordOnce) over seqs
// and their records: stored[i] is false when seqs[i] is not stored.
func (r *Redis) recordOnce(ctx context.Context, what string, s *redis.Script, seqs []uint64, recs [][]byte) ([]bool, error) {
	calls, idx := r.bySeqShard(seqs, s, func(args []any, i int) []any {
		v := recs[i]
		if v == nil {
			v = []byte{}
		}
		return append(args, strconv.FormatUint(seqs[i], 10), v)
	})
	if err := r.run(ctx, calls); err != nil {
		return nil, r.wrap(ctx, what, err)
	}
	stored := make([]bool, len(seqs))
	for ci, c := range calls {
		reply, err := c.cmd.Text()
		if err != nil || len(reply) != len(idx[ci]) {
			return nil, r.wrap(ctx, what, cmp.Or(err, errors.New("malformed script reply")))
		}
		for k, i := range idx[ci] {
			stored[i] = reply[k] == '1'
		}
	}
	return stored, nil
}
