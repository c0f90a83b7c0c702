package pipeline

import (
	"time"

	"github.com/neardup/neardup/metrics"
	"github.com/neardup/neardup/verify"
)

// observe reports one document's outcome to the metrics: its kind, its
// candidates and their verifications, and the time it spent being verified
// and resolved.
func (p *Pipeline) observe(r verify.Result, o Output, resolveStart time.Time) {
	m := p.cfg.Metrics
	if m == nil {
		return
	}
	j := r.Tag.(*job)
	if o.Dead != nil {
		m.DeadLetter(string(o.Dead.Reason))
		return
	}
	if j.del != nil {
		m.Document(KindDeleted, false)
		return
	}
	if !j.verifyAt.IsZero() {
		m.Stage(metrics.StageVerify, resolveStart.Sub(j.verifyAt))
	}
	m.Stage(metrics.StageResolve, time.Since(resolveStart))
	kind, replay := KindUnique, j.res.Replay && j.res.Verdict != nil
	if o.Event != nil {
		kind = o.Event.Kind
	}
	m.Document(kind, replay)
	m.Candidates(len(r.Verdicts), j.res.Truncated, j.res.Common)
	for _, v := range r.Verdicts {
		m.Verification(v.Check, string(v.Kind))
	}
	m.Correction(len(o.Corrections))
}
