// Package service is neardup serve: it composes the Kafka consumer, the
// pipeline and the Kafka sink into one at-least-once stream processor,
// with Prometheus metrics and health endpoints.
//
// Records flow consumer → pipeline → sink in input order. A record's
// offset is committed only after its verdict was recorded in the index
// and every record it produced (event, dead letter, passthrough) was
// acknowledged by the brokers (commit after effect). Nothing is reported
// while the index is unavailable: the pipeline retries, /readyz answers
// 503, and processing resumes when the index returns. A failed produce
// stops the service without committing its record, so a restart reads it
// again and a replayed id gets its first verdict.
//
// A lost index (index.ErrIndexLost: the Redis namespace the member used
// is gone, the server having restarted without its data) stops deciding
// too: index calls wait, /readyz answers 503 naming the loss and
// neardup_index_lost is 1, until the data is restored (the namespace is
// found again) or the loss is accepted: POST /admin/accept-empty-index
// (AcceptEmptyPath) on http.admin_addr (AdminHandler), or
// index.accept_empty set at start, which accepts any loss at once.
//
// Shutdown (the context passed to Run ending): polling stops, records in
// flight are decided, produced and committed, the member leaves its group
// and Run returns nil — all within kafka.shutdown_timeout; past it, what
// is not done is abandoned (re-read by the partitions' next owners) and
// Run returns an error wrapping ErrShutdownDeadline.
package service

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kprom"
	"golang.org/x/sync/errgroup"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/consumer"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/metrics"
	"github.com/neardup/neardup/pipeline"
	"github.com/neardup/neardup/sink"
)

// Errors Run returns.
var (
	// ErrShutdownDeadline: records in flight were abandoned at shutdown.
	ErrShutdownDeadline = errors.New("service: shutdown deadline passed")
	// ErrKilled: the service was stopped with Kill.
	ErrKilled = errors.New("service: killed")
)

// Options configure a Service.
type Options struct {
	// Config is the loaded configuration; serve's keys are checked with
	// config.ValidateServe.
	Config *config.Config
	// Pipeline is the pipeline configuration (pipeline.FromConfig). The
	// service sets its Metrics and IndexHealth; a zero Retry becomes
	// "until shutdown".
	Pipeline pipeline.Config
	// Store is the opened index, shared by any number of services; the
	// service does not close it.
	Store index.Store
	// Registerer receives the service's and the Kafka clients' metrics;
	// Gatherer is served on /metrics. Either may be nil (no metrics, no
	// /metrics endpoint).
	Registerer prometheus.Registerer
	Gatherer   prometheus.Gatherer
	Logger     *slog.Logger
	Version    string
	// MaintainInterval is how often the index's maintenance runs when
	// the store has any (index.Redis: expiries of closed generations, so
	// an idle namespace still expires); 0 is hourly.
	MaintainInterval time.Duration
	// EvictionInterval is how often the index's servers' maxmemory-policy
	// is checked after the check at start; 0 is every 30s.
	EvictionInterval time.Duration
	// ServedAt, when set, is the address of a listener the caller owns on
	// http.addr and serves Handler() on: the service opens none of its
	// own. neardup serve holds one listener from process start to exit,
	// so /healthz answers while the service starts, retries its
	// dependencies and drains at shutdown.
	ServedAt string
}

// Service is one neardup serve instance. Create it with New and call Run
// once; Run releases everything New acquired (Close does, when Run is
// never called).
type Service struct {
	cfg   *config.Config
	pl    *pipeline.Pipeline
	store index.Store
	src   *consumer.Kafka
	snk   *sink.Kafka
	m     *metrics.Metrics
	log   *slog.Logger
	ln    net.Listener
	srv   *http.Server
	// servedAt is Options.ServedAt; mux the endpoints' handler.
	servedAt string
	mux      http.Handler
	// The admin endpoint (http.admin_addr), on a listener of its own.
	adminLn  net.Listener
	adminSrv *http.Server

	indexUp   atomic.Bool
	loss      loss
	kafkaErr  atomic.Pointer[string]
	indexErr  atomic.Pointer[string]
	evicting  atomic.Pointer[string] // why the index may evict keys (nil: it may not)
	evictErr  atomic.Bool            // the last eviction check failed
	stalled   atomic.Pointer[string] // why production is stalled (nil: it is not)
	killed    atomic.Bool
	kill      chan struct{}
	killOnce  sync.Once
	closeOnce sync.Once

	docs, dead, completed atomic.Int64
	snkClosed             chan struct{} // the producer's close has finished (finish)
	maintainEvery         time.Duration
	evictionEvery         time.Duration
}

