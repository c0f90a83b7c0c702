package verify

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"go.uber.org/goleak"

	"github.com/neardup/neardup/sketch"
)

// poolCorpus returns documents in families of near duplicates, so that
// verdicts vary between exact, near and distinct.
func poolCorpus(t testing.TB, r *rand.Rand, n int) []*sketch.Features {
	var docs []*sketch.Features
	for len(docs) < n {
		base := words(r, 100+r.IntN(200), 20000)
		for k := range 1 + r.IntN(4) {
			docs = append(docs, features(t, sketch.DefaultConfig(), edit(r, base, float64(k)*0.05)))
		}
	}
	return docs[:n]
}

// randomJobs makes n jobs with 0 to 40 candidates each (some jobs far
// larger than others, so they finish out of order) and tags 0..n−1.
func randomJobs(r *rand.Rand, docs []*sketch.Features, n int) []Job {
	jobs := make([]Job, n)
	for i := range jobs {
		k := r.IntN(6)
		if r.IntN(8) == 0 {
			k = 40
		}
		cands := make([]*sketch.Features, k)
		for c := range cands {
			cands[c] = docs[r.IntN(len(docs))]
		}
		jobs[i] = Job{Doc: docs[r.IntN(len(docs))], Candidates: cands, Tag: i}
	}
	jobs[0].Doc = nil // a job without a document still gets its result
	jobs[1].Candidates = nil
	return jobs
}

// TestPoolOrder feeds jobs through pools of several sizes and checks that
// every job comes back once, in input order, with the verdicts a direct
// call gives, and that no goroutine outlives Run.
func TestPoolOrder(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := rand.New(rand.NewPCG(51, 52))
	docs := poolCorpus(t, r, 40)
	v := mustNew(t, WebProfile())
	jobs := randomJobs(r, docs, 300)
	want := make([][]Verdict, len(jobs))
	for i, j := range jobs {
		want[i] = v.VerifyAll(nil, j.Doc, j.Candidates)
	}
	for _, workers := range []int{0, 1, 3, 8} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			in, out := make(chan Job), make(chan Result, 7)
			errc := make(chan error, 1)
			go func() {
				errc <- NewPool(v, workers).Run(context.Background(), in, out)
				close(out)
			}()
			go func() {
				for _, j := range jobs {
					in <- j
				}
				close(in)
			}()
			i := 0
			for res := range out {
				if res.Tag != i {
					t.Fatalf("result %d has tag %v", i, res.Tag)
				}
				if len(res.Verdicts) != len(want[i]) {
					t.Fatalf("job %d: %d verdicts, want %d", i, len(res.Verdicts), len(want[i]))
				}
				for c, got := range res.Verdicts {
					if got.Kind != want[i][c].Kind || got.Check != want[i][c].Check {
						t.Fatalf("job %d candidate %d: %s by %s, direct %s by %s", i, c, got.Kind, got.Check, want[i][c].Kind, want[i][c].Check)
					}
				}
				i++
			}
			if i != len(jobs) {
				t.Fatalf("%d results for %d jobs", i, len(jobs))
			}
			if err := <-errc; err != nil {
				t.Fatalf("Run = %v", err)
			}
		})
	}
}

func TestPoolWorkers(t *testing.T) {
	v := mustNew(t, WebProfile())
	if NewPool(v, 0).Workers() < 1 || NewPool(v, -3).Workers() < 1 || NewPool(v, 5).Workers() != 5 {
		t.Error("worker count not defaulted or not kept")
	}
}

// TestPoolCancel cancels Run while results are still unread and jobs
// still unsent: Run returns the context's error and leaves no goroutine.
func TestPoolCancel(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := rand.New(rand.NewPCG(53, 54))
	docs := poolCorpus(t, r, 20)
	jobs := randomJobs(r, docs, 100)
	v := mustNew(t, WebProfile())
	for _, when := range []int{0, 1, 10} {
		t.Run(fmt.Sprintf("after=%d", when), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			in, out := make(chan Job), make(chan Result)
			errc := make(chan error, 1)
			go func() { errc <- NewPool(v, 2).Run(ctx, in, out) }()
			sendDone := make(chan struct{})
			go func() {
				defer close(sendDone)
				for _, j := range jobs {
					select {
					case in <- j:
					case <-ctx.Done():
						return
					}
				}
			}()
			for range when {
				<-out
			}
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Errorf("Run = %v, want context.Canceled", err)
			}
			<-sendDone
		})
	}
}

