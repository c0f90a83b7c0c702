package pipeline

import (
	"context"
	"time"
)

// Clusters.
//
// A duplicate joins the cluster of the document it duplicates: the
// cluster that document's recorded verdict names, in the index, the same
// for every member, after a restart and in scan. The cluster cache holds
// what this process recorded and read; a miss is read from the index.
// When the earlier document's verdict is not recorded yet (it is still in
// flight: on another member, or an earlier attempt of its own replayed
// after this one), the resolve stage waits for it, at most
// Config.SettleWait, so that the cluster does not depend on which member
// got there first. An earlier document of this run is always resolved
// first (the resolve stage keeps input order), except a replay read after
// newer documents, which cannot be waited for.
//
// Candidates are no longer settled by their cluster (the verifier once
// left the other members of a near duplicate's cluster unverified): which
// candidates were settled depended on what the process had decided
// recently, so the matches listed and duplicate_of depended on the
// process, and settling every candidate whose cluster the index knows
// lost listed links (licensecheck 557 → 423 of 567 full license texts
// linked to their license). Every candidate is verified.

// clusterOfRecord decodes the cluster of document seq (id) from its
// verdict as read from the index, and remembers it; hit is false when no
// verdict was read or recorded, or it does not decode.
func (p *Pipeline) clusterOfRecord(seq uint64, id string, v []byte) (string, bool) {
	if len(v) == 0 {
		return "", false
	}
	rec, err := decodeRecord(id, v)
	if err != nil {
		return "", false
	}
	c := rec.Cluster
	if c == "" {
		c = id
	}
	p.clusters.put(seq, c)
	return c, true
}

// clustersOf returns the clusters of documents seqs, earlier than j: from
// the cluster cache (which holds every document this run resolved), else
// from their verdicts in the index, waiting up to Config.SettleWait for a
// verdict not recorded yet. A document whose cluster is not known then
// (one removed, or still in flight past the wait, or one of this run's
// that comes after j and so cannot be waited for) is left out, counted in
// Stats.ClusterUnknown; bad are those whose recorded verdict does not
// decode. Before it waits it records the verdicts pv holds.
func (p *Pipeline) clustersOf(ctx context.Context, j *job, seqs []uint64, fl *inflight, pv *pending) (known map[uint64]string, bad map[uint64]bool, err error) {
	out := map[uint64]string{}
	bad = map[uint64]bool{}
	var missing []uint64
	for _, s := range seqs {
		if c, ok := p.clusters.get(s); ok && c != "" {
			out[s] = c
		} else if ok {
			p.unknown.Add(1) // rejected after its lookup: no verdict to wait for
		} else if f := fl.get(s); f != nil && f != j {
			// One of this run's, not resolved yet: it comes after j (a
			// replay read after newer documents), and j cannot wait for
			// it.
			p.unknown.Add(1)
		} else {
			missing = append(missing, s)
		}
	}
	ids := map[uint64]string{}
	for _, c := range j.cands {
		ids[c.Seq] = c.ID
	}
	if j.res.Copy != "" {
		ids[j.res.CopySeq] = j.res.Copy
	}
	deadline := time.Now().Add(p.cfg.SettleWait)
	wait := 20 * time.Millisecond
	for len(missing) > 0 {
		var vs [][]byte
		if err := p.retry(ctx, "verdicts", func(ctx context.Context) error {
			var err error
			vs, err = p.ix.Verdicts(ctx, missing)
			return err
		}); err != nil {
			return nil, nil, err
		}
		var still []uint64
		for i, s := range missing {
			switch {
			case i >= len(vs) || vs[i] == nil:
				p.unknown.Add(1) // not stored: removed or expired since
			case len(vs[i]) == 0:
				still = append(still, s) // stored, no verdict yet
			default:
				c, ok := p.clusterOfRecord(s, ids[s], vs[i])
				if !ok {
					p.unknown.Add(1)
					bad[s] = true
					continue
				}
				out[s] = c
			}
		}
		missing = still
		if len(missing) == 0 || p.cfg.SettleWait < 0 || time.Now().Add(wait).After(deadline) {
			p.unknown.Add(int64(len(missing)))
			break
		}
		// What this batch decided before j is recorded before j waits
		// (recordPending): the member j waits for may be waiting for it.
		if err := p.recordPending(ctx, pv); err != nil {
			return nil, nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, nil, ctx.Err()
		}
		wait = min(2*wait, time.Second)
	}
	return out, bad, nil
}
