package index

import (
	"cmp"
	"context"
	"errors"
)

// luaTemplates returns the template records of ids, as luaSources does
// source records.
var luaTemplates = luaRecords("t")

// luaRecordTemplates records template records: ARGV[7…] = (id idg
// record)×n, first write wins. Reply: per id one byte, 1 when stored or
// already set, 0 when the id is unknown.
var luaRecordTemplates = luaRecordOnce("t")

// Templates implements the template records (templates.go).
func (r *Redis) Templates(ctx context.Context, ids []string) ([][]byte, error) {
	return r.records(ctx, "templates", r.scripts.templates, ids)
}

// RecordTemplates implements the template records (templates.go): one
// script call per shard of the ids (one on a single node), all in one
// round trip.
func (r *Redis) RecordTemplates(ctx context.Context, ids []string, recs [][]byte) ([]bool, error) {
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	if err := checkTemplates(ids, recs); err != nil {
		return nil, err
	}
	calls, idx := r.byIDShard(ids, r.scripts.recTemplates, func(args []any, i int) []any {
		return append(args, ids[i], r.idGroup(ids[i]), recs[i])
	})
	if err := r.run(ctx, calls); err != nil {
		return nil, r.wrap(ctx, "record templates", err)
	}
	stored := make([]bool, len(ids))
	for ci, c := range calls {
		reply, err := c.cmd.Text()
		if err != nil || len(reply) != len(idx[ci]) {
			return nil, r.wrap(ctx, "record templates", cmp.Or(err, errors.New("malformed script reply")))
		}
		for k, i := range idx[ci] {
			stored[i] = reply[k] == '1'
		}
	}
	return stored, nil
}
