package index

import (
	"context"
)

// luaSources returns the source records of documents, as luaFeatures
// does features ("" also when none was recorded).
var luaSources = luaSeqRecords("s")

// luaRecordSources records source records: ARGV[7…] = (seq record)×n; of
// two records of one document, the one whose finder (its first 6 bytes,
// big-endian) is lower is kept, whichever was written first. Reply: per
// seq one byte, 1 when stored (or already set), 0 when the document is
// not stored.
var luaRecordSources = luaSeqRecordOnce("s")

// Sources implements [Store].
func (r *Redis) Sources(ctx context.Context, seqs []uint64) ([][]byte, error) {
	return r.records(ctx, "sources", r.scripts.sources, seqs)
}

// RecordSources implements [Store]: one script call per record shard of
// the documents (one on a single node), all in one round trip.
func (r *Redis) RecordSources(ctx context.Context, seqs []uint64, copied [][]byte) ([]bool, error) {
	return r.recordFound(ctx, sourceKind, r.scripts.recSources, seqs, copied)
}
