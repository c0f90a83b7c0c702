package pipeline

import (
	"context"
	"encoding/json"
)

// Reviser is what recording corrections needs of the index;
// [index.Store] implementations satisfy it. Without it corrections stay
// events only.
type Reviser interface {
	ReviseVerdicts(ctx context.Context, seqs []uint64, old, verdicts [][]byte) ([]bool, error)
}

// recordCorrections records the corrections of outs (Redis Cluster: a
// later document, admitted concurrently, that did not see the earlier one)
// as the later documents' verdicts, so a replay of a later document
// returns the corrected verdict instead of its own. A later document's
// verdict is replaced only while it is unique (or none is recorded yet:
// its own, when it comes, is then ignored, as every second verdict is);
// one that found a duplicate of its own keeps it, and of several
// corrections of one document the first recorded wins. The replacement is
// a compare-and-set on the verdict read, so a verdict recorded meanwhile
// is never overwritten.
func (p *Pipeline) recordCorrections(ctx context.Context, outs []Output) error {
	rv, ok := p.ix.(Reviser)
	if !ok {
		return nil
	}
	var seqs []uint64
	var evs []*Event
	for _, o := range outs {
		for i, c := range o.Corrections {
			if i < len(o.CorrectionSeqs) && o.CorrectionSeqs[i] != 0 {
				seqs, evs = append(seqs, o.CorrectionSeqs[i]), append(evs, c)
			}
		}
	}
	if len(seqs) == 0 {
		return nil
	}
	cur, err := p.readVerdicts(ctx, seqs)
	if err != nil {
		return err
	}
	var rseqs []uint64
	var old, recs [][]byte
	var clusters []string
	seen := map[uint64]bool{}
	for i, c := range evs {
		if seen[seqs[i]] || cur[i] == nil {
			continue // not stored (any more): nothing to correct
		}
		var was []byte
		if len(cur[i]) > 0 {
			rec, err := decodeRecord(c.ID, cur[i])
			if err != nil || len(rec.Matches) > 0 {
				continue // its own duplicate verdict stands (or cannot be read)
			}
			was = cur[i]
		}
		b, err := json.Marshal(record(c))
		if err != nil {
			continue
		}
		seen[seqs[i]] = true
		rseqs, old, recs = append(rseqs, seqs[i]), append(old, was), append(recs, b)
		clusters = append(clusters, c.Cluster)
	}
	if len(rseqs) == 0 {
		return nil
	}
	revised, err := p.reviseVerdicts(ctx, "record-corrections", rv, rseqs, old, recs)
	if err != nil {
		return err
	}
	for i, ok := range revised {
		if ok && i < len(clusters) {
			p.clusters.put(rseqs[i], clusters[i])
		}
	}
	return nil
}

// reviseVerdicts replaces the verdicts of seqs that still read old by
// verdicts (index.Store.ReviseVerdicts), retried as op; revised says which
// were replaced.
func (p *Pipeline) reviseVerdicts(ctx context.Context, op string, rv Reviser, seqs []uint64, old, verdicts [][]byte) ([]bool, error) {
	var revised []bool
	err := p.retry(ctx, op, func(ctx context.Context) error {
		var err error
		revised, err = rv.ReviseVerdicts(ctx, seqs, old, verdicts)
		return err
	})
	return revised, err
}

// readVerdicts reads the recorded verdicts of seqs (nil: none), retried.
func (p *Pipeline) readVerdicts(ctx context.Context, seqs []uint64) ([][]byte, error) {
	var cur [][]byte
	err := p.retry(ctx, "read-verdicts", func(ctx context.Context) error {
		var err error
		cur, err = p.ix.Verdicts(ctx, seqs)
		return err
	})
	return cur, err
}