// TestPoolBackpressure runs in a synctest bubble, where Wait returns once
// every goroutine is blocked: with nobody reading out, the pool takes only
// a bounded number of jobs from in and then blocks the sender, and once
// out is read every job comes out, none dropped.
func TestPoolBackpressure(t *testing.T) {
	r := rand.New(rand.NewPCG(55, 56))
	docs := poolCorpus(t, r, 10)
	v := mustNew(t, WebProfile())
	const n, workers = 200, 2
	synctest.Test(t, func(t *testing.T) {
		in, out := make(chan Job), make(chan Result)
		var sent atomic.Int32
		go func() {
			for i := range n {
				in <- Job{Doc: docs[i%len(docs)], Candidates: docs[:1+i%3], Tag: i}
				sent.Add(1)
			}
			close(in)
		}()
		errc := make(chan error, 1)
		go func() { errc <- NewPool(v, workers).Run(context.Background(), in, out) }()
		synctest.Wait()
		// In flight: the emitter's queue (2·workers batches), the batch
		// the emitter holds and the one the dispatcher is queueing.
		if s := sent.Load(); s > (2*workers+2)*maxBatch {
			t.Errorf("pool took %d jobs with its output blocked", s)
		}
		var tags []int
		for len(tags) < n {
			tags = append(tags, (<-out).Tag.(int))
		}
		if err := <-errc; err != nil {
			t.Errorf("Run = %v", err)
		}
		if !slices.Equal(tags, slices.Collect(func(yield func(int) bool) {
			for i := range n {
				if !yield(i) {
					return
				}
			}
		})) {
			t.Errorf("tags out of order or missing: %v", tags)
		}
	})
}

// BenchmarkPool measures the pool's overhead per verification: a profile
// whose only check does not apply makes the work trivial, so pool minus
// direct is the cost of channels, scheduling and result collection. The
// web profile on 800-shingle pairs shows the same overhead beside real
// work.
func BenchmarkPool(b *testing.B) {
	r := rand.New(rand.NewPCG(57, 58))
	trivial := mustNew(b, Profile{Checks: []Check{{Method: MethodIMatch}}})
	web := mustNew(b, WebProfile())
	base := words(r, 804, 1<<20)
	var docs []*sketch.Features
	for k := range 8 {
		f := features(b, sketch.DefaultConfig(), edit(r, base, 0.02*float64(k)))
		f.HasIMatch = false // the trivial profile's only check never applies
		docs = append(docs, f)
	}
	for _, prof := range []struct {
		name string
		v    *Verifier
	}{{"trivial", trivial}, {"web800", web}} {
		for _, per := range []int{1, 8} {
			cands := docs[:per]
			b.Run(fmt.Sprintf("%s/direct/cands=%d", prof.name, per), func(b *testing.B) {
				b.ReportAllocs()
				var dst []Verdict
				for b.Loop() {
					dst = prof.v.VerifyAll(dst[:0], docs[0], cands)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*per), "ns/verify")
			})
			for _, workers := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/pool%d/cands=%d", prof.name, workers, per), func(b *testing.B) {
					b.ReportAllocs()
					in, out := make(chan Job, 64), make(chan Result, 64)
					errc := make(chan error, 1)
					go func() { errc <- NewPool(prof.v, workers).Run(context.Background(), in, out) }()
					done := make(chan struct{})
					go func() {
						for range out {
						}
						close(done)
					}()
					for b.Loop() {
						in <- Job{Doc: docs[0], Candidates: cands}
					}
					close(in)
					if err := <-errc; err != nil {
						b.Fatal(err)
					}
					close(out)
					<-done
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*per), "ns/verify")
				})
			}
		}
	}
}

