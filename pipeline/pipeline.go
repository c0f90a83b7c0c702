package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/metrics"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// Index is what the pipeline needs of the band store; [index.Store]
// implementations satisfy it.
//
// Documents are named by the Seq the index gave them everywhere after the
// lookup (records are read and written by Seq, index.Store), so that a
// document deleted and sent again under its id is a new document in
// every record.
type Index interface {
	LookupInsert(ctx context.Context, docs []index.Entry) ([]index.Result, error)
	Features(ctx context.Context, seqs []uint64) ([][]byte, error)
	Verdicts(ctx context.Context, seqs []uint64) ([][]byte, error)
	RecordVerdicts(ctx context.Context, seqs []uint64, verdicts [][]byte) ([]bool, error)
}

// Config configures a Pipeline. Use [Config.WithDefaults] for zero fields.
type Config struct {
	Sketch  sketch.Config
	Lexicon *sketch.Lexicon // nil: the built-in lexicon
	// Limits caps the stored features (zero fields: sketch.DefaultLimits);
	// only what the verification profile reads is stored
	// (verify.Profile.Limits).
	Limits sketch.Limits
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
	// MaxMatches bounds Event.Matches (default 25: a document that copies
	// from 20 sources lists them all).
	MaxMatches int
	// MaxCandidates bounds the candidates verified per document (default
	// index.DefaultMaxCandidates), best ranked first (most shared buckets,
	// then the most recent); the index should be opened with the same
	// bound. The rest are counted in Event.Unverified.
	MaxCandidates int
	// SettleAfter, when positive, stops verifying a document's ranked
	// candidates once that many are near or exact duplicates: the rest
	// are counted in Event.Settled (verify.Job.SettleAfter). 0 verifies
	// every candidate.
	SettleAfter int
	// GeneratedHosts are hosts of generated documentation (config
	// pipeline.generated_hosts): text two pages of one of them with
	// different content share is the host's template (template.go).
	GeneratedHosts []string
	// MaxEventBytes bounds an event's JSON encoding (default 1 MiB; serve
	// lowers it to what its output topic takes): a larger event is
	// shortened (fit.go), and one that does not fit even then, a
	// document with a huge meta object say, becomes a dead letter
	// (event_too_large) instead of failing the output.
	MaxEventBytes int
	// Retry is how long index calls are retried while the index is
	// unavailable before Run fails (default 30s; negative: until the
	// context ends). Nothing is reported while retrying: a document is
	// never called unique because the index was down.
	Retry time.Duration
	// Metrics receives measurements (nil: none).
	Metrics *metrics.Metrics
	// IndexHealth, when set, is called after every index call with its
	// error (nil on success), so a service can report readiness. It must
	// not block.
	IndexHealth func(err error)
	// Params are echoed in every event.
	Params Params
	// Now stamps events (default time.Now).
	Now func() time.Time
	// ClusterCache bounds the remembered document (Seq) → cluster pairs,
	// read from or written to the index's verdicts, with which a
	// duplicate gets its original's cluster (default 1<<20). A cache of
	// what the index holds: a document's cluster is the one its recorded
	// verdict names.
	ClusterCache int
	// SettleWait bounds how long the resolve stage waits for the
	// verdict of an earlier document that another member (or an earlier
	// attempt) has not recorded yet, when a duplicate of it needs its
	// cluster (default 30 s; negative: no wait). Past it the earlier
	// document stands for its own cluster, and Stats.ClusterUnknown
	// counts it: the one case in which the process's timing shows in a
	// verdict (clusters.go).
	SettleWait time.Duration
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
		c.MaxMatches = 25
	}
	if c.MaxCandidates <= 0 {
		c.MaxCandidates = index.DefaultMaxCandidates
	}
	if c.MaxEventBytes <= 0 {
		c.MaxEventBytes = DefaultMaxEventBytes
	}
	if c.Retry == 0 {
		c.Retry = 30 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.ClusterCache <= 0 {
		c.ClusterCache = 1 << 20
	}
	if c.SettleWait == 0 {
		c.SettleWait = 30 * time.Second
	}
	if c.Bands == 0 {
		c.Bands, c.Rows = sketch.Bands(c.Sketch.K, 0.5)
	}
	def := sketch.DefaultLimits()
	c.Limits.MaxShingles = cmp.Or(c.Limits.MaxShingles, def.MaxShingles)
	c.Limits.MaxUnique = cmp.Or(c.Limits.MaxUnique, def.MaxUnique)
	return c
}