// pinger is the optional health check of an index.Store.
type pinger interface{ Ping(context.Context) error }

// evictionChecker is the optional eviction check of an index.Store
// (index.Redis).
type evictionChecker interface {
	EvictionPolicies(context.Context) (map[string]string, error)
}

// evictionInterval is how often the index's servers' maxmemory-policy is
// read (and once at start).
const evictionInterval = 30 * time.Second

// maintainer is the optional periodic maintenance of an index.Store.
type maintainer interface{ Maintain(context.Context) error }

// New validates the configuration, creates the Kafka clients, checks the
// brokers and topics, and opens the HTTP listener. It fails with an error
// naming the key for bad configuration and wrapping ErrKafka when the
// cluster cannot be used.
func New(ctx context.Context, o Options) (*Service, error) {
	c := o.Config
	if err := c.ValidateServe(); err != nil {
		return nil, err
	}
	if o.Store == nil {
		return nil, errors.New("service: no index store")
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Service{cfg: c, store: o.Store, log: log, kill: make(chan struct{}), snkClosed: make(chan struct{}),
		maintainEvery: o.MaintainInterval}
	if s.maintainEvery <= 0 {
		s.maintainEvery = time.Hour
	}
	s.evictionEvery = cmp.Or(o.EvictionInterval, evictionInterval)
	s.indexUp.Store(true)
	if o.Registerer != nil {
		s.m = metrics.New(o.Registerer, o.Version)
	}
	base, lg, err := clientOptions(c.Kafka, log)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", config.ErrInvalid, err)
	}
	withHooks := func(client string) []kgo.Opt {
		opts := append([]kgo.Opt{}, base...)
		if o.Registerer != nil {
			km := kprom.NewMetrics("neardup_kafka", kprom.Registerer(o.Registerer),
				kprom.WithStaticLabel(prometheus.Labels{"client": client}))
			opts = append(opts, kgo.WithHooks(km))
		}
		return opts
	}
	k := c.Kafka
	pingCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	admin, err := kgo.NewClient(base...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKafka, err)
	}
	err = checkKafka(pingCtx, admin, k, lg)
	limits := map[string]int{}
	if err == nil {
		limits = topicLimits(pingCtx, admin, k, log)
	}
	admin.Close()
	if err != nil {
		return nil, err
	}

	// Events are shaped in the pipeline: none larger than the output
	// topic takes.
	pc := o.Pipeline
	pc.Metrics = s.m
	pc.IndexHealth = s.indexHealth
	if pc.Retry == 0 {
		pc.Retry = -1 // until shutdown: never give up while records wait
	}
	if pc.MaxEventBytes <= 0 {
		pc.MaxEventBytes = pipeline.DefaultMaxEventBytes
	}
	if fit := sink.MaxEventBytes(limits[k.OutputTopic]); pc.MaxEventBytes > fit {
		log.Info("pipeline.max_event_bytes is more than the output topic takes: events are limited to what it takes",
			"pipeline.max_event_bytes", pc.MaxEventBytes, "topic", k.OutputTopic, "max.message.bytes", limits[k.OutputTopic], "max_event_bytes", fit)
		pc.MaxEventBytes = fit
	}
	pl, err := pipeline.New(pc, gate{s: s, ix: o.Store})
	if err != nil {
		return nil, err
	}
	s.pl = pl

	s.snk, err = sink.NewKafka(sink.KafkaConfig{
		Client: withHooks("producer"), EventsTopic: k.OutputTopic, DeadLetterTopic: k.DeadLetterTopic,
		// No delivery timeout: a record the brokers do not acknowledge is
		// retried, production reported stalled past kafka.produce_timeout
		// (checkProduction); a restart would not unstick the brokers.
		UniqueTopic: k.UniqueTopic, MaxBytes: limits, Metrics: s.m,
	})
	if err != nil {
		return nil, err
	}
	s.src, err = consumer.NewKafka(consumer.KafkaConfig{
		Client: withHooks("consumer"), Topic: k.InputTopic, Group: k.Group, FromEnd: k.StartOffset == "latest",
		MaxBytes: c.Sketch.MaxBytes, MaxInflightRecords: k.MaxInflightRecords, MaxInflightBytes: k.MaxInflightBytes,
		MaxRecordBytes: k.MaxRecordBytes, ProbeClient: base, DrainTimeout: k.ShutdownTimeout,
		SessionTimeout: k.SessionTimeout, RebalanceTimeout: k.RebalanceTimeout, HeartbeatInterval: k.HeartbeatInterval,
		InstanceID: k.InstanceID, Metrics: s.m, Logger: log,
	})
	if err != nil {
		s.snk.Close()
		return nil, err
	}
	s.mux, s.servedAt = s.handler(o.Gatherer), o.ServedAt
	if c.HTTP.Addr != "" && o.ServedAt == "" {
		ln, err := net.Listen("tcp", c.HTTP.Addr)
		if err != nil {
			s.src.Abort()
			s.snk.Close()
			return nil, fmt.Errorf("%w: http.addr %s: %w", config.ErrInvalid, c.HTTP.Addr, err)
		}
		s.ln = ln
		s.srv = &http.Server{Handler: s.mux, ReadHeaderTimeout: 5 * time.Second}
	}
	if a := c.HTTP.AdminAddr; a != "" {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("%w: http.admin_addr %s: %w", config.ErrInvalid, a, err)
		}
		s.adminLn = ln
		s.adminSrv = &http.Server{Handler: AdminHandler(c.HTTP.AdminToken, s.AcceptEmptyIndex), ReadHeaderTimeout: 5 * time.Second}
	}
	return s, nil
}

