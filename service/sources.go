package service

import (
	"context"
	"fmt"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/pipeline"
)

// Sources lets the sources of widely copied texts through the gate
// (pipeline.Sourcer), so that every member shares them: it waits while
// the index is lost, as every other call does.
func (g gate) Sources(ctx context.Context, seqs []uint64) (out [][]byte, err error) {
	sr, ok := g.ix.(pipeline.Sourcer)
	if !ok {
		return make([][]byte, len(seqs)), nil // none stored
	}
	err = g.do(ctx, func() error { out, err = sr.Sources(ctx, seqs); return err })
	return out, err
}

// RecordSources records sources through the gate (pipeline.Sourcer).
func (g gate) RecordSources(ctx context.Context, seqs []uint64, copied [][]byte) (stored []bool, err error) {
	sr, ok := g.ix.(pipeline.Sourcer)
	if !ok {
		return nil, fmt.Errorf("%w: the index (%T) cannot record sources", index.ErrInvalid, g.ix)
	}
	err = g.do(ctx, func() error { stored, err = sr.RecordSources(ctx, seqs, copied); return err })
	return stored, err
}