// DefaultMaxEventBytes is the default of Config.MaxEventBytes.
const DefaultMaxEventBytes = 1 << 20

// Pipeline turns documents into verdicts; see the package documentation.
// A Pipeline may be Run once at a time; it keeps its caches of the index
// (clusters by Seq, decoded features by their bytes) across runs.
type Pipeline struct {
	cfg      Config
	ix       Index
	verifier *verify.Verifier
	clusters *clusterCache
	// unknown counts documents whose cluster stayed unknown for
	// SettleWait (Stats.ClusterUnknown).
	unknown atomic.Int64
	// sources are the exemplars of widely copied texts (common.go).
	sources *sourceSet
	// decoded caches candidates' decoded features (index stage only).
	decoded *featCache
	// anchorBits is scratch of the index stage's rules (markSources),
	// empty between uses.
	anchorBits hashBits
	// limits select and bound the stored features: what the profile's
	// checks read.
	limits sketch.Limits
	// imatchDecides is true when the profile accepts equal I-Match
	// digests as duplicates, so an I-Match hit needs no LSH candidates.
	imatchDecides bool
	// sentenceMax bounds the matches listed per sentence (sentence mode).
	sentenceMax int
	// stored recycles the stored views of documents (job.feats, each a
	// few KB of slices) once their output is made.
	stored sync.Pool
	// seqs recycles job.seq buffers (*[]uint32, 4 bytes per shingle
	// position) once their output is made.
	seqs sync.Pool
	// generated holds the hashes of Config.GeneratedHosts (hostOf).
	generated map[uint64]bool
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
	pl := &Pipeline{cfg: cfg, ix: ix, verifier: v, clusters: newClusterCache(cfg.ClusterCache),
		sources: newSourceSet(maxSources),
		decoded: newFeatCache(defaultFeatCacheBytes), limits: cfg.Verify.Limits(cfg.Limits)}
	for _, c := range cfg.Verify.Checks {
		pl.imatchDecides = pl.imatchDecides || c.Method == verify.MethodIMatch
	}
	for _, h := range cfg.GeneratedHosts {
		hh := hostOf("https://" + h) // template.go
		if hh == 0 {
			return nil, fmt.Errorf("pipeline: generated host %q: not a host name", h)
		}
		if pl.generated == nil {
			pl.generated = map[uint64]bool{}
		}
		pl.generated[hh] = true
	}
	// Nothing reads a document's SimHash without the SimHash lane or a
	// check that compares it (pl.limits stores it for such a check).
	pl.cfg.Sketch.SkipSimHash = cfg.SimHashK < 0 && !pl.limits.SimHash
	// Nor its unique words without a check that stores them (LCS): the
	// pipeline verifies the stored form of a document, never the fresh one.
	pl.cfg.Sketch.SkipUnique = pl.limits.MaxUnique == 0
	// The shingle set is read only through Sketcher.Encode (prepareDoc).
	// Classic MinHash would sign the repeats too, at K hashes each.
	pl.cfg.Sketch.SkipShingleSet = pl.cfg.Sketch.WithDefaults().Method == sketch.OnePerm

	if sc := v.Profile().Sentences; sc != nil {
		if !cfg.Sketch.Sentence.On {
			return nil, fmt.Errorf("pipeline: the profile matches sentences but the sketch does not compute them (sketch.Config.Sentence)")
		}
		pl.sentenceMax = sc.MaxMatches
	}
	return pl, nil
}

