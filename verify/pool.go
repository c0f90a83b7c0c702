package verify

import (
	"context"
	"errors"
	"fmt"
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
	// the verdicts come back. With Load set, an entry may be nil until a
	// worker needs it: the worker then stores Load's answer there (each
	// entry is written by one worker, before the job's Result is sent).
	Candidates []*sketch.Features
	// Load, when not nil, returns candidate i's features for a nil
	// Candidates entry, the first time a worker verifies it: the caller
	// decodes stored features in the workers, in parallel, and only for
	// the candidates verified (a settled one is never loaded). A nil
	// answer makes the candidate Distinct with no check, as a nil entry
	// does. Load is called from several workers at once (for different
	// jobs, or different candidates of one job).
	Load func(i int) *sketch.Features
	// Discount is what verification leaves out of Doc (and of the
	// candidates): its text in common keys. nil leaves nothing out.
	Discount *Discount
	// Groups, when not nil, holds one entry per candidate: candidates
	// with the same non-negative group are known duplicates of each other
	// (members of one cluster), −1 stands alone. Candidates are then
	// verified in order, and once one of a group is found a near or exact
	// duplicate the group's later candidates are not verified: their
	// verdicts are Settled. Put a group's representative first.
	Groups []int32
	// SettleAfter, when positive, bounds what a document that copies a
	// widely copied text costs: its first Ranked candidates (the index's
	// ranking, best first) are verified in order, and once SettleAfter of
	// them are found near or exact duplicates the rest of them are not
	// verified (nor loaded): their verdicts are Settled. Candidates from
	// Ranked on are always verified. Which candidates are settled depends
	// only on the candidates and their verdicts, so it is the same on
	// every run and every index.
	SettleAfter int
	Ranked      int
	// Tag is the caller's, returned untouched in the Result.
	Tag any
}

// Result carries the verdicts of one Job.
type Result struct {
	Tag any
	// Verdicts holds one verdict per candidate, in candidate order.
	Verdicts []Verdict
	// Err is set when verifying one of the job's candidates panicked (a
	// bug, or features no check can handle): the verdicts are then
	// incomplete and must not be used. Other jobs are not affected.
	Err error
}

// ErrPanic is wrapped by Result.Err when a verification panicked.
var ErrPanic = errors.New("verify: verification panicked")

// Pool verifies the candidates of a stream of jobs on a bounded set of
// goroutines. It holds only its configuration: the goroutines live inside
// [Pool.Run], which starts them and waits for them.
type Pool struct {
	v       *Verifier
	workers int
	// check verifies one pair: v.verify, replaced by tests that need a
	// verification to fail.
	check func(a, b *sketch.Features, d *Discount, s *scratch, vals *scoreVals) Verdict
}

// NewPool returns a pool of workers goroutines running v; workers ≤ 0
// means runtime.GOMAXPROCS(0). v must not be nil.
func NewPool(v *Verifier, workers int) *Pool {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return &Pool{v: v, workers: workers, check: v.verify}
}

// maxChunk bounds the candidates verified by one task, so that a job with
// thousands of candidates still spreads over all workers while a task
// amortises its channel hand-off over several verifications.
const maxChunk = 32

// maxBatch bounds the jobs the dispatcher groups into one batch. Jobs that
// are already waiting in the input travel together: one hand-off to the
// workers and one to the emitter per batch instead of per job, which is
// most of the pool's cost when jobs are small. A job never waits for a
// batch to fill; a slow input makes batches of one.
const maxBatch = 16

// Run reads jobs from in, verifies the candidates of many jobs in parallel
// and sends one Result per job to out, in the order the jobs arrived.
//
// Backpressure: at most 2·workers+2 batches of up to 16 jobs are in
// flight. When out is not drained, Run stops reading in, so a full pool
// slows the sender; it never drops a job.
//
// Run returns nil once in is closed and every result has been sent, or
// ctx.Err() when ctx is cancelled first; results not yet sent are then
// dropped, and Run returns once the verifications under way finish. Every
// goroutine Run starts has exited when it returns. Run does not close
// out: the caller owns it, typically closing it after Run returns. Run
// may be called again, or concurrently, on the same Pool.
func (p *Pool) Run(ctx context.Context, in <-chan Job, out chan<- Result) error {
	tasks := make(chan task, p.workers)
	order := make(chan *batch, 2*p.workers)
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

// batch is a group of consecutive jobs in flight. Workers fill disjoint
// ranges of verdicts; the worker that finishes the last range closes done,
// which publishes the verdicts to the emitter.
type batch struct {
	jobs     []Job
	verdicts [][]Verdict
	errs     []error // per job; written by the worker that failed, read after done
	errMu    sync.Mutex
	left     atomic.Int32 // tasks not yet finished
	done     chan struct{}
}

// task is a range of one job's candidates.
type task struct {
	b      *batch
	job    int
	lo, hi int
	vals   []scoreVals // backing for the range's scores
}

// dispatch groups jobs into batches and batches into tasks. It queues each
// batch for the emitter before handing out its tasks, so the emitter's
// queue is in input order and every queued batch's tasks reach the
// workers.
func (p *Pool) dispatch(ctx context.Context, in <-chan Job, order chan<- *batch, tasks chan<- task) error {
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
		b := &batch{jobs: make([]Job, 1, maxBatch), done: make(chan struct{})}
		b.jobs[0] = j
		cands := len(j.Candidates)
		closed := false
	fill:
		for len(b.jobs) < maxBatch && cands < maxBatch*maxChunk {
			select {
			case j, ok := <-in:
				if !ok {
					closed = true
					break fill
				}
				b.jobs = append(b.jobs, j)
				cands += len(j.Candidates)
			default:
				break fill
			}
		}
		if err := p.send(ctx, b, cands, order, tasks); err != nil {
			return err
		}
		if closed {
			return nil
		}
	}
}

