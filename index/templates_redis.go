package index

import (
	"context"
)

// luaTemplates returns the template records of documents, as luaSources
// does source records.
var luaTemplates = luaSeqRecords("t")

// luaRecordTemplates records template records: ARGV[7…] = (seq
// record)×n; of two records of one document the lower finder's is kept,
// as for source records. Reply: per seq one byte, 1 when stored (or
// already set), 0 when the document is not stored.
var luaRecordTemplates = luaSeqRecordOnce("t")

// Templates implements [Store].
func (r *Redis) Templates(ctx context.Context, seqs []uint64) ([][]byte, error) {
	return r.records(ctx, "templates", r.scripts.templates, seqs)
}

// RecordTemplates implements [Store]: one script call per record shard of
// the documents (one on a single node), all in one round trip.
func (r *Redis) RecordTemplates(ctx context.Context, seqs []uint64, recs [][]byte) ([]bool, error) {
	return r.recordFound(ctx, templateKind, r.scripts.recTemplates, seqs, recs)
}
