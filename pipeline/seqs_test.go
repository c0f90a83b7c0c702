package pipeline

import (
	"context"
	"testing"

	"github.com/neardup/neardup/index"
)

// storedSeqs returns the Seqs of the documents stored under ids in ix
// (opened with parameters p), as Lookup gives them; 0 for an id that is
// not stored.
func storedSeqs(t testing.TB, ix index.Store, p index.Params, ids ...string) []uint64 {
	t.Helper()
	es := make([]index.Entry, len(ids))
	for i, id := range ids {
		es[i] = index.Entry{ID: id, Bands: make([]uint64, p.Bands)}
	}
	res, err := ix.Lookup(context.Background(), es)
	if err != nil {
		t.Fatalf("Lookup(%q): %v", ids, err)
	}
	seqs := make([]uint64, len(ids))
	for i, r := range res {
		if r.Replay {
			seqs[i] = r.Seq
		}
	}
	return seqs
}
