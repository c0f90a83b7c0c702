package index

import (
	"cmp"
	"context"
	"errors"
)

// luaSources returns the source records of ids, as luaFeatures does
// features (nil also when none was recorded).
var luaSources = luaRecords("s")

// luaRecordSources records source records: ARGV[7…] = (id idg record)×n,
// first write wins. Reply: per id one byte, 1 when stored or already set,
// 0 when the id is unknown.
var luaRecordSources = luaRecordOnce("s")

// Sources implements [Store].
func (r *Redis) Sources(ctx context.Context, ids []string) ([][]byte, error) {
	return r.records(ctx, "sources", r.scripts.sources, ids)
}

// RecordSources implements [Store]: one script call per shard of the ids
// (one on a single node), all in one round trip.
func (r *Redis) RecordSources(ctx context.Context, ids []string, copied [][]byte) ([]bool, error) {
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	if err := checkSources(ids, copied); err != nil {
		return nil, err
	}
	calls, idx := r.byIDShard(ids, r.scripts.recSources, func(args []any, i int) []any {
		return append(args, ids[i], r.idGroup(ids[i]), copied[i])
	})
	if err := r.run(ctx, calls); err != nil {
		return nil, r.wrap(ctx, "record sources", err)
	}
	stored := make([]bool, len(ids))
	for ci, c := range calls {
		reply, err := c.cmd.Text()
		if err != nil || len(reply) != len(idx[ci]) {
			return nil, r.wrap(ctx, "record sources", cmp.Or(err, errors.New("malformed script reply")))
		}
		for k, i := range idx[ci] {
			stored[i] = reply[k] == '1'
		}
	}
	return stored, nil
}