// A verification that panics fails its own job (Result.Err wraps
// ErrPanic) and no other; the pool goes on.
func TestPoolPanic(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := rand.New(rand.NewPCG(61, 62))
	docs := poolCorpus(t, r, 20)
	bad := docs[3]
	v := mustNew(t, WebProfile())
	p := NewPool(v, 3)
	p.check = func(a, b *sketch.Features, d *Discount, s *scratch, vals *scoreVals) Verdict {
		if a != nil && b == bad {
			panic("broken features")
		}
		return v.verify(a, b, d, s, vals)
	}
	jobs := randomJobs(r, docs, 200)
	in := make(chan Job)
	out := make(chan Result, len(jobs))
	go func() {
		defer close(in)
		for _, j := range jobs {
			in <- j
		}
	}()
	if err := p.Run(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	close(out)
	failed := 0
	for res := range out {
		j := jobs[res.Tag.(int)]
		want := j.Doc != nil && slices.Contains(j.Candidates, bad)
		if (res.Err != nil) != want || (res.Err != nil && !errors.Is(res.Err, ErrPanic)) {
			t.Errorf("job %d: err %v, want failed %v", res.Tag, res.Err, want)
		}
		if res.Err != nil {
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("no job had the panicking candidate")
	}
}

// Workers returns the number of verifying goroutines Run starts.
func (p *Pool) Workers() int { return p.workers }

// TestPoolSettleAfter checks verify.settle_after's rule on jobs with
// every kind of verdict: among the first Ranked candidates, those after
// the SettleAfter-th near or exact verdict are Settled and never loaded,
// every other candidate gets the verdict a direct call gives, and
// candidates from Ranked on are always verified.
func TestPoolSettleAfter(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := rand.New(rand.NewPCG(71, 72))
	docs := poolCorpus(t, r, 40)
	v := mustNew(t, WebProfile())
	for _, tc := range []struct {
		name          string
		after, ranked int // ranked < 0: all candidates
	}{
		{"off", 0, -1},
		{"one", 1, -1},
		{"two", 2, -1},
		{"one, ranked 4", 1, 4},
		{"more than any job finds", 100, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs := randomJobs(rand.New(rand.NewPCG(73, 74)), docs, 120)
			var loads atomic.Int64
			for i := range jobs {
				j := &jobs[i]
				j.SettleAfter, j.Ranked = tc.after, tc.ranked
				if tc.ranked < 0 {
					j.Ranked = len(j.Candidates)
				}
				// Every other job loads its candidates (Job.Load).
				if i%2 == 0 && j.Doc != nil {
					full := j.Candidates
					j.Candidates = make([]*sketch.Features, len(full))
					j.Load = func(c int) *sketch.Features { loads.Add(1); return full[c] }
					j.Tag = [2]any{i, full}
				} else {
					j.Tag = [2]any{i, j.Candidates}
				}
			}
			in, out := make(chan Job), make(chan Result, len(jobs))
			go func() {
				defer close(in)
				for _, j := range jobs {
					in <- j
				}
			}()
			if err := NewPool(v, 3).Run(context.Background(), in, out); err != nil {
				t.Fatal(err)
			}
			close(out)
			settled, wantLoads := 0, int64(0)
			for res := range out {
				tag := res.Tag.([2]any)
				i, cands := tag[0].(int), tag[1].([]*sketch.Features)
				j := jobs[i]
				want := v.VerifyAll(nil, j.Doc, cands)
				near := 0
				for c, got := range res.Verdicts {
					ranked := c < j.Ranked
					if tc.after > 0 && ranked && near >= tc.after {
						if !got.Settled || got.Kind != Distinct {
							t.Fatalf("job %d candidate %d: %s (settled %v) after %d near verdicts, want settled", i, c, got.Kind, got.Settled, near)
						}
						settled++
						continue
					}
					if got.Settled || got.Kind != want[c].Kind || got.Check != want[c].Check {
						t.Fatalf("job %d candidate %d: %s by %s (settled %v), direct %s by %s", i, c, got.Kind, got.Check, got.Settled, want[c].Kind, want[c].Check)
					}
					if j.Load != nil {
						wantLoads++
					}
					if ranked && settles(got.Kind) {
						near++
					}
				}
			}
			if got := loads.Load(); got != wantLoads {
				t.Errorf("%d candidates loaded, want the %d verified", got, wantLoads)
			}
			if tc.after > 0 && tc.after < 100 && settled == 0 {
				t.Error("no candidate settled: the jobs do not exercise the rule")
			}
			if (tc.after == 0 || tc.after == 100) && settled != 0 {
				t.Errorf("%d candidates settled, want none", settled)
			}
		})
	}
}

// TestPoolRecycledDoc: a caller may reuse a document's features once its
// job is done (one struct, refilled for each document); the verdicts and
// passages must be those of the document it holds now, not of the one the
// worker last saw at that address.
func TestPoolRecycledDoc(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := rand.New(rand.NewPCG(91, 92))
	cfg := sketch.DefaultConfig()
	cfg.PassageWords = 20
	var docs []*sketch.Features
	for range 12 {
		base := words(r, 150+r.IntN(150), 20000)
		for k := range 3 {
			docs = append(docs, features(t, cfg, edit(r, base, float64(k)*0.05)))
		}
	}
	v := mustNew(t, WebProfile())
	in, out := make(chan Job), make(chan Result)
	errc := make(chan error, 1)
	go func() { errc <- NewPool(v, 1).Run(context.Background(), in, out); close(out) }()
	doc := new(sketch.Features)
	passages := 0
	for i, d := range docs {
		cands := []*sketch.Features{docs[(i/3)*3], docs[(i/3)*3+1], docs[(i/3)*3+2], docs[(i+5)%len(docs)]}
		*doc = *d
		in <- Job{Doc: doc, Candidates: cands, Tag: i}
		res := <-out
		want := v.VerifyAll(nil, d, cands)
		for c, got := range res.Verdicts {
			if got.Kind != want[c].Kind || !slices.Equal(got.Passages, want[c].Passages) {
				t.Fatalf("document %d candidate %d: %s %v, direct %s %v", i, c, got.Kind, got.Passages, want[c].Kind, want[c].Passages)
			}
			passages += len(got.Passages)
		}
	}
	close(in)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if passages == 0 {
		t.Fatal("no passages aligned: the documents do not exercise the aligner")
	}
}
