package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/metrics"
	"github.com/neardup/neardup/stream"
	"github.com/neardup/neardup/verify"
)

// Remover is what deletes need of the index; [index.Store]
// implementations satisfy it. An Index without it turns every delete
// into a dead letter (ReasonNoDelete).
type Remover interface {
	Remove(ctx context.Context, ids []string) ([]bool, error)
}

// ReasonNoDelete: a delete reached a pipeline whose index cannot remove
// documents.
const ReasonNoDelete Reason = "delete_unsupported"

// deletion is a delete job's outcome: whether the id was stored.
type deletion struct {
	found bool
}

// prepareDelete checks a delete item's id; nothing is sketched.
func (p *Pipeline) prepareDelete(j *job) {
	it := j.item
	if it.Doc.ID == "" {
		j.dead = p.deadLetter(it, &InvalidError{Reason: ReasonMissingID, Detail: "delete (tombstone) without a key"})
		return
	}
	if err := CheckID(it.Doc.ID); err != nil {
		j.dead = p.deadLetter(it, &InvalidError{Reason: ReasonBadID, ID: strings.ToValidUTF8(stream.Shorten(it.Doc.ID), "?"), Detail: err.Error()})
		return
	}
	j.del = &deletion{}
}

// processBatches processes a batch in input order: runs of documents
// through processBatch, runs of deletes through removeBatch, so that a
// delete removes what every earlier input stored and nothing a later one
// stores (a document re-sent after its delete is new).
func (p *Pipeline) processBatches(ctx context.Context, batch []*job, verifyIn chan<- verify.Job, fl *inflight) error {
	for len(batch) > 0 {
		n, del := 1, batch[0].item.Delete
		for n < len(batch) && batch[n].item.Delete == del {
			n++
		}
		var err error
		if del {
			err = p.removeBatch(ctx, batch[:n], verifyIn)
		} else {
			err = p.processBatch(ctx, batch[:n], verifyIn, fl)
		}
		if err != nil {
			return err
		}
		batch = batch[n:]
	}
	return nil
}

// removeBatch removes the documents of delete jobs from the index, in one
// call, and hands the jobs on in order.
func (p *Pipeline) removeBatch(ctx context.Context, batch []*job, verifyIn chan<- verify.Job) error {
	live, err := awaitLive(ctx, batch)
	if err != nil {
		return err
	}
	ids := make([]string, len(live))
	for i, j := range live {
		ids[i] = j.item.Doc.ID
	}
	if len(ids) > 0 {
		rm, ok := p.ix.(Remover)
		if !ok {
			for _, j := range live {
				j.dead, j.del = p.deadLetter(j.item, &InvalidError{Reason: ReasonNoDelete, ID: j.item.Doc.ID,
					Detail: fmt.Sprintf("the index (%T) cannot remove documents", p.ix)}), nil
			}
		} else {
			var found []bool
			t0 := time.Now()
			err := p.retry(ctx, "delete", func(ctx context.Context) error {
				var err error
				found, err = rm.Remove(ctx, ids)
				return err
			})
			p.cfg.Metrics.Stage(metrics.StageIndex, time.Since(t0))
			if errors.Is(err, index.ErrInvalid) {
				// Not the index being away: the deletes cannot be done
				// (a read-only index, a corrupt keys record).
				for _, j := range live {
					j.dead, j.del = p.deadLetter(j.item, &InvalidError{Reason: ReasonNoDelete, ID: j.item.Doc.ID, Detail: err.Error()}), nil
				}
			} else if err != nil {
				return err
			} else if len(found) != len(ids) {
				return fmt.Errorf("pipeline: index removed %d of %d ids", len(found), len(ids))
			} else {
				for i, j := range live {
					j.del.found = found[i]
				}
			}
		}
	}
	return handOn(ctx, batch, verifyIn)
}

// deletedEvent is a delete job's output event. Nothing of the removed
// document stays in the pipeline's caches that could name a later
// document: they are keyed by Seq, and a document sent again under the
// id gets a new one.
func (p *Pipeline) deletedEvent(j *job) *Event {
	return p.DeletedEvent(j.item.Doc, j.item.Source, j.del.found)
}

// DeletedEvent is the event that answers the delete of doc (only its ID
// is read) from src: found reports that the document was stored. neardup
// delete produces it as a member answering a tombstone does.
func (p *Pipeline) DeletedEvent(doc Document, src Source, found bool) *Event {
	return &Event{
		ID:       doc.ID,
		Kind:     KindDeleted,
		Cluster:  doc.ID,
		Source:   p.eventSource(doc, src),
		Params:   p.cfg.Params,
		At:       p.cfg.Now().UTC(),
		NotFound: !found,
	}
}