// Stats are counters since the pipeline was created.
type Stats struct {
	// ClusterUnknown counts earlier documents whose cluster a duplicate
	// of them needed and did not get: their verdict was not recorded
	// within Config.SettleWait, they were removed meanwhile, or they were
	// rejected after their lookup. Each stood for its own cluster.
	ClusterUnknown int64
}

// Stats returns the counters.
func (p *Pipeline) Stats() Stats { return Stats{ClusterUnknown: p.unknown.Load()} }

// IndexParams returns the parameters the index must be opened with.
func (p *Pipeline) IndexParams() index.Params {
	c := p.cfg
	simK := max(c.SimHashK, 0)
	n := c.Sketch.Normalize
	return index.Params{
		Hash: "fnv1a64+splitmix64/v1", K: c.Sketch.K, Bands: c.Bands, Rows: c.Rows,
		Shingle: max(c.Sketch.Shingle, c.Sketch.CharGram), Seed: c.Sketch.Seed, SimHashK: simK,
		// The stored feature sections are part of the namespace: features
		// stored without what a check reads could never match it. The
		// caps are not: documents stored at different sampling rates are
		// aligned (sketch.AlignSamples).
		Extra: fmt.Sprintf("method=%s chargram=%d fold=%v accents=%v digits=%v punct=%v imatch=%s/%v/%v/%d simhash=%v features=%s passage=%d",
			c.Sketch.Method, c.Sketch.CharGram, n.FoldQuotes, n.StripAccents, n.DropDigits, n.KeepPunct,
			c.Sketch.IMatch.Mode, c.Sketch.IMatch.Cutoff, c.Sketch.IMatch.Keep, c.Sketch.IMatch.MinTerms, c.SimHashK >= 0,
			featureSections(p.limits), p.passageWords()) + p.sentenceParams() + hyphenParams(n),
	}
}

// hyphenParams describes the joining of words hyphenated at a line end
// (sketch.Normalization.JoinHyphens): it changes the tokens of texts with
// such breaks, so an index stored without it is another namespace. Off, it
// adds nothing, so that a namespace stored before the option existed is
// read with sketch.join_hyphens false.
func hyphenParams(n sketch.Normalization) string {
	if !n.JoinHyphens {
		return ""
	}
	return " hyphens=join"
}

// sentenceParams describes sentence mode's band keys for the namespace
// ("" in document mode, so document namespaces are unchanged).
func (p *Pipeline) sentenceParams() string {
	sc := p.cfg.Sketch.Sentence
	if !sc.On {
		return ""
	}
	return fmt.Sprintf(" sentences=%d/%dx%d", sc.CharGram, sc.Bands, sc.Rows)
}

// passageWords is the passage lane's passage length, 0 when it is off.
func (p *Pipeline) passageWords() int {
	if p.cfg.Sketch.CharGram > 0 {
		return 0
	}
	return p.cfg.Sketch.PassageWords
}

