package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/consumer"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/pipeline"
)

// pathList is a repeatable flag.
type pathList []string

func (p *pathList) String() string     { return strings.Join(*p, ",") }
func (p *pathList) Set(v string) error { *p = append(*p, v); return nil }

// runCheck implements "neardup check [--from PATH ...] [--index URL] PATH ...".
func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	overrides, path := config.RegisterFlags(fs, config.PipelineSections...)
	var from pathList
	fs.Var(&from, "from", "read and store these documents first, in the memory index only (a corpus; repeatable)")
	ixURL := fs.String("index", "", "memory or a redis:// URL (shorthand for --index.url)")
	quiet := fs.Bool("quiet", false, "no summary")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: neardup check [--from PATH ...] [--index URL] [flags] PATH ...

Decides each document of PATH (files, directories, .jsonl, .warc, or - for
JSON lines on standard input) against the index as the service would, and
stores nothing. A Redis index is opened read-only: its namespace must exist
(a missing one, e.g. after the server lost its data, is an error, and is not
created), and nothing is written to the server, not even the clock, an
expiry or an older layout's mark. A document whose id is stored gets the
verdict recorded for it (a replay). Writes one JSON event per document, the
event scan would write, with "not_stored": true, to standard output. With
the memory index, --from names a corpus to store first (--from with a Redis
index is bad usage: it would write).

Exit codes: 0 done, 1 failed (the index unavailable or lost), 2 bad usage,
--from with a Redis index, a PATH that does not exist, or bad
configuration.

Flags (any configuration key is also a flag; see 'neardup config example'):
`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	overrides.Add("pipeline.emit", "all")
	cfg, err := loadConfig(*path, *ixURL, overrides)
	if err != nil {
		return err
	}
	paths := fs.Args()
	if len(paths) == 0 {
		return usagef("no PATH to check")
	}
	if len(from) > 0 && !index.IsMemory(cfg.Index.URL) {
		return usagef("--from stores a corpus first, which only the memory index allows (the index is %s)", index.RedactURL(cfg.Index.URL))
	}
	if err := checkPaths(append(append([]string(nil), from...), paths...)); err != nil {
		return err
	}
	// Read-only: a Redis namespace must exist already, and nothing is
	// written to it (openIndex with index.Options.ReadOnly).
	pc, store, err := openIndex(ctx, &cfg, index.Options{ReadOnly: true})
	if errors.Is(err, index.ErrIndexLost) {
		return missingNamespace(ctx, &cfg, "nothing to check against")
	}
	if err != nil {
		return err
	}
	defer store.Close()
	// What the index says now: an earlier document whose verdict a member
	// has not recorded yet stands for its own cluster, without waiting.
	pc.SettleWait = -1
	stored := 0
	if len(from) > 0 {
		pl, err := pipeline.New(pc, store)
		if err != nil {
			return err
		}
		err = pl.Stream(ctx, (&consumer.Files{Paths: from, MaxBytes: cfg.Sketch.MaxBytes}).Run, func(pipeline.Output) error {
			stored++
			return nil
		})
		if err != nil {
			return err
		}
	}
	pl, err := pipeline.New(pc, index.ReadOnly(store))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	checked, dups := 0, 0
	err = pl.Stream(ctx, (&consumer.Files{Paths: paths, MaxBytes: cfg.Sketch.MaxBytes}).Run, func(o pipeline.Output) error {
		checked++
		switch {
		case o.Dead != nil:
			return enc.Encode(o.Dead)
		case o.Event != nil:
			if o.Event.Kind != pipeline.KindUnique {
				dups++
			}
			return enc.Encode(struct {
				*pipeline.Event
				NotStored bool `json:"not_stored"`
			}{o.Event, true})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !*quiet {
		if len(from) > 0 {
			fmt.Fprintf(stderr, "neardup check: %d documents stored from --from\n", stored)
		}
		fmt.Fprintf(stderr, "neardup check: %d documents checked, %d duplicates (not stored)\n", checked, dups)
	}
	return nil
}
