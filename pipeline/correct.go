package pipeline

import (
	"context"
	"encoding/json"
)

// Reviser is what recording corrections needs of the index;
// [index.Store] implementations satisfy it. Without it corrections stay
// events only.
type Reviser interface {
	ReviseVerdicts(ctx context.Context, ids []string, old, verdicts [][]byte) ([]bool, error)
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
	var ids []string
	var evs []*Event
	for _, o := range outs {
		for _, c := range o.Corrections {
			ids, evs = append(ids, c.ID), append(evs, c)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var cur [][]byte
	if err := p.retry(ctx, "read-verdicts", func(ctx context.Context) error {
		var err error
		cur, err = p.ix.Verdicts(ctx, ids)
		return err
	}); err != nil {
		return err
	}
	var rids []string
	var old, recs [][]byte
	seen := map[string]bool{}
	for i, c := range evs {
		if seen[c.ID] {
			continue
		}
		if cur[i] != nil {
			rec, err := decodeRecord(c.ID, cur[i])
			if err != nil || len(rec.Matches) > 0 {
				continue // its own duplicate verdict stands (or cannot be read)
			}
		}
		b, err := json.Marshal(record(c))
		if err != nil {
			continue
		}
		seen[c.ID] = true
		rids, old, recs = append(rids, c.ID), append(old, cur[i]), append(recs, b)
	}
	if len(rids) == 0 {
		return nil
	}
	return p.retry(ctx, "record-corrections", func(ctx context.Context) error {
		_, err := rv.ReviseVerdicts(ctx, rids, old, recs)
		return err
	})
}
