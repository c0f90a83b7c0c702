package index

import (
	"context"
	"fmt"
	"testing"
)

// paramsOf returns the parameters a store was opened with.
func paramsOf(s Store) Params {
	switch x := s.(type) {
	case *Memory:
		return x.p
	case *Redis:
		return x.p
	case readOnly:
		return paramsOf(x.Store)
	}
	panic(fmt.Sprintf("paramsOf(%T)", s))
}

// seqsOf returns the Seqs of ids as Lookup gives them: a stored id's
// Seq, else one that names no stored document.
func seqsOf(t testing.TB, s Store, ids ...string) []uint64 {
	t.Helper()
	seqs, err := lookupSeqs(context.Background(), s, ids...)
	if err != nil {
		t.Fatalf("Lookup(%q): %v", ids, err)
	}
	return seqs
}

func lookupSeqs(ctx context.Context, s Store, ids ...string) ([]uint64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	p := paramsOf(s)
	es := make([]Entry, len(ids))
	for i, id := range ids {
		es[i] = Entry{ID: id, Bands: make([]uint64, p.Bands)}
	}
	res, err := s.Lookup(ctx, es)
	if err != nil {
		return nil, err
	}
	seqs := make([]uint64, len(ids))
	for i := range res {
		if res[i].Replay {
			seqs[i] = res[i].Seq
		} else {
			seqs[i] = 1<<48 - 1 // names no document
		}
	}
	return seqs, nil
}

// recordVerdict records v for the document stored under id, or fails
// with ErrNotFound when none is.
func recordVerdict(ctx context.Context, s Store, id string, v []byte) error {
	seqs, err := lookupSeqs(ctx, s, id)
	if err != nil {
		return err
	}
	stored, err := s.RecordVerdicts(ctx, seqs, [][]byte{v})
	if err != nil {
		return err
	}
	if !stored[0] {
		return fmt.Errorf("record verdict %q: %w", id, ErrNotFound)
	}
	return nil
}
