package index

import (
	"context"
	"fmt"
)

// ReadOnly returns s as a Store that stores nothing: LookupInsert looks
// up (Store.Lookup), RecordVerdicts, RecordSources and ReviseVerdicts
// record nothing (the first two report the documents as stored, so a
// caller goes on as if they were), Delete and Remove fail with
// ErrInvalid. Close closes s. It answers "what would s say of
// these documents" without changing s (neardup check).
func ReadOnly(s Store) Store { return readOnly{s} }

type readOnly struct{ Store }

func (r readOnly) LookupInsert(ctx context.Context, docs []Entry) ([]Result, error) {
	return r.Store.Lookup(ctx, docs)
}

func (r readOnly) RecordVerdicts(_ context.Context, seqs []uint64, _ [][]byte) ([]bool, error) {
	stored := make([]bool, len(seqs))
	for i := range stored {
		stored[i] = true
	}
	return stored, nil
}

func (r readOnly) Delete(context.Context, ...string) error {
	return fmt.Errorf("%w: the store is read-only", ErrInvalid)
}

func (r readOnly) ReviseVerdicts(_ context.Context, seqs []uint64, _, _ [][]byte) ([]bool, error) {
	return make([]bool, len(seqs)), nil
}

func (r readOnly) Remove(context.Context, []string) ([]bool, error) {
	return nil, fmt.Errorf("%w: the store is read-only", ErrInvalid)
}