// send queues b for the emitter and hands its candidates to the workers
// in chunks of about cands/workers.
func (p *Pool) send(ctx context.Context, b *batch, cands int, order chan<- *batch, tasks chan<- task) error {
	chunk := min(maxChunk, max(1, (cands+p.workers-1)/p.workers))
	b.verdicts = make([][]Verdict, len(b.jobs))
	b.errs = make([]error, len(b.jobs))
	all := make([]Verdict, cands)
	vals := make([]scoreVals, cands)
	ntasks, off := 0, 0
	for i, j := range b.jobs {
		n := len(j.Candidates)
		b.verdicts[i] = all[off : off+n : off+n]
		ntasks += (n + jobChunk(j, chunk) - 1) / jobChunk(j, chunk)
		off += n
	}
	b.left.Store(int32(ntasks))
	if ntasks == 0 {
		close(b.done)
	}
	select {
	case order <- b:
	case <-ctx.Done():
		return ctx.Err()
	}
	off = 0
	for i, j := range b.jobs {
		n := len(j.Candidates)
		c := jobChunk(j, chunk)
		for lo := 0; lo < n; lo += c {
			hi := min(lo+c, n)
			select {
			case tasks <- task{b: b, job: i, lo: lo, hi: hi, vals: vals[off+lo : off+hi]}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		off += n
	}
	return nil
}

// jobChunk is the number of j's candidates one task verifies: all of them
// when j has groups or settles (its verdicts depend on each other, so they
// are verified in order by one worker), else chunk.
func jobChunk(j Job, chunk int) int {
	if j.Groups != nil || j.SettleAfter > 0 {
		return max(1, len(j.Candidates))
	}
	return chunk
}

// work verifies tasks until tasks is closed. After cancellation it only
// drains them: nobody will read the results.
func (p *Pool) work(ctx context.Context, tasks <-chan task) {
	s := new(scratch)
	for t := range tasks {
		if ctx.Err() == nil {
			if err := p.runTask(t, s); err != nil {
				t.b.errMu.Lock()
				t.b.errs[t.job] = err
				t.b.errMu.Unlock()
				s = new(scratch) // the panic may have left it inconsistent
			}
		}
		if t.b.left.Add(-1) == 0 {
			close(t.b.done)
		}
	}
}

// runTask verifies one task's candidates. A panic fails the task's job
// only: it comes back as an error wrapping ErrPanic.
func (p *Pool) runTask(t task, s *scratch) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrPanic, r)
		}
	}()
	j := t.b.jobs[t.job]
	dst := t.b.verdicts[t.job]
	// The document's converted anchors are kept for this task's
	// candidates only: features may be recycled once their job is done,
	// so a pointer names the same document within one job only.
	s.saFor = nil
	if j.Groups != nil {
		// One task holds the whole job (jobChunk).
		s.settled = s.settled[:0]
		for i := t.lo; i < t.hi; i++ {
			g := int(j.Groups[i])
			if g >= 0 && g < len(s.settled) && s.settled[g] {
				dst[i] = Verdict{Kind: Distinct, Settled: true}
				continue
			}
			dst[i] = p.check(j.Doc, candidate(j, i), j.Discount, s, &t.vals[i-t.lo])
			if g >= 0 && settles(dst[i].Kind) {
				for len(s.settled) <= g {
					s.settled = append(s.settled, false)
				}
				s.settled[g] = true
			}
		}
		return nil
	}
	if j.SettleAfter > 0 {
		// One task holds the whole job (jobChunk).
		near := 0
		for i := t.lo; i < t.hi; i++ {
			ranked := i < j.Ranked
			if ranked && near >= j.SettleAfter {
				dst[i] = Verdict{Kind: Distinct, Settled: true}
				continue
			}
			dst[i] = p.check(j.Doc, candidate(j, i), j.Discount, s, &t.vals[i-t.lo])
			if ranked && settles(dst[i].Kind) {
				near++
			}
		}
		return nil
	}
	for i := t.lo; i < t.hi; i++ {
		dst[i] = p.check(j.Doc, candidate(j, i), j.Discount, s, &t.vals[i-t.lo])
	}
	return nil
}

// candidate returns j's candidate i, loading it (Job.Load) when its entry
// is nil. Only the worker verifying candidate i calls it.
func candidate(j Job, i int) *sketch.Features {
	c := j.Candidates[i]
	if c == nil && j.Load != nil && j.Doc != nil {
		c = j.Load(i)
		j.Candidates[i] = c
	}
	return c
}

// settles reports whether a verdict of kind k settles the other
// candidates of its group: a near or exact duplicate of one member is a
// near duplicate of the cluster, which the others could only confirm. A
// partial one does not: another member may hold more of the document, or
// all of it.
func settles(k Kind) bool { return k == Near || k == Exact }

// emit sends results in queue order as each batch completes.
func emit(ctx context.Context, order <-chan *batch, out chan<- Result) error {
	for b := range order {
		select {
		case <-b.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		for i, j := range b.jobs {
			select {
			case out <- Result{Tag: j.Tag, Verdicts: b.verdicts[i], Err: b.errs[i]}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}