// AdminAddr returns the address of the admin endpoint ("" when off).
func (s *Service) AdminAddr() string {
	if s.adminLn == nil {
		return ""
	}
	return s.adminLn.Addr().String()
}

// Addr returns the address of the metrics and health endpoints ("" when
// there are none).
func (s *Service) Addr() string {
	if s.ln == nil {
		return s.servedAt
	}
	return s.ln.Addr().String()
}

// Handler returns the handler of /metrics, /healthz and /readyz, for a
// caller that serves them itself (Options.ServedAt).
func (s *Service) Handler() http.Handler { return s.mux }

func (s *Service) handler(g prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	if g != nil {
		mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if why := s.notReady(); len(why) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not ready: "+strings.Join(why, "; "))
			return
		}
		fmt.Fprintln(w, "ready")
	})
	return mux
}

// Ready reports whether /readyz would answer 200.
func (s *Service) Ready() bool { return len(s.notReady()) == 0 }

// Completed returns the number of records decided and fully acknowledged
// since Run started.
func (s *Service) Completed() int64 { return s.completed.Load() }

// notReady lists why the service is not ready; empty when it is.
func (s *Service) notReady() []string {
	var why []string
	if p := s.kafkaErr.Load(); p != nil {
		why = append(why, "kafka unreachable: "+*p)
	}
	if !s.indexUp.Load() {
		msg := "index unavailable"
		if p := s.indexErr.Load(); p != nil {
			msg += ": " + *p
		}
		why = append(why, msg)
	}
	if p := s.evicting.Load(); p != nil && !s.cfg.Index.AllowEviction {
		why = append(why, "index may evict keys: "+*p+" (a full Redis would silently forget documents: set maxmemory-policy noeviction, or index.allow_eviction=true)")
	}
	if lost := s.lostReason(); lost != "" {
		why = append(why, "index lost: "+lost+" (nothing is decided: restore the data, or accept the empty index with POST "+AcceptEmptyPath+")")
	}
	if p := s.stalled.Load(); p != nil {
		why = append(why, "production stalled: "+*p)
	}
	if n := s.src.Stalled(); n > 0 {
		why = append(why, fmt.Sprintf("%d input partition(s) cannot advance (record batch too large to read; see the logs)", n))
	}
	if !s.src.Joined() {
		why = append(why, "consumer group not joined")
	}
	return why
}

