package service

import (
	"context"
	"fmt"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/pipeline"
)

// Remove lets tombstones through the gate (pipeline.Remover): it waits
// while the index is lost, as every other call does.
func (g gate) Remove(ctx context.Context, ids []string) (removed []bool, err error) {
	rm, ok := g.ix.(pipeline.Remover)
	if !ok {
		return nil, fmt.Errorf("%w: the index (%T) cannot remove documents", index.ErrInvalid, g.ix)
	}
	err = g.do(ctx, func() error { removed, err = rm.Remove(ctx, ids); return err })
	return removed, err
}

// ReviseVerdicts lets recorded corrections through the gate
// (pipeline.Reviser).
func (g gate) ReviseVerdicts(ctx context.Context, seqs []uint64, old, verdicts [][]byte) (revised []bool, err error) {
	rv, ok := g.ix.(pipeline.Reviser)
	if !ok {
		return make([]bool, len(seqs)), nil
	}
	err = g.do(ctx, func() error { revised, err = rv.ReviseVerdicts(ctx, seqs, old, verdicts); return err })
	return revised, err
}
