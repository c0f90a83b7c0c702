package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// Index is what the pipeline needs of the band store; [index.Store]
// implementations satisfy it.
type Index interface {
	LookupInsert(ctx context.Context, docs []index.Entry) ([]index.Result, error)
	Features(ctx context.Context, ids []string) ([][]byte, error)
	Verdicts(ctx context.Context, ids []string) ([][]byte, error)
	RecordVerdict(ctx context.Context, id string, verdict []byte) error
}

// Config configures a Pipeline. Use [Config.WithDefaults] for zero fields.
type Config struct {
	Sketch  sketch.Config
	Lexicon *sketch.Lexicon // nil: the built-in lexicon
	Limits  sketch.Limits
	// Bands and Rows split the MinHash signature into LSH bands.
	Bands, Rows int
	// SimHashK is the Hamming radius of the SimHash lane; -1 disables it
	// (the index must then be opened with SimHashK 0 and no fingerprints
	// are sent).
	SimHashK int
	Verify   verify.Profile
	// Workers is the number of sketching and of verifying goroutines
	// (default GOMAXPROCS).
	Workers int
	// Batch is the number of documents per index round trip (default 64).
	Batch int
	// EmitUnique emits an event for unique documents too.
	EmitUnique bool
	// MaxMatches bounds Event.Matches (default 5).
	MaxMatches int
	// Retry is how long index calls are retried while the index is
	// unavailable before Run fails (default 30s). Nothing is reported while
	// retrying: a document is never called unique because the index was
	// down.
	Retry time.Duration
	// Params are echoed in every event.
	Params Params
	// Now stamps events (default time.Now).
	Now func() time.Time
	// ClusterCache bounds the remembered id → cluster pairs used to give a
	// duplicate its original's cluster (default 1<<20).
	ClusterCache int
}

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	c.Sketch = c.Sketch.WithDefaults()
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.Batch <= 0 {
		c.Batch = 64
	}
	if c.MaxMatches <= 0 {
		c.MaxMatches = 5
	}
	if c.Retry <= 0 {
		c.Retry = 30 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.ClusterCache <= 0 {
		c.ClusterCache = 1 << 20
	}
	if c.Bands == 0 {
		c.Bands, c.Rows = sketch.Bands(c.Sketch.K, 0.5)
	}
	return c
}

// Pipeline turns documents into verdicts; see the package documentation.
// A Pipeline may be Run once at a time; it keeps the cluster cache across
// runs.
type Pipeline struct {
	cfg      Config
	ix       Index
	verifier *verify.Verifier
	clusters *clusterCache
	// imatchDecides is true when the profile accepts equal I-Match
	// digests as duplicates, so an exact-lane hit needs no LSH candidates.
	imatchDecides bool
}

// New validates cfg and returns a Pipeline over ix.
func New(cfg Config, ix Index) (*Pipeline, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Sketch.Validate(); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if cfg.Bands < 1 || cfg.Rows < 1 || cfg.Bands*cfg.Rows > cfg.Sketch.K {
		return nil, fmt.Errorf("pipeline: %d bands × %d rows do not fit K = %d", cfg.Bands, cfg.Rows, cfg.Sketch.K)
	}
	if cfg.SimHashK < -1 || cfg.SimHashK > 15 {
		return nil, fmt.Errorf("pipeline: simhash k %d: want -1..15", cfg.SimHashK)
	}
	if cfg.Lexicon == nil {
		cfg.Lexicon = sketch.DefaultLexicon()
	}
	v, err := verify.New(cfg.Verify)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	pl := &Pipeline{cfg: cfg, ix: ix, verifier: v, clusters: newClusterCache(cfg.ClusterCache)}
	for _, c := range cfg.Verify.Checks {
		pl.imatchDecides = pl.imatchDecides || c.Method == verify.MethodIMatch
	}
	return pl, nil
}

