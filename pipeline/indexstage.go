package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/metrics"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// indexStage batches prepared jobs in input order, looks them up and
// inserts them, gathers their candidates' stored features (fetching those
// the index did not return with them) and hands them to the verifier
// pool, whose workers decode the features of the candidates they verify.
func (p *Pipeline) indexStage(ctx context.Context, ordered <-chan *job, verifyIn chan<- verify.Job, fl *inflight) error {
	batch := make([]*job, 0, p.cfg.Batch)
	for j := range ordered {
		batch = gather(append(batch[:0], j), ordered, p.cfg.Batch)
		if err := p.processBatches(ctx, batch, verifyIn, fl); err != nil { // delete.go
			return err
		}
	}
	return nil
}

// gather appends to batch what is already queued on ch, without waiting,
// until batch holds limit items: a stage blocks for its first item only, so
// a slow input makes batches of one and a backlog full ones.
func gather[T any](batch []T, ch <-chan T, limit int) []T {
	for len(batch) < limit {
		select {
		case x, ok := <-ch:
			if !ok {
				return batch
			}
			batch = append(batch, x)
		default:
			return batch
		}
	}
	return batch
}

// awaitLive waits until every job of batch is sketched (done) and returns
// those not dead-lettered, in order.
func awaitLive(ctx context.Context, batch []*job) ([]*job, error) {
	var live []*job
	for _, j := range batch {
		select {
		case <-j.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if j.dead == nil {
			live = append(live, j)
		}
	}
	return live, nil
}

// handOn sends every job of batch to the verify stage, in order.
func handOn(ctx context.Context, batch []*job, verifyIn chan<- verify.Job) error {
	for _, j := range batch {
		select {
		case verifyIn <- verify.Job{Tag: j}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (p *Pipeline) processBatch(ctx context.Context, batch []*job, verifyIn chan<- verify.Job, fl *inflight) error {
	live, err := awaitLive(ctx, batch)
	if err != nil {
		return err
	}
	var entries []index.Entry
	for _, j := range live {
		entries = append(entries, j.entry)
	}
	if len(entries) == 0 {
		return handOn(ctx, batch, verifyIn)
	}
	var results []index.Result
	t0 := time.Now()
	err = p.retry(ctx, "lookup-insert", func(ctx context.Context) error {
		var err error
		results, err = p.ix.LookupInsert(ctx, entries)
		return err
	})
	p.cfg.Metrics.Stage(metrics.StageIndex, time.Since(t0))
	if err != nil {
		return err
	}
	if len(results) != len(entries) {
		return fmt.Errorf("pipeline: index returned %d results for %d entries", len(results), len(entries))
	}
	for i, j := range live {
		j.res = results[i]
		if j.res.Gone {
			continue // a record read again after its document's delete (resolve.go)
		}
		j.discount = p.discount(j)
		switch {
		case !j.res.Replay:
			fl.register(j)
		case j.res.Verdict != nil:
			continue // the recorded verdict is the answer
		default:
			// A replay with no verdict recorded yet: the same id earlier
			// in this run (this batch or one still in flight) will record
			// the answer; otherwise the first attempt failed before it
			// recorded one (or another instance holds it), and the
			// verdict is computed again.
			if j.first = fl.claim(j); j.first != nil {
				continue
			}
		}
		if j.res.Copy != "" && j.res.CopySeq < j.res.Seq {
			continue // an exact copy: decided by its content digest
		}
		p.candidates(j)
	}
	t0 = time.Now()
	if err := p.fetch(ctx, live); err != nil {
		return err
	}
	p.cfg.Metrics.Stage(metrics.StageFetch, time.Since(t0))
	for _, j := range live {
		kept, earlier := j.cands[:0], 0
		for i, c := range j.cands {
			if c.Features != nil {
				kept = append(kept, c)
				if i < j.earlier {
					earlier++
				}
			} else {
				j.unverified++ // expired or deleted since the lookup
			}
		}
		j.cands, j.earlier = kept, earlier
	}
	// Sources need the decoded features of a few candidates here, in
	// order (common.go); decoded through the cache, the verifiers then
	// find them there. The sources found are recorded in the index before
	// the next batch is looked up.
	decoded := map[uint64]*sketch.Features{}
	feats := func(c *index.Candidate) *sketch.Features {
		f, ok := decoded[c.Seq]
		if !ok {
			if c.Features != nil {
				f = p.decoded.decode(c.Features)
			}
			decoded[c.Seq] = f
		}
		return f
	}
	// A page's site template: the text it shares with other pages of its
	// site, read from its candidates' stored features and template
	// records (template.go); the records found are written before the
	// next batch is looked up.
	recs, err := p.fetchTemplates(ctx, live) // templaterec.go
	if err != nil {
		return err
	}
	p.siteTemplates(live, feats, recs)
	if err := p.recordTemplates(ctx, recs); err != nil {
		return err
	}
	if err := p.fetchSources(ctx, live); err != nil { // common.go
		return err
	}
	p.markSources(live, feats)                   // common.go
	if err := p.recordSources(ctx); err != nil { // common.go
		return err
	}
	now := time.Now()
	for _, j := range batch {
		j.verifyAt = now
		// The candidates' features are decoded by the verifier workers,
		// in parallel: Load fills j.candFeats, which the resolve stage
		// reads after the job's result.
		j.candFeats = make([]*sketch.Features, len(j.cands))
		// The features this stage decoded are the ones its discount
		// names (verify.Source is matched by the features handed to
		// verification), so they are handed on as they are; a cache
		// miss in a worker would decode other features of the same
		// bytes.
		for i := range j.cands {
			if f := decoded[j.cands[i].Seq]; f != nil {
				j.candFeats[i] = f
			}
		}
		vj := verify.Job{Doc: j.feats, Discount: j.discount, Tag: j, Candidates: j.candFeats,
			SettleAfter: p.cfg.SettleAfter, Ranked: j.earlier}
		if len(j.cands) > 0 {
			vj.Load = func(i int) *sketch.Features { return p.decoded.decode(j.cands[i].Features) }
		}
		select {
		case verifyIn <- vj:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// candidates chooses what j is verified against (j.cands): the earlier
// documents the index ranked (at most MaxCandidates, best first), the
// first document with the same I-Match digest, and in Redis Cluster the
// later documents that did not see j.
func (p *Pipeline) candidates(j *job) {
	add := func(c index.Candidate) { j.cands = append(j.cands, c) }
	j.unverified = j.res.Dropped
	im := index.Candidate{ID: j.res.IMatch, Seq: j.res.IMatchSeq, Via: "imatch", Features: j.res.IMatchFeatures, Source: j.res.IMatchSource,
		Verdict: j.res.IMatchVerdict}
	// First seen wins: a document is only ever a duplicate of earlier
	// ones, so a duplicate never becomes its original's representative.
	decided, budget := false, p.cfg.MaxCandidates
	if im.ID != "" && im.Seq < j.res.Seq {
		// The I-Match lane found an earlier document with the same
		// digest. When the profile accepts equal digests, that document
		// decides; otherwise it is verified like any other candidate, on
		// top of the ranked ones.
		add(im)
		decided = p.imatchDecides
	}
	for _, c := range j.res.Candidates {
		if decided || c.Seq >= j.res.Seq || (im.ID != "" && c.Seq == im.Seq) {
			continue
		}
		if budget == 0 {
			j.unverified++
			continue
		}
		budget--
		add(c)
	}
	j.earlier = len(j.cands)
	// In Redis Cluster a later document may not have seen this one
	// (index package: the ordering rule), through the LSH buckets or the
	// I-Match lane; this side then reports the pair as a correction.
	if im.ID != "" && im.Seq > j.res.Seq {
		add(im)
	}
	for _, c := range j.res.Candidates {
		if c.Seq > j.res.Seq && (im.ID == "" || c.Seq != im.Seq) {
			add(c)
		}
	}
}

// fetch reads the stored features of the jobs' candidates that the index
// did not return with them (Redis Cluster, or a document deleted since it
// was found) with Store.Features, in one call. A candidate whose features
// are gone keeps nil features.
func (p *Pipeline) fetch(ctx context.Context, jobs []*job) error {
	var missing []uint64
	seen := map[uint64]bool{}
	for _, j := range jobs {
		for _, c := range j.cands {
			if c.Features == nil && !seen[c.Seq] {
				seen[c.Seq] = true
				missing = append(missing, c.Seq)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var raw [][]byte
	err := p.retry(ctx, "features", func(ctx context.Context) error {
		var err error
		raw, err = p.ix.Features(ctx, missing)
		return err
	})
	if err != nil {
		return err
	}
	got := make(map[uint64][]byte, len(missing))
	for i, s := range missing {
		if i < len(raw) {
			got[s] = raw[i]
		}
	}
	for _, j := range jobs {
		for i := range j.cands {
			if c := &j.cands[i]; c.Features == nil {
				c.Features = got[c.Seq]
			}
		}
	}
	return nil
}

// decodeFeatures decodes stored features. Features that do not decode
// (written by something else) leave the candidate unverified, counted in
// the event; they do not stop the stream, so the error becomes nil.
func decodeFeatures(raw []byte) *sketch.Features {
	f := &sketch.Features{}
	if f.UnmarshalBinary(raw) != nil {
		return nil
	}
	return f
}

// retry runs op until it succeeds, fails with an error that is not
// index.ErrUnavailable, or Config.Retry has passed.
func (p *Pipeline) retry(ctx context.Context, what string, op func(context.Context) error) error {
	deadline := time.Now().Add(p.cfg.Retry)
	wait := 50 * time.Millisecond
	for {
		err := op(ctx)
		if p.cfg.IndexHealth != nil && ctx.Err() == nil {
			p.cfg.IndexHealth(err)
		}
		if err == nil || !errors.Is(err, index.ErrUnavailable) {
			p.cfg.Metrics.IndexCall(what, err, false)
			if err != nil {
				return fmt.Errorf("pipeline: index %s: %w", what, err)
			}
			return nil
		}
		if p.cfg.Retry > 0 && time.Now().Add(wait).After(deadline) {
			p.cfg.Metrics.IndexCall(what, err, false)
			return fmt.Errorf("pipeline: index %s: gave up after %v: %w", what, p.cfg.Retry, err)
		}
		p.cfg.Metrics.IndexCall(what, err, true)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		wait = min(2*wait, 2*time.Second)
	}
}
