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
	"strings"
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
	svc, store, err := startService(ctx, &cfg, log)
	if err != nil || svc == nil { // svc nil: stopped while starting
		return err
	}
	defer store.Close()
	return svc.Run(ctx)
}

// startService opens the index and creates the service, retrying while
// the index or the Kafka cluster cannot be reached (index.retry: serve
// waits for its dependencies and reports not ready meanwhile): /healthz
// answers 200 and /readyz 503 naming what is awaited on http.addr. Bad
// configuration is not retried. It returns a nil service, and no error,
// when ctx ends first.
//
// When the consumer group has committed offsets (documents were decided
// before) the index must exist: a missing one is index.ErrIndexLost, and
// serve waits as for an unreachable index, /readyz naming the loss and
// /metrics exporting neardup_index_lost 1, until the data is restored or
// the loss is accepted (index.accept_empty, or POST
// /admin/accept-empty-index on http.admin_addr).
func startService(ctx context.Context, cfg *config.Config, log *slog.Logger) (*service.Service, index.Store, error) {
	st := &startup{accept: make(chan struct{}, 1)}
	backoff := time.Second
	for {
		svc, store, err := tryStart(ctx, cfg, log, st.accepted.Load())
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
		// Between attempts a start-up endpoint holds http.addr; the
		// service listens on it itself, so it is handed over for each
		// attempt.
		stop := func() {}
		if cfg.HTTP.Addr != "" || cfg.HTTP.AdminAddr != "" {
			var addr, admin string
			var lerr error
			if stop, addr, admin, lerr = st.serve(cfg.HTTP); lerr != nil {
				return nil, nil, lerr
			}
			log.Info("neardup serve waiting for its dependencies; /readyz answers 503 meanwhile", "http", addr, "admin", admin)
		}
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
func tryStart(ctx context.Context, cfg *config.Config, log *slog.Logger, acceptEmpty bool) (*service.Service, index.Store, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	open := openStore
	if !acceptEmpty && !cfg.Index.AcceptEmpty && !strings.HasPrefix(cfg.Index.URL, "memory") {
		decided, err := service.GroupHasOffsets(ctx, cfg.Kafka, log)
		if err != nil {
			return nil, nil, err
		}
		if decided {
			open = openExistingStore
		}
	}
	pc, store, err := open(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	svc, err := service.New(ctx, service.Options{
		Config: cfg, Pipeline: pc, Store: store, Registerer: reg, Gatherer: reg, Logger: log, Version: buildVersion(),
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

// startup is what the start-up endpoint serves between attempts.
type startup struct {
	waiting  atomic.Pointer[string] // what is awaited
	lost     atomic.Bool            // the last attempt found the index lost
	accepted atomic.Bool            // the loss was accepted (POST)
	accept   chan struct{}          // wakes the wait for the next attempt
}

// serve serves /healthz (200) and /readyz (503 with what is awaited) on
// http.addr until stop is called; stop waits for the servers. While the
// index is lost it also serves /metrics (neardup_index_lost 1,
// neardup_ready 0), and POST /admin/accept-empty-index on
// http.admin_addr (service.AdminHandler, as the service does).
func (st *startup) serve(h config.HTTP) (stop func(), bound, admin string, err error) {
	var srvs []*http.Server
	var done []chan struct{}
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		for i, srv := range srvs {
			_ = srv.Shutdown(ctx)
			<-done[i]
		}
	}
	listen := func(key, addr string, handler http.Handler) (string, error) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return "", usagef("%s %s: %w", key, addr, err)
		}
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
		ch := make(chan struct{})
		srvs, done = append(srvs, srv), append(done, ch)
		go func() { // owned by stop
			defer close(ch)
			_ = srv.Serve(ln) // ErrServerClosed after stop
		}()
		return ln.Addr().String(), nil
	}
	if h.Addr != "" {
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
		if st.lost.Load() {
			reg := prometheus.NewRegistry()
			metrics.New(reg, buildVersion()).IndexLost(true)
			mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		}
		if bound, err = listen("http.addr", h.Addr, mux); err != nil {
			stop()
			return nil, "", "", err
		}
	}
	if h.AdminAddr != "" && st.lost.Load() {
		accept := func() error {
			st.accepted.Store(true)
			select {
			case st.accept <- struct{}{}:
			default:
			}
			return nil
		}
		if admin, err = listen("http.admin_addr", h.AdminAddr, service.AdminHandler(h.AdminToken, accept)); err != nil {
			stop()
			return nil, "", "", err
		}
	}
	return stop, bound, admin, nil
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
