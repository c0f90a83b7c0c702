package index

import (
	"context"
	"fmt"
)

// ReadOnly returns s as a Store that stores nothing: LookupInsert looks
// up (Store.Lookup), RecordVerdict and RecordVerdicts record nothing (and
// report the ids as stored, so a caller goes on as if they were), Delete
// fails with ErrInvalid. Close closes s. It answers "what would s say of
// these documents" without changing s (neardup check).
func ReadOnly(s Store) Store { return readOnly{s} }

type readOnly struct{ Store }

func (r readOnly) LookupInsert(ctx context.Context, docs []Entry) ([]Result, error) {
	return r.Store.Lookup(ctx, docs)
}

func (r readOnly) RecordVerdict(context.Context, string, []byte) error { return nil }

func (r readOnly) RecordVerdicts(_ context.Context, ids []string, _ [][]byte) ([]bool, error) {
	stored := make([]bool, len(ids))
	for i := range stored {
		stored[i] = true
	}
	return stored, nil
}

func (r readOnly) Delete(context.Context, ...string) error {
	return fmt.Errorf("%w: the store is read-only", ErrInvalid)
}

func (r readOnly) ReviseVerdicts(_ context.Context, ids []string, _, _ [][]byte) ([]bool, error) {
	return make([]bool, len(ids)), nil
}

func (r readOnly) Remove(context.Context, []string) ([]bool, error) {
	return nil, fmt.Errorf("%w: the store is read-only", ErrInvalid)
}