// IndexParams returns the parameters the index must be opened with.
func (p *Pipeline) IndexParams() index.Params {
	c := p.cfg
	simK := max(c.SimHashK, 0)
	n := c.Sketch.Normalize
	return index.Params{
		Hash: "fnv1a64+splitmix64/v1", K: c.Sketch.K, Bands: c.Bands, Rows: c.Rows,
		Shingle: max(c.Sketch.Shingle, c.Sketch.CharGram), Seed: c.Sketch.Seed, SimHashK: simK,
		Extra: fmt.Sprintf("method=%s chargram=%d fold=%v accents=%v digits=%v punct=%v imatch=%s/%v/%v/%d simhash=%v",
			c.Sketch.Method, c.Sketch.CharGram, n.FoldQuotes, n.StripAccents, n.DropDigits, n.KeepPunct,
			c.Sketch.IMatch.Mode, c.Sketch.IMatch.Cutoff, c.Sketch.IMatch.Keep, c.Sketch.IMatch.MinTerms, c.SimHashK >= 0),
	}
}

// job is one input on its way through the stages.
type job struct {
	item  Item
	done  chan struct{} // closed when prepare has finished
	dead  *DeadLetter
	entry index.Entry
	feats *sketch.Features // the stored (encoded, decoded) form, for verification
	res   index.Result
	cands []index.Candidate // candidates sent to verification, same order as Job.Candidates
	// earlier is how many of cands precede the document (lower Seq); the
	// rest are later documents that did not see it (Redis Cluster only),
	// verified to report corrections.
	earlier int
}