// featureSections names the stored feature sections limits select.
func featureSections(l sketch.Limits) string {
	s := "content"
	for _, f := range []struct {
		on   bool
		name string
	}{{l.MaxShingles > 0, "shingles"}, {l.MaxUnique > 0, "unique"}, {l.IMatch, "imatch"}, {l.SimHash, "simhash"}, {l.Passages, "passages"}} {
		if f.on {
			s += "+" + f.name
		}
	}
	return s
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
	// verifyAt is when the job was handed to the verifier pool.
	verifyAt time.Time
	// candFeats are the candidates' stored features, in cands order.
	candFeats []*sketch.Features
	// overlaps are the index stage's comparisons of the document's
	// sample with its candidates' (overlap.go), while its rules run.
	overlaps []overlapMemo
	// unverified counts candidates found but not verified.
	unverified int
	// first is the earlier job of this run with the same id, still in
	// flight when the index answered: this job is a replay of the verdict
	// first will record.
	first *job
	// rec is the verdict recorded for this job (set by resolve), which
	// later replays in the same run return.
	rec *verdictRecord
	// sentenceBase is where the sentence keys start in entry.Anchors
	// (sentence mode).
	sentenceBase int
	// seq holds the stored form of the document's shingle at each
	// position of its passage section (nil without one); discount holds
	// what verification leaves out (its common passages) and commonShare
	// their share of the positions.
	seq         []uint32
	discount    *verify.Discount
	commonShare float64
	// siteTemplate are the passages of the document's site template
	// (template.go), sorted and disjoint: evidence against no candidate,
	// sources included; candTemplates those of its candidates that have a
	// template record, by id. Shares are of the text outside them.
	siteTemplate  []verify.Range
	candTemplates map[uint64][]verify.Range
	// edge: its host is named by its edges (edgeHost: no url, address
	// or site name); noSite: such a page whose site's pages are not (yet)
	// three distinct texts, so no site rule applies.
	edge, noSite bool
	// revise are earlier pages of its site whose template record this
	// document found: their partial links are verified again once its
	// verdict is recorded (revise.go).
	revise []revision
	// del is set for a delete (Item.Delete) whose id is valid; see
	// delete.go.
	del *deletion
}

// inflight maps the Seqs of this run's documents that will record a
// verdict but have not yet to their jobs: a repeated id in the same or a
// later batch (a replay of the same Seq) is answered with the first
// occurrence's verdict even before the index holds it. It is shared by
// the index and resolve stages.
type inflight struct {
	mu sync.Mutex
	m  map[uint64]*job
}

// register makes j the job in flight for its Seq.
func (f *inflight) register(j *job) {
	f.mu.Lock()
	f.m[j.res.Seq] = j
	f.mu.Unlock()
}

// claim returns the job in flight for j's Seq, or registers j as it.
func (f *inflight) claim(j *job) *job {
	f.mu.Lock()
	defer f.mu.Unlock()
	if first, ok := f.m[j.res.Seq]; ok {
		return first
	}
	f.m[j.res.Seq] = j
	return nil
}

// get returns the job in flight for seq, if any.
func (f *inflight) get(seq uint64) *job {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m[seq]
}

// release forgets j once its verdict is recorded.
func (f *inflight) release(j *job) {
	f.mu.Lock()
	if f.m[j.res.Seq] == j {
		delete(f.m, j.res.Seq)
	}
	f.mu.Unlock()
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
	fl := &inflight{m: map[uint64]*job{}}

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
			var enc []byte // encoding scratch
			for j := range prep {
				t0 := time.Now()
				if s = p.prepare(s, &f, &enc, j); s == nil {
					if s, err = sketch.New(p.cfg.Sketch, p.cfg.Lexicon); err != nil {
						return err
					}
					f, enc = sketch.Features{}, nil
				} else if j.dead == nil {
					p.cfg.Metrics.Stage(metrics.StageSketch, time.Since(t0))
				}
				close(j.done)
			}
			return nil
		})
	}
	// Index: look up and insert in input order, in batches.
	g.Go(func() error {
		defer close(verifyIn)
		return p.indexStage(ctx, ordered, verifyIn, fl)
	})
	pool := verify.NewPool(p.verifier, w)
	g.Go(func() error {
		defer close(verifyOut)
		return pool.Run(ctx, verifyIn, verifyOut)
	})
	// Resolve: verdicts in input order, recorded a batch at a time (what
	// has arrived, up to Batch).
	g.Go(func() error {
		rs := make([]verify.Result, 0, p.cfg.Batch)
		var outs []Output
		for r := range verifyOut {
			rs = gather(append(rs[:0], r), verifyOut, p.cfg.Batch)
			t0 := time.Now()
			var err error
			if outs, err = p.resolveBatch(ctx, rs, fl, outs[:0]); err != nil {
				return err
			}
			for i, o := range outs {
				p.observe(rs[i], o, t0)
				select {
				case out <- o:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
		return nil
	})
	return g.Wait()
}
