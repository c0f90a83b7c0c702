package service

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/pipeline"
)

// AcceptEmptyPath is the endpoint on http.admin_addr that accepts a lost
// index (POST): see [Service.AcceptEmptyIndex] and [AdminHandler].
const AcceptEmptyPath = "/admin/accept-empty-index"

// ErrNotLost is returned by AcceptEmptyIndex when the index is not lost.
var ErrNotLost = errors.New("service: the index is not lost")

// acceptor is the optional loss acceptance of an index.Store (index.Redis).
type acceptor interface{ AcceptEmpty() }

// prober is what the health check reads to find a lost index while no
// documents arrive: any per-id read runs the namespace check.
type prober interface {
	Verdicts(ctx context.Context, seqs []uint64) ([][]byte, error)
}

// probeSeq is the document the health check reads (no document has Seq
// 0; the read stores nothing).
const probeSeq = 0

// loss is the lost-index state of a service. While lost, every index
// call of the pipeline waits (nothing is decided, so nothing is reported
// or committed) until the loss ends: accepted (AcceptEmptyIndex, or
// index.accept_empty at once) or the namespace found again (the data was
// restored, or another member accepted the loss).
//
// epoch counts the losses ended: a call that started before the end of
// a loss and failed with index.ErrIndexLost is retried, not taken for a
// new loss.
type loss struct {
	mu    sync.Mutex
	epoch uint64
	over  chan struct{} // closed when the loss ends; nil when not lost
	why   string
}

// lossState returns the current epoch, and while lost the channel
// closed when the loss ends.
func (s *Service) lossState() (uint64, <-chan struct{}) {
	s.loss.mu.Lock()
	defer s.loss.mu.Unlock()
	return s.loss.epoch, s.loss.over
}

// lostReason is why the index is lost; "" when it is not.
func (s *Service) lostReason() string {
	s.loss.mu.Lock()
	defer s.loss.mu.Unlock()
	if s.loss.over == nil {
		return ""
	}
	return s.loss.why
}

// markLost records that a call begun at epoch found the index lost. With
// index.accept_empty the loss is accepted at once.
func (s *Service) markLost(epoch uint64, err error) {
	s.loss.mu.Lock()
	defer s.loss.mu.Unlock()
	if s.loss.epoch != epoch || s.loss.over != nil {
		return // ended since the call began, or already known
	}
	if s.cfg.Index.AcceptEmpty {
		s.log.Error("index lost: its stored documents are gone; going on with an empty index (index.accept_empty): documents seen before read as unseen", "err", err)
		s.endLoss()
		return
	}
	s.loss.over = make(chan struct{})
	s.loss.why = err.Error()
	s.m.IndexLost(true)
	s.m.Ready(false)
	s.log.Error("index lost: its stored documents are gone; nothing is decided until the data is restored or the empty index is accepted (POST "+AcceptEmptyPath+", docs/operations.md)", "err", err)
}

// endLoss accepts the empty index; s.loss.mu is held.
func (s *Service) endLoss() {
	if a, ok := s.store.(acceptor); ok {
		a.AcceptEmpty()
	}
	s.loss.epoch++
	if s.loss.over != nil {
		close(s.loss.over)
		s.loss.over = nil
	}
	s.loss.why = ""
	s.m.IndexLost(false)
}

// AcceptEmptyIndex ends a loss of the index: the member goes on deciding
// against an empty index, so documents stored before read as unseen. It
// returns ErrNotLost when the index is not lost. POST on
// AcceptEmptyPath calls it.
func (s *Service) AcceptEmptyIndex() error {
	s.loss.mu.Lock()
	defer s.loss.mu.Unlock()
	if s.loss.over == nil {
		return ErrNotLost
	}
	s.log.Warn("lost index accepted: deciding against an empty index from now on")
	s.endLoss()
	return nil
}

// IndexLost reports whether the index is lost (nothing is decided).
func (s *Service) IndexLost() bool { return s.lostReason() != "" }

// probeLoss reads the probe id: it finds a lost index while no documents
// arrive, and a namespace that exists again while lost (restored, or
// accepted by another member), which ends the loss.
func (s *Service) probeLoss(ctx context.Context) {
	p, ok := s.store.(prober)
	if !ok {
		return
	}
	if _, isAcceptor := s.store.(acceptor); !isAcceptor {
		return // a store that cannot lose its data
	}
	epoch, lost := s.lossState()
	_, err := p.Verdicts(ctx, []uint64{probeSeq})
	switch {
	case err == nil && lost != nil:
		s.loss.mu.Lock()
		if s.loss.epoch == epoch && s.loss.over != nil {
			s.log.Info("index found again (restored, or accepted by another member): deciding resumes")
			s.loss.epoch++
			close(s.loss.over)
			s.loss.over, s.loss.why = nil, ""
			s.m.IndexLost(false)
		}
		s.loss.mu.Unlock()
	case errors.Is(err, index.ErrIndexLost):
		s.markLost(epoch, err)
	}
}

// gate is the index as the pipeline sees it: a call that finds the index
// lost waits until the loss ends and is then made again; index.ErrIndexLost
// never reaches the pipeline, which would fail and stop the member (and a
// restarted member would not know the namespace existed).
type gate struct {
	s  *Service
	ix pipeline.Index
}

// do runs op, waiting while the index is lost. It returns ctx's error
// when ctx ends while waiting.
func (g gate) do(ctx context.Context, op func() error) error {
	for {
		epoch, lost := g.s.lossState()
		if lost != nil {
			select {
			case <-lost:
				continue
			case <-ctx.Done():
				return fmt.Errorf("service: waiting for the lost index: %w", ctx.Err())
			}
		}
		err := op()
		if !errors.Is(err, index.ErrIndexLost) {
			return err
		}
		g.s.markLost(epoch, err)
	}
}

func (g gate) LookupInsert(ctx context.Context, docs []index.Entry) (res []index.Result, err error) {
	err = g.do(ctx, func() error { res, err = g.ix.LookupInsert(ctx, docs); return err })
	return res, err
}

func (g gate) Features(ctx context.Context, seqs []uint64) (out [][]byte, err error) {
	err = g.do(ctx, func() error { out, err = g.ix.Features(ctx, seqs); return err })
	return out, err
}

func (g gate) Verdicts(ctx context.Context, seqs []uint64) (out [][]byte, err error) {
	err = g.do(ctx, func() error { out, err = g.ix.Verdicts(ctx, seqs); return err })
	return out, err
}

func (g gate) RecordVerdicts(ctx context.Context, seqs []uint64, verdicts [][]byte) (stored []bool, err error) {
	err = g.do(ctx, func() error { stored, err = g.ix.RecordVerdicts(ctx, seqs, verdicts); return err })
	return stored, err
}
