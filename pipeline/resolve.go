package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/verify"
)

// resolve turns verification results into the document's output, records
// the verdict in the index and remembers the cluster.
func (p *Pipeline) resolve(ctx context.Context, r verify.Result) (Output, error) {
	j := r.Tag.(*job)
	o := Output{Tag: j.item.Tag}
	if j.dead != nil {
		o.Dead = j.dead
		return o, nil
	}
	doc := j.item.Doc
	if j.res.Replay && j.res.Verdict != nil {
		var ev Event
		if err := json.Unmarshal(j.res.Verdict, &ev); err != nil {
			return o, fmt.Errorf("pipeline: recorded verdict of %q: %w", doc.ID, err)
		}
		ev.Replay = true
		p.clusters.put(ev.ID, ev.Cluster)
		if ev.Kind != KindUnique || p.cfg.EmitUnique {
			o.Event = &ev
		}
		return o, nil
	}
	ev := &Event{
		ID:        doc.ID,
		Kind:      KindUnique,
		Cluster:   doc.ID,
		Source:    EventSource{URL: doc.URL, Meta: doc.Meta, Source: j.item.Source},
		Params:    p.cfg.Params,
		At:        p.cfg.Now().UTC(),
		Truncated: j.res.Truncated,
	}
	if !doc.TS.IsZero() {
		ts := doc.TS
		ev.Source.TS = &ts
	}
	var later []Match
	for i, v := range r.Verdicts {
		if v.Kind == verify.Distinct {
			continue
		}
		m := Match{ID: j.cands[i].ID, Kind: string(v.Kind), Method: v.Check, Scores: v.Scores}
		if i < j.earlier {
			ev.Matches = append(ev.Matches, m)
		} else {
			later = append(later, m)
		}
	}
	sortMatches(ev.Matches, j.cands)
	if len(ev.Matches) > 0 {
		b := ev.Matches[0]
		ev.Kind, ev.DuplicateOf, ev.Method = b.Kind, b.ID, b.Method
		sc := b.Scores
		ev.Scores = &sc
	}
	if len(ev.Matches) > p.cfg.MaxMatches {
		ev.Matches = ev.Matches[:p.cfg.MaxMatches]
	}
	if ev.DuplicateOf != "" {
		c, err := p.clusterOf(ctx, ev.DuplicateOf)
		if err != nil {
			return o, err
		}
		ev.Cluster = c
	}
	rec, err := json.Marshal(ev)
	if err != nil {
		return o, fmt.Errorf("pipeline: encode verdict: %w", err)
	}
	err = p.retry(ctx, "record-verdict", func(ctx context.Context) error {
		return p.ix.RecordVerdict(ctx, doc.ID, rec)
	})
	if err != nil && !errors.Is(err, index.ErrNotFound) {
		return o, err
	}
	p.clusters.put(ev.ID, ev.Cluster)
	if ev.Kind != KindUnique || p.cfg.EmitUnique {
		o.Event = ev
	}
	for _, m := range later {
		o.Corrections = append(o.Corrections, p.correction(ev, m))
	}
	return o, nil
}

// clusterOf returns the cluster of an earlier document: from the cache of
// recent decisions, else from the verdict recorded in the index (decided
// by another instance, or forgotten here). A document whose verdict is not
// recorded yet (in flight elsewhere) stands for its own cluster.
func (p *Pipeline) clusterOf(ctx context.Context, id string) (string, error) {
	if c, ok := p.clusters.lookup(id); ok {
		return c, nil
	}
	var recs [][]byte
	err := p.retry(ctx, "verdicts", func(ctx context.Context) error {
		var err error
		recs, err = p.ix.Verdicts(ctx, []string{id})
		return err
	})
	if err != nil {
		return "", err
	}
	if len(recs) == 1 && len(recs[0]) > 0 {
		var ev struct {
			Cluster string `json:"cluster"`
		}
		if json.Unmarshal(recs[0], &ev) == nil && ev.Cluster != "" {
			p.clusters.put(id, ev.Cluster)
			return ev.Cluster, nil
		}
	}
	return id, nil
}

// correction is the event a later document would have produced had it seen
// ev's document: it names the later document as a duplicate of this one.
// Scores are turned around to read from the later document's side.
func (p *Pipeline) correction(ev *Event, m Match) *Event {
	sc := m.Scores
	sc.ContainmentAB, sc.ContainmentBA = sc.ContainmentBA, sc.ContainmentAB
	return &Event{
		ID:          m.ID,
		Kind:        m.Kind,
		DuplicateOf: ev.ID,
		Cluster:     ev.Cluster,
		Method:      m.Method,
		Scores:      &sc,
		Matches:     []Match{{ID: ev.ID, Kind: m.Kind, Method: m.Method, Scores: sc}},
		Params:      ev.Params,
		At:          ev.At,
		Correction:  true,
	}
}
