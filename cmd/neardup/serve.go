package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/neardup/neardup/config"
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

Endpoints on http.addr: /metrics (Prometheus), /healthz, /readyz.
SIGTERM or SIGINT: records in flight are finished, produced and committed,
the group is left, exit 0 — within kafka.shutdown_timeout (default 10s).
Exit codes: 0 stopped cleanly, 1 failed, 2 bad configuration.

Flags (any configuration key is also a flag; see 'neardup config example'):
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	cfg, err := config.Load(*path, os.Environ(), overrides)
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if err := cfg.ValidateServe(); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	log := newLogger(stderr, cfg.Log)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	pc, store, err := openStore(ctx, &cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	svc, err := service.New(ctx, service.Options{
		Config: &cfg, Pipeline: pc, Store: store, Registerer: reg, Gatherer: reg, Logger: log, Version: version,
	})
	if err != nil {
		if errors.Is(err, config.ErrInvalid) {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
		return err
	}
	if err := svc.Run(ctx); err != nil {
		return err
	}
	return nil
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