// Run reads items from in until it is closed, and writes one Output per
// item to out in input order. It returns nil when every item has been
// output, the context's error on cancellation, or an error wrapping
// index.ErrUnavailable when the index stayed unavailable for Config.Retry.
// Items not yet output when Run fails were not decided: a caller must not
// acknowledge them. Run does not close out. Every goroutine it starts has
// exited when it returns.
func (p *Pipeline) Run(ctx context.Context, in <-chan Item, out chan<- Output) error {
	g, ctx := errgroup.WithContext(ctx)
	w := p.cfg.Workers
	prep := make(chan *job, w)
	ordered := make(chan *job, 4*p.cfg.Batch+w)
	verifyIn := make(chan verify.Job, p.cfg.Batch)
	verifyOut := make(chan verify.Result, p.cfg.Batch)

	// Dispatch: keep input order in ordered, spread the work over prep.
	g.Go(func() error {
		defer close(prep)
		defer close(ordered)
		for {
			var it Item
			var ok bool
			select {
			case it, ok = <-in:
			case <-ctx.Done():
				return ctx.Err()
			}
			if !ok {
				return nil
			}
			j := &job{item: it, done: make(chan struct{})}
			select {
			case ordered <- j:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case prep <- j:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
	// Prepare: extract, sketch and encode, in parallel.
	for range w {
		g.Go(func() error {
			s, err := sketch.New(p.cfg.Sketch, p.cfg.Lexicon)
			if err != nil {
				return err
			}
			var f sketch.Features
			for j := range prep {
				p.prepare(s, &f, j)
				close(j.done)
			}
			return nil
		})
	}
	// Index: look up and insert in input order, in batches.
	g.Go(func() error {
		defer close(verifyIn)
		return p.indexStage(ctx, ordered, verifyIn)
	})
	pool := verify.NewPool(p.verifier, w)
	g.Go(func() error {
		defer close(verifyOut)
		return pool.Run(ctx, verifyIn, verifyOut)
	})
	// Resolve: verdicts in input order.
	g.Go(func() error {
		for r := range verifyOut {
			o, err := p.resolve(ctx, r)
			if err != nil {
				return err
			}
			select {
			case out <- o:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	return g.Wait()
}

// prepare turns a decoded document into an index entry, or a dead letter.
func (p *Pipeline) prepare(s *sketch.Sketcher, f *sketch.Features, j *job) {
	it := j.item
	if it.Err != nil {
		j.dead = p.deadLetter(it, it.Err)
		return
	}
	text := it.Doc.Text
	if it.Doc.IsHTML {
		if err := extract.CheckText(text); err != nil {
			j.dead = p.deadLetter(it, &InvalidError{Reason: ReasonBinary, ID: it.Doc.ID, Detail: err.Error()})
			return
		}
		text = extract.MainText(text, it.Doc.URL)
	}
	if err := extract.CheckText(text); err != nil {
		j.dead = p.deadLetter(it, &InvalidError{Reason: ReasonBinary, ID: it.Doc.ID, Detail: err.Error()})
		return
	}
	if err := s.Sketch(text, f); err != nil {
		r := ReasonTooLarge
		if !errors.Is(err, sketch.ErrTooLarge) {
			r = ReasonBadField
		}
		j.dead = p.deadLetter(it, &InvalidError{Reason: r, ID: it.Doc.ID, Detail: err.Error()})
		return
	}
	if f.Tokens == 0 {
		j.dead = p.deadLetter(it, &InvalidError{Reason: ReasonEmpty, ID: it.Doc.ID, Detail: "no words after normalization"})
		return
	}
	enc := f.AppendBinary(nil, p.cfg.Limits)
	stored := &sketch.Features{}
	f.Stored(stored, p.cfg.Limits) // what enc decodes to, without decoding
	j.feats = stored
	j.entry = index.Entry{
		ID:         it.Doc.ID,
		Bands:      sketch.BandKeys(make([]uint64, 0, p.cfg.Bands), f.Signature, p.cfg.Bands, p.cfg.Rows),
		SimHash:    f.SimHash,
		HasSimHash: p.cfg.SimHashK >= 0,
		IMatch:     f.IMatch,
		HasIMatch:  f.HasIMatch,
		Features:   enc,
	}
}

// indexStage batches prepared jobs in input order, looks them up and
// inserts them, fetches their candidates' features and hands them to the
// verifier pool.
func (p *Pipeline) indexStage(ctx context.Context, ordered <-chan *job, verifyIn chan<- verify.Job) error {
	batch := make([]*job, 0, p.cfg.Batch)
	for {
		batch = batch[:0]
		// Block for the first job, then take what is already queued.
		j, ok := <-ordered
		if !ok {
			return nil
		}
		batch = append(batch, j)
	fill:
		for len(batch) < p.cfg.Batch {
			select {
			case j, ok := <-ordered:
				if !ok {
					break fill
				}
				batch = append(batch, j)
			default:
				break fill
			}
		}
		if err := p.processBatch(ctx, batch, verifyIn); err != nil {
			return err
		}
	}
}

func (p *Pipeline) processBatch(ctx context.Context, batch []*job, verifyIn chan<- verify.Job) error {
	var entries []index.Entry
	var live []*job
	for _, j := range batch {
		select {
		case <-j.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if j.dead == nil {
			entries = append(entries, j.entry)
			live = append(live, j)
		}
	}
	if len(entries) > 0 {
		var results []index.Result
		err := p.retry(ctx, "lookup-insert", func(ctx context.Context) error {
			var err error
			results, err = p.ix.LookupInsert(ctx, entries)
			return err
		})
		if err != nil {
			return err
		}
		if len(results) != len(entries) {
			return fmt.Errorf("pipeline: index returned %d results for %d entries", len(results), len(entries))
		}
		var ids []string
		for i, j := range live {
			j.res = results[i]
			if j.res.Replay && j.res.Verdict != nil {
				continue
			}
			add := func(c index.Candidate) {
				j.cands = append(j.cands, c)
				ids = append(ids, c.ID)
			}
			exact := index.Candidate{ID: j.res.Exact, Seq: j.res.ExactSeq, Via: "imatch"}
			// First seen wins: a document is only ever a duplicate of
			// earlier ones, so a duplicate never becomes its original's
			// representative.
			decided := false
			if exact.ID != "" && exact.Seq < j.res.Seq {
				// The I-Match lane found an earlier document with the same
				// digest. When the profile accepts equal digests, that
				// document decides and the earlier LSH candidates are
				// skipped; otherwise it is verified first among them.
				add(exact)
				decided = p.imatchDecides
			}
			for _, c := range j.res.Candidates {
				if !decided && c.Seq < j.res.Seq && c.ID != exact.ID {
					add(c)
				}
			}
			j.earlier = len(j.cands)
			// In Redis Cluster a later document may not have seen this one
			// (index package: the ordering rule), through the LSH buckets
			// or the I-Match lane; this side then reports the pair as a
			// correction.
			if exact.ID != "" && exact.Seq > j.res.Seq {
				add(exact)
			}
			for _, c := range j.res.Candidates {
				if c.Seq > j.res.Seq && c.ID != exact.ID {
					add(c)
				}
			}
		}
		feats, err := p.fetch(ctx, ids)
		if err != nil {
			return err
		}
		for _, j := range live {
			kept, earlier := j.cands[:0], 0
			for i, c := range j.cands {
				if feats[c.ID] != nil { // expired or deleted since the lookup
					kept = append(kept, c)
					if i < j.earlier {
						earlier++
					}
				}
			}
			j.cands, j.earlier = kept, earlier
		}
		for _, j := range batch {
			vj := verify.Job{Doc: j.feats, Tag: j}
			for _, c := range j.cands {
				vj.Candidates = append(vj.Candidates, feats[c.ID])
			}
			select {
			case verifyIn <- vj:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	for _, j := range batch {
		select {
		case verifyIn <- verify.Job{Tag: j}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// fetch returns the decoded stored features of ids.
func (p *Pipeline) fetch(ctx context.Context, ids []string) (map[string]*sketch.Features, error) {
	out := make(map[string]*sketch.Features, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	uniq := make([]string, 0, len(ids))
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			out[id] = nil
			uniq = append(uniq, id)
		}
	}
	var raw [][]byte
	err := p.retry(ctx, "features", func(ctx context.Context) error {
		var err error
		raw, err = p.ix.Features(ctx, uniq)
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, id := range uniq {
		if i >= len(raw) || raw[i] == nil {
			continue
		}
		f := &sketch.Features{}
		if err := f.UnmarshalBinary(raw[i]); err != nil {
			return nil, fmt.Errorf("pipeline: stored features of %q: %w", id, err)
		}
		out[id] = f
	}
	return out, nil
}

// retry runs op until it succeeds, fails with an error that is not
// index.ErrUnavailable, or Config.Retry has passed.
func (p *Pipeline) retry(ctx context.Context, what string, op func(context.Context) error) error {
	deadline := time.Now().Add(p.cfg.Retry)
	wait := 50 * time.Millisecond
	for {
		err := op(ctx)
		if err == nil || !errors.Is(err, index.ErrUnavailable) {
			if err != nil {
				return fmt.Errorf("pipeline: index %s: %w", what, err)
			}
			return nil
		}
		if time.Now().Add(wait).After(deadline) {
			return fmt.Errorf("pipeline: index %s: gave up after %v: %w", what, p.cfg.Retry, err)
		}
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

func (p *Pipeline) deadLetter(it Item, err error) *DeadLetter {
	dl := &DeadLetter{Reason: ReasonBadField, Error: err.Error(), Source: it.Source, At: p.cfg.Now().UTC().Format(time.RFC3339Nano)}
	var inv *InvalidError
	if errors.As(err, &inv) {
		dl.Reason, dl.ID = inv.Reason, inv.ID
	}
	if dl.ID == "" {
		dl.ID = it.Doc.ID
	}
	raw := it.Raw
	if raw == nil && it.Err == nil {
		raw = it.Doc.Text
	}
	if len(raw) > MaxRawBytes {
		raw, dl.Truncated = raw[:MaxRawBytes], true
	}
	if utf8.Valid(raw) {
		dl.Input = string(raw)
	} else {
		dl.InputBase64 = raw
	}
	return dl
}

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
