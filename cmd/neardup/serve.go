package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/metrics"
	"github.com/neardup/neardup/service"
)

// runServe implements "neardup serve [--config FILE]".
func runServe(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	overrides, path := config.RegisterFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: neardup serve [--config FILE] [--key=value ...]

Runs the streaming service: a member of the Kafka consumer group
kafka.group reads documents from kafka.input_topic, decides each one (the
same pipeline as scan), and produces verdict events to kafka.output_topic,
rejected records to kafka.dead_letter_topic, and (optionally) unique
documents' records to kafka.unique_topic. Offsets are committed only after
the index write and every produce are acknowledged (at-least-once).

Every key can be set in the file, as an environment variable
(NEARDUP_KAFKA_BROKERS, NEARDUP_KAFKA_INPUT_TOPIC, ...) or as a flag. Only
kafka.brokers and kafka.input_topic are required.

Endpoints on http.addr (read-only, unauthenticated): /metrics
(Prometheus), /healthz, /readyz. On http.admin_addr (127.0.0.1:8081 by
default; empty: off; a bearer token with http.admin_token): POST
/admin/accept-empty-index: after the index was lost (Redis restarted
without its data; neardup_index_lost 1), go on with an empty index.
SIGTERM or SIGINT: records in flight are finished, produced and committed,
the group is left, exit 0 — within kafka.shutdown_timeout (default 10s).
Exit codes: 0 stopped cleanly, 1 failed, 2 bad configuration.

Flags (any configuration key is also a flag; see 'neardup config example'):
`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	cfg, err := config.Load(*path, os.Environ(), overrides)
	if err != nil {
		return usagef("%w", err)
	}
	if err := cfg.ValidateServe(); err != nil {
		return usagef("%w", err)
	}
	log := newLogger(stderr, cfg.Log)
	// go-redis logs through a package-level logger (failed dials,
	// cluster reloads) whose only hook is the global redis.SetLogger.
	// The command is the one owner of the process's logging, so it is
	// set here, once, and never in a library package; without it those
	// lines would be plain text inside serve's JSON log stream.
	redis.SetLogger(redisLogger{log})
	// One listener on http.addr from here to exit: /healthz answers while
	// serve starts, waits for its dependencies, runs and drains.
	st := &startup{accept: make(chan struct{}, 1)}
	var ep *endpoint
	if cfg.HTTP.Addr != "" {
		if ep, err = openEndpoint(cfg.HTTP.Addr, st.handler()); err != nil {
			return err
		}
		defer ep.close()
		log.Info("neardup serve: endpoints up; /readyz answers 503 until the service has started", "http", ep.addr())
	}
	svc, store, err := startService(ctx, &cfg, log, st, ep)
	if err != nil || svc == nil { // svc nil: stopped while starting
		return err
	}
	defer store.Close()
	if ep != nil {
		ep.set(svc.Handler())
		defer ep.set(stopping())
	}
	return svc.Run(ctx)
}

// endpoint is serve's listener on http.addr, held from start to exit; the
// handler behind it changes as serve starts, runs and stops.
type endpoint struct {
	h    atomic.Pointer[http.Handler]
	ln   net.Listener
	srv  *http.Server
	done chan struct{}
}

// openEndpoint listens on addr and serves h until close; a listen error is
// bad configuration.
func openEndpoint(addr string, h http.Handler) (*endpoint, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usagef("http.addr %s: %w", addr, err)
	}
	e := &endpoint{ln: ln, done: make(chan struct{})}
	e.set(h)
	e.srv = &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*e.h.Load()).ServeHTTP(w, r) }),
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { // owned by close
		defer close(e.done)
		_ = e.srv.Serve(ln) // ErrServerClosed after close
	}()
	return e, nil
}

func (e *endpoint) set(h http.Handler) { e.h.Store(&h) }
func (e *endpoint) addr() string       { return e.ln.Addr().String() }

// close stops serving, letting requests in progress finish for a second.
func (e *endpoint) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = e.srv.Shutdown(ctx)
	<-e.done
}

// stopping answers while serve exits after the service stopped.
func stopping() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "not ready: stopping")
	})
	return mux
}

// startService opens the index and creates the service, retrying while
// the index or the Kafka cluster cannot be reached, or a topic is missing
// (index.retry: serve waits for its dependencies and reports not ready
// meanwhile): on ep (http.addr) /healthz answers 200 and /readyz 503
// naming what is awaited. Bad configuration is not retried. It returns a
// nil service, and no error, when ctx ends first.
//
// When the consumer group has committed offsets (documents were decided
// before) the index must exist: a missing one is index.ErrIndexLost, and
// serve waits as for an unreachable index, /readyz naming the loss and
// /metrics exporting neardup_index_lost 1, until the data is restored or
// the loss is accepted (index.accept_empty, or POST
// /admin/accept-empty-index on http.admin_addr).
func startService(ctx context.Context, cfg *config.Config, log *slog.Logger, st *startup, ep *endpoint) (*service.Service, index.Store, error) {
	backoff := time.Second
	servedAt := ""
	if ep != nil {
		servedAt = ep.addr()
	}
	for {
		svc, store, err := tryStart(ctx, cfg, log, st.accepted.Load(), servedAt)
		lost := errors.Is(err, index.ErrIndexLost)
		if err == nil || errors.Is(err, errUsage) || !(lost || retryableAtStart(err)) {
			return svc, store, err
		}
		msg := err.Error()
		if lost {
			msg = "index lost: " + msg + " (the consumer group has committed offsets, so the index existed: restore the data, or accept the empty index with POST " +
				service.AcceptEmptyPath + " or index.accept_empty=true)"
		}
		st.waiting.Store(&msg)
		st.lost.Store(lost)
		// While the index is lost the admin endpoint takes the
		// acceptance; the service listens on http.admin_addr itself, so
		// it is handed over for each attempt.
		stop := func() {}
		admin := ""
		if lost && cfg.HTTP.AdminAddr != "" {
			var lerr error
			if stop, admin, lerr = st.serveAdmin(cfg.HTTP); lerr != nil {
				return nil, nil, lerr
			}
		}
		log.Info("neardup serve waiting for its dependencies; /readyz answers 503 meanwhile", "http", servedAt, "admin", admin)
		if lost {
			log.Error("index lost at start: the consumer group has decided documents, but the index namespace does not exist (Redis restarted without its data?); nothing is decided until the data is restored or the empty index is accepted (docs/operations.md)",
				"retry_in", backoff, "err", err)
		} else {
			log.Warn("dependency unavailable at start; retrying", "in", backoff, "err", err)
		}
		select {
		case <-ctx.Done():
			stop()
			log.Info("neardup serve stopped while starting")
			return nil, nil, nil
		case <-time.After(backoff):
		case <-st.accept:
			log.Warn("lost index accepted: starting with an empty index")
		}
		stop()
		backoff = min(2*backoff, 30*time.Second)
	}
}

// tryStart opens the index and creates the service once. Unless
// acceptEmpty (or index.accept_empty), a group with committed offsets
// needs the index to exist.
func tryStart(ctx context.Context, cfg *config.Config, log *slog.Logger, acceptEmpty bool, servedAt string) (*service.Service, index.Store, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var mode index.Options
	if !acceptEmpty && !cfg.Index.AcceptEmpty && !index.IsMemory(cfg.Index.URL) {
		decided, err := service.GroupHasOffsets(ctx, cfg.Kafka, log)
		if err != nil {
			return nil, nil, err
		}
		mode.RequireExisting = decided
	}
	pc, store, err := openIndex(ctx, cfg, mode)
	if err != nil {
		return nil, nil, err
	}
	svc, err := service.New(ctx, service.Options{
		Config: cfg, Pipeline: pc, Store: store, Registerer: reg, Gatherer: reg, Logger: log, Version: buildVersion(),
		ServedAt: servedAt,
	})
	if err != nil {
		store.Close()
		if errors.Is(err, config.ErrInvalid) {
			return nil, nil, usagef("%w", err)
		}
		return nil, nil, err
	}
	return svc, store, nil
}

// retryableAtStart reports whether a start-up failure is a dependency
// that may come back: the index or the Kafka cluster unreachable.
func retryableAtStart(err error) bool {
	return errors.Is(err, index.ErrUnavailable) || errors.Is(err, service.ErrKafka)
}

// startup is what the endpoints serve until the service has started.
type startup struct {
	waiting  atomic.Pointer[string] // what is awaited
	lost     atomic.Bool            // the last attempt found the index lost
	accepted atomic.Bool            // the loss was accepted (POST)
	accept   chan struct{}          // wakes the wait for the next attempt
}

// handler serves /healthz (200) and /readyz (503 with what is awaited);
// while the index is lost also /metrics (neardup_index_lost 1,
// neardup_ready 0).
func (st *startup) handler() http.Handler {
	reg := prometheus.NewRegistry()
	metrics.New(reg, buildVersion()).IndexLost(true)
	lostMetrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		msg := "starting"
		if p := st.waiting.Load(); p != nil {
			msg += ": " + *p
		}
		fmt.Fprintln(w, "not ready: "+msg)
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		if !st.lost.Load() {
			http.NotFound(w, r)
			return
		}
		lostMetrics.ServeHTTP(w, r)
	})
	return mux
}

// serveAdmin serves POST /admin/accept-empty-index on http.admin_addr
// (service.AdminHandler, as the service does) until stop is called; stop
// waits for the server.
func (st *startup) serveAdmin(h config.HTTP) (stop func(), bound string, err error) {
	ln, err := net.Listen("tcp", h.AdminAddr)
	if err != nil {
		return nil, "", usagef("http.admin_addr %s: %w", h.AdminAddr, err)
	}
	accept := func() error {
		st.accepted.Store(true)
		select {
		case st.accept <- struct{}{}:
		default:
		}
		return nil
	}
	srv := &http.Server{Handler: service.AdminHandler(h.AdminToken, accept), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() { // owned by stop
		defer close(done)
		_ = srv.Serve(ln) // ErrServerClosed after stop
	}()
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}
	return stop, ln.Addr().String(), nil
}

// redisLogger sends go-redis's log lines to slog at warning level (they
// report failures: dials, cluster state).
type redisLogger struct{ l *slog.Logger }

func (r redisLogger) Printf(ctx context.Context, format string, v ...any) {
	r.l.Log(ctx, slog.LevelWarn, "redis client: "+fmt.Sprintf(format, v...))
}

// durationString writes durations as Go duration strings ("10s"), which
// the JSON handler would otherwise write as integer nanoseconds.
func durationString(_ []string, a slog.Attr) slog.Attr {
	if d, ok := a.Value.Any().(time.Duration); ok {
		return slog.String(a.Key, d.String())
	}
	return a
}

// newLogger returns the service logger: JSON or text on w at the level
// of log.level.
func newLogger(w io.Writer, c config.Log) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(c.Level)) // validated by config
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: durationString}
	if c.Format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