// indexHealth is told the outcome of every index call.
func (s *Service) indexHealth(err error) {
	up := err == nil || !errors.Is(err, index.ErrUnavailable)
	if was := s.indexUp.Swap(up); was != up {
		if up {
			s.log.Info("index available again")
		} else {
			s.log.Error("index unavailable: documents wait, nothing is reported until it returns", "err", err)
		}
	}
	if !up {
		msg := err.Error()
		s.indexErr.Store(&msg)
	}
}

// Kill stops the service as a crash would: nothing more is committed and
// the group is left at once. Run returns ErrKilled.
func (s *Service) Kill() {
	s.killOnce.Do(func() {
		s.killed.Store(true)
		close(s.kill)
	})
}

// WaitClosed waits, after Run returned, until the Kafka clients have
// finished closing: when the brokers stop answering, Run returns at its
// deadline and the clients' closes go on in the background, bounded by
// their request timeouts. The serve command exits without waiting.
func (s *Service) WaitClosed(ctx context.Context) error {
	for _, ch := range []<-chan struct{}{s.src.Closed(), s.snkClosed} {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Close releases what New acquired, for a Service whose Run is never
// called.
func (s *Service) Close() {
	s.closeOnce.Do(func() {
		s.src.Abort()
		s.snk.Close()
		close(s.snkClosed)
		if s.ln != nil {
			s.ln.Close()
		}
		if s.adminLn != nil {
			s.adminLn.Close()
		}
	})
}

// Run processes records until ctx ends, then shuts down gracefully (see
// the package documentation). It returns nil after a clean shutdown, and
// the first error otherwise: a failed produce, a non-retryable index
// error, ErrShutdownDeadline or ErrKilled.
func (s *Service) Run(ctx context.Context) error {
	k := s.cfg.Kafka
	s.log.Info("neardup serve starting", "input_topic", k.InputTopic, "group", k.Group, "output_topic", k.OutputTopic,
		"index", redactedIndex(s.cfg), "http", s.Addr(), "admin", s.AdminAddr(), "config", redactedConfig(s.cfg))
	if index.IsMemory(s.cfg.Index.URL) {
		s.log.Warn("index.url=memory: this instance keeps its own index; instances of one group must share a Redis index to see each other's documents")
	}

	// work ends on failure, on Kill, or at the shutdown deadline; poll
	// ends as soon as shutdown starts.
	work, abort := context.WithCancelCause(context.WithoutCancel(ctx))
	defer abort(nil)
	g, gctx := errgroup.WithContext(work)
	poll, stopPoll := context.WithCancel(gctx)
	defer stopPoll()

	finished := make(chan struct{}) // the sink has written every output
	var deadline atomic.Bool

	// Shutdown and kill watcher, owned by Run: it ends when the work does.
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		select {
		case <-ctx.Done():
			s.log.Info("shutting down: finishing records in flight", "deadline", k.ShutdownTimeout)
			stopPoll()
			t := time.NewTimer(k.ShutdownTimeout)
			defer t.Stop()
			select {
			case <-t.C:
				deadline.Store(true)
				abort(ErrShutdownDeadline)
			case <-finished:
			case <-work.Done():
			case <-s.kill:
				abort(ErrKilled)
			}
		case <-s.kill:
			abort(ErrKilled)
		case <-work.Done():
		case <-finished:
		}
	}()

	g.Go(func() error {
		defer close(finished)
		read := func(sctx context.Context, items chan<- pipeline.Item) error {
			// Reading also stops when shutdown starts (poll).
			rctx, stop := context.WithCancel(sctx)
			defer stop()
			defer context.AfterFunc(poll, stop)()
			return s.src.Run(rctx, items)
		}
		write := func(o pipeline.Output) error {
			rec := o.Tag.(*consumer.Record)
			s.docs.Add(1)
			if o.Dead != nil {
				s.dead.Add(1)
			}
			s.snk.Write(gctx, o, rec.Record, func(err error) {
				switch {
				case err == nil:
					rec.Done()
					s.completed.Add(1)
				case gctx.Err() != nil: // stopping anyway: the record is read again
				default:
					s.log.Error("produce failed; stopping without committing its record", "topic", rec.Topic,
						"partition", rec.Partition, "offset", rec.Offset, "err", err)
					abort(err)
				}
			})
			return nil
		}
		if err := s.pl.Stream(gctx, read, write); err != nil {
			return err
		}
		if gctx.Err() != nil {
			return nil
		}
		return s.snk.Flush(gctx)
	})
	if _, ok := s.store.(evictionChecker); ok {
		s.checkEviction(gctx)
		g.Go(func() error { s.loop(gctx, finished, s.evictionEvery, s.checkEviction); return nil })
	}
	g.Go(func() error { s.loop(gctx, finished, k.CommitInterval, s.commit); return nil })
	g.Go(func() error { s.loop(gctx, finished, 2*time.Second, s.check); return nil })
	g.Go(func() error { s.loop(gctx, finished, lagInterval(k.CommitInterval), s.lag); return nil })
	if _, ok := s.store.(maintainer); ok {
		g.Go(func() error { s.loop(gctx, finished, s.maintainEvery, s.maintain); return nil })
	}
	for _, hs := range []struct {
		srv *http.Server
		ln  net.Listener
	}{{s.srv, s.ln}, {s.adminSrv, s.adminLn}} {
		if hs.srv == nil {
			continue
		}
		g.Go(func() error {
			err := hs.srv.Serve(hs.ln)
			if errors.Is(err, http.ErrServerClosed) {
				return nil
			}
			return fmt.Errorf("service: http: %w", err)
		})
		g.Go(func() error {
			select {
			case <-finished:
			case <-gctx.Done():
			}
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			defer cancel()
			return hs.srv.Shutdown(sctx)
		})
	}
	err := g.Wait()
	<-watchDone
	if cause := context.Cause(work); cause != nil && !errors.Is(cause, context.Canceled) {
		err = cause
	}
	return s.finish(ctx, err, deadline.Load())
}

// finish commits what is done, leaves the group and closes the clients,
// within finishTimeout whatever the brokers do.
func (s *Service) finish(ctx context.Context, err error, deadline bool) error {
	s.closeOnce.Do(func() {
		if s.killed.Load() {
			s.src.Abort()
			s.snk.Close()
			close(s.snkClosed)
			return
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout-2*time.Second)
		defer cancel()
		if cerr := s.src.Close(cctx); cerr != nil {
			s.log.Warn("final commit", "err", cerr)
		}
		// The producer's close fails what is not acknowledged; bounded
		// like the consumer's.
		go func() { // owned by finish; WaitClosed waits for it
			defer close(s.snkClosed)
			s.snk.Close()
		}()
		select {
		case <-s.snkClosed:
		case <-time.After(time.Second):
			s.log.Warn("producer close abandoned after 1s (brokers not answering)")
		}
	})
	if s.killed.Load() {
		return ErrKilled
	}
	if deadline {
		s.log.Warn("shutdown deadline passed: records in flight were abandoned and will be read again", "deadline", s.cfg.Kafka.ShutdownTimeout)
		return fmt.Errorf("%w (%v)", ErrShutdownDeadline, s.cfg.Kafka.ShutdownTimeout)
	}
	s.log.Info("neardup serve stopped", "documents", s.docs.Load(), "dead_letters", s.dead.Load(), "err", err)
	return err
}

// finishTimeout bounds the final commit, the leave and the clients'
// close after the records in flight are done or abandoned: Run returns
// within kafka.shutdown_timeout + finishTimeout of the shutdown.
const finishTimeout = 5 * time.Second

// loop calls fn every interval until finished or ctx ends.
func (s *Service) loop(ctx context.Context, finished <-chan struct{}, every time.Duration, fn func(context.Context)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			fn(ctx)
		case <-finished:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (s *Service) commit(ctx context.Context) {
	if err := s.src.Commit(ctx); err != nil && ctx.Err() == nil {
		s.log.Warn("offset commit failed; retried at the next interval", "err", err)
	}
}

// lagInterval is how often the lag is read from the brokers: with the
// commits, between 1 s and 10 s.
func lagInterval(commit time.Duration) time.Duration {
	return min(max(commit, time.Second), 10*time.Second)
}

func (s *Service) lag(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.src.RefreshLag(cctx); err != nil && ctx.Err() == nil {
		s.log.Warn("consumer lag not refreshed", "err", err)
	}
}

// maintain runs the index's maintenance; a failure is logged and retried
// at the next interval (the index's own expiry goes on with the writes).
func (s *Service) maintain(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	epoch, lost := s.lossState()
	if lost != nil {
		return // it would fail: the namespace is gone
	}
	err := s.store.(maintainer).Maintain(cctx)
	if errors.Is(err, index.ErrIndexLost) {
		s.markLost(epoch, err)
		return
	}
	if err != nil && ctx.Err() == nil {
		s.log.Warn("index maintenance failed; retried at the next interval", "every", s.maintainEvery, "err", err)
		if errors.Is(err, index.ErrUnavailable) {
			s.indexHealth(err)
		}
		return
	}
	s.m.Maintenance(err)
}

// check pings Kafka and the index for /readyz.
func (s *Service) check(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := s.snk.Client().Ping(cctx); err != nil && ctx.Err() == nil {
		msg := err.Error()
		if s.kafkaErr.Swap(&msg) == nil {
			s.log.Error("kafka unreachable", "err", err)
		}
	} else if s.kafkaErr.Swap(nil) != nil {
		s.log.Info("kafka reachable again")
	}
	if p, ok := s.store.(pinger); ok {
		s.indexHealth(p.Ping(cctx))
	}
	if s.indexUp.Load() {
		s.probeLoss(cctx)
	}
	s.checkProduction()
	ready := len(s.notReady()) == 0
	s.m.Ready(ready)
	s.m.IndexUp(s.indexUp.Load())
}

// checkProduction reports production as stalled while the oldest
// unacknowledged produce is older than kafka.produce_timeout.
func (s *Service) checkProduction() {
	age, limit := s.snk.OldestPending(), s.cfg.Kafka.ProduceTimeout
	stalled := age > limit
	s.m.ProducePending(age, stalled)
	if !stalled {
		if s.stalled.Swap(nil) != nil {
			s.log.Info("production acknowledged again")
		}
		return
	}
	msg := fmt.Sprintf("a record produced %v ago is not acknowledged by the brokers (kafka.produce_timeout %v); nothing behind it is committed",
		age.Round(time.Second), limit)
	if s.stalled.Swap(&msg) == nil {
		s.log.Error("production stalled: the brokers do not acknowledge the records produced; waiting, nothing behind them is committed",
			"oldest", age.Round(time.Second), "produce_timeout", limit)
	}
}

// checkEviction reads the maxmemory-policy of the index's servers: any
// other than noeviction makes the member not ready (unless
// index.allow_eviction) and is counted in neardup_index_evicting_servers.
// A failed read (a user without the right to INFO, Redis away) is logged
// once and keeps the last state.
func (s *Service) checkEviction(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	policies, err := s.store.(evictionChecker).EvictionPolicies(cctx)
	if err != nil {
		if ctx.Err() == nil && !s.evictErr.Swap(true) {
			s.log.Warn("cannot read the index's maxmemory-policy (INFO memory); eviction is not checked until it can be read", "err", err)
		}
		return
	}
	s.evictErr.Store(false)
	var bad []string
	for _, addr := range slices.Sorted(maps.Keys(policies)) {
		if p := policies[addr]; p != "noeviction" {
			bad = append(bad, "maxmemory-policy "+p+" on "+addr)
		}
	}
	s.m.Evicting(len(bad))
	if len(bad) == 0 {
		if s.evicting.Swap(nil) != nil {
			s.log.Info("every Redis server of the index has maxmemory-policy noeviction again")
		}
		return
	}
	msg := strings.Join(bad, ", ")
	if old := s.evicting.Swap(&msg); old == nil || *old != msg {
		lv := slog.LevelError
		if s.cfg.Index.AllowEviction {
			lv = slog.LevelWarn
		}
		s.log.Log(ctx, lv, "the index's Redis may evict keys when full, silently forgetting documents: set maxmemory-policy noeviction (docs/operations.md, NeardupIndexEvicting)",
			"servers", msg, "index.allow_eviction", s.cfg.Index.AllowEviction)
	}
}

func redactedIndex(c *config.Config) string { return index.RedactURL(c.Index.URL) }

// redactedConfig is the configuration as printed in the start-up log:
// secrets masked, URLs through index.RedactURL (config.Display).
func redactedConfig(c *config.Config) map[string]string { return c.Redacted() }
