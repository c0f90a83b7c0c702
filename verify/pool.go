package verify

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/neardup/neardup/sketch"
)

// Job is one document and the candidates to verify it against.
type Job struct {
	// Doc is the incoming document's features. A nil Doc makes every
	// candidate Distinct.
	Doc *sketch.Features
	// Candidates are the stored features to compare with, in the order
	// the verdicts come back.
	Candidates []*sketch.Features
	// Tag is the caller's, returned untouched in the Result.
	Tag any
}

// Result carries the verdicts of one Job.
type Result struct {
	Tag any
	// Verdicts holds one verdict per candidate, in candidate order.
	Verdicts []Verdict
}

// Pool verifies the candidates of a stream of jobs on a bounded set of
// goroutines. It holds only its configuration: the goroutines live inside
// [Pool.Run], which starts them and waits for them.
type Pool struct {
	v       *Verifier
	workers int
}

// NewPool returns a pool of workers goroutines running v; workers ≤ 0
// means runtime.GOMAXPROCS(0). v must not be nil.
func NewPool(v *Verifier, workers int) *Pool {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return &Pool{v: v, workers: workers}
}

// Workers returns the number of verifying goroutines Run starts.
func (p *Pool) Workers() int { return p.workers }

// maxChunk bounds the candidates of one job verified by one task, so that
// a job with thousands of candidates still spreads over all workers while
// a task still amortises its channel hand-off over several verifications.
const maxChunk = 32

// Run reads jobs from in, verifies the candidates of many jobs in parallel
// and sends one Result per job to out, in the order the jobs arrived.
//
// Backpressure: at most about 2·workers jobs are in flight. When out is
// not drained, Run stops reading in, so a full pool slows the sender; it
// never drops a job.
//
// Run returns nil once in is closed and every result has been sent, or
// ctx.Err() when ctx is cancelled first; results not yet sent are then
// dropped. Every goroutine Run starts has exited when it returns. Run does
// not close out: the caller owns it, typically closing it after Run
// returns. Run may be called again, or concurrently, on the same Pool.
func (p *Pool) Run(ctx context.Context, in <-chan Job, out chan<- Result) error {
	tasks := make(chan task, p.workers)
	order := make(chan *pending, 2*p.workers)
	var wg sync.WaitGroup
	for range p.workers {
		wg.Go(func() { p.work(ctx, tasks) })
	}
	emitted := make(chan error, 1)
	wg.Go(func() { emitted <- emit(ctx, order, out) })

	err := p.dispatch(ctx, in, order, tasks)
	close(tasks)
	close(order)
	wg.Wait()
	if err != nil {
		return err
	}
	return <-emitted
}

// pending is a job in flight. Workers fill disjoint ranges of verdicts;
// the worker that finishes the last range closes done, which publishes
// the verdicts to the emitter.
type pending struct {
	job      Job
	verdicts []Verdict
	vals     []scoreVals
	left     atomic.Int32 // tasks not yet finished
	done     chan struct{}
}

// task is a range of one job's candidates.
type task struct {
	p      *pending
	lo, hi int
}

// dispatch turns jobs into tasks. It queues each job for the emitter
// before handing out its tasks, so the emitter's queue is in input order
// and every queued job's tasks reach the workers.
func (p *Pool) dispatch(ctx context.Context, in <-chan Job, order chan<- *pending, tasks chan<- task) error {
	for {
		var j Job
		var ok bool
		select {
		case j, ok = <-in:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !ok {
			return nil
		}
		n := len(j.Candidates)
		pj := &pending{job: j, verdicts: make([]Verdict, n), done: make(chan struct{})}
		if j.Doc != nil && n > 0 {
			pj.vals = make([]scoreVals, n)
		}
		chunk := min(maxChunk, max(1, (n+p.workers-1)/p.workers))
		pj.left.Store(int32((n + chunk - 1) / chunk))
		if n == 0 {
			close(pj.done)
		}
		select {
		case order <- pj:
		case <-ctx.Done():
			return ctx.Err()
		}
		for lo := 0; lo < n; lo += chunk {
			select {
			case tasks <- task{p: pj, lo: lo, hi: min(lo+chunk, n)}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// work verifies tasks until tasks is closed. After cancellation it only
// drains them: nobody will read the results.
func (p *Pool) work(ctx context.Context, tasks <-chan task) {
	var s scratch
	for t := range tasks {
		if ctx.Err() == nil {
			j := t.p.job
			for i := t.lo; i < t.hi; i++ {
				var vals *scoreVals
				if t.p.vals != nil {
					vals = &t.p.vals[i]
				}
				t.p.verdicts[i] = p.v.verify(j.Doc, j.Candidates[i], &s, vals)
			}
		}
		if t.p.left.Add(-1) == 0 {
			close(t.p.done)
		}
	}
}

// emit sends results in queue order as each job completes.
func emit(ctx context.Context, order <-chan *pending, out chan<- Result) error {
	for pj := range order {
		select {
		case <-pj.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case out <- Result{Tag: pj.job.Tag, Verdicts: pj.verdicts}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
