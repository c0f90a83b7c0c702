package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/consumer"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/pipeline"
	"github.com/neardup/neardup/sink"
)

// errInterrupted marks a scan stopped by a signal after it drained.
var errInterrupted = errors.New("interrupted")

// summary counts what a scan did.
type summary struct {
	docs, dead int
	kinds      map[string]int
	// sentences counts documents with matching sentences (sentence mode).
	sentences int
	start     time.Time
}

func (s *summary) String() string {
	dups := s.kinds[pipeline.KindExact] + s.kinds[pipeline.KindNear] + s.kinds[pipeline.KindPartial]
	el := time.Since(s.start)
	rate := float64(s.docs) / max(el.Seconds(), 1e-9)
	sent := ""
	if s.sentences > 0 {
		sent = fmt.Sprintf(", %d with matching sentences", s.sentences)
	}
	return fmt.Sprintf("neardup scan: %d documents, %d duplicates (exact %d, near %d, partial %d)%s, %d dead letters, %.0f docs/s, %v",
		s.docs, dups, s.kinds[pipeline.KindExact], s.kinds[pipeline.KindNear], s.kinds[pipeline.KindPartial], sent, s.dead, rate, el.Round(time.Millisecond))
}

// scanArgs are scan's flags and paths, checked before anything opens.
type scanArgs struct {
	cfg      config.Config
	paths    []string
	format   consumer.Format
	warcIDs  consumer.WARCID
	deadPath string
	quiet    bool
}

// parseScan reads scan's flags and configuration and checks the paths.
func parseScan(args []string, stderr io.Writer) (*scanArgs, error) {
	fs := flag.NewFlagSet("scan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	overrides, path := config.RegisterFlags(fs, config.PipelineSections...)
	emit := fs.String("emit", "", "duplicates or all (shorthand for --pipeline.emit)")
	ixURL := fs.String("index", "", "memory or a redis:// URL (shorthand for --index.url)")
	deadPath := fs.String("dead-letter", "", "write rejected inputs as JSON lines to this file (default: standard error, where a terminal gets one line each, without the input)")
	quiet := fs.Bool("quiet", false, "no progress bar and no summary")
	inFormat := fs.String("input-format", "auto", "auto (by file name; - is JSON lines), jsonl or warc: how to read - and every PATH")
	warcID := fs.String("warc-id", "uri", "id of WARC documents: uri (WARC-Target-URI) or record-id (WARC-Record-ID)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: neardup scan [flags] [PATH ...]

Reads documents and writes one JSON event per duplicate (and per unique
document with --emit all) to standard output, in input order.
PATH is a plain-text or .html file, a .jsonl file (one JSON document per
line), a .warc or .warc.gz file (one document per HTML or text response,
resource or revisit record), a directory (walked in sorted order), or - for
JSON lines on standard input (the default when no PATH is given; WARC with
--input-format warc).

Exit codes: 0 done, 1 failed (e.g. the index stayed unavailable), 2 bad
usage, a PATH that does not exist, or bad configuration, 130 interrupted
(in-flight documents were finished and flushed).

Flags (any configuration key is also a flag; see 'neardup config example'):
`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if *emit != "" {
		overrides.Add("pipeline.emit", *emit)
	}
	cfg, err := loadConfig(*path, *ixURL, overrides)
	if err != nil {
		return nil, err
	}
	format, err := consumer.ParseFormat(*inFormat)
	if err != nil {
		return nil, usagef("%w", err)
	}
	warcIDs, err := consumer.ParseWARCID(*warcID)
	if err != nil {
		return nil, usagef("%w", err)
	}
	paths := fs.Args()
	if len(paths) == 0 {
		paths = []string{"-"}
	}
	if err := checkPaths(paths); err != nil {
		return nil, err
	}
	if format == consumer.FormatWARC {
		if err := checkWARC(paths); err != nil {
			return nil, err
		}
	}
	return &scanArgs{cfg: cfg, paths: paths, format: format, warcIDs: warcIDs, deadPath: *deadPath, quiet: *quiet}, nil
}

// runScan implements "neardup scan [PATH...]".
func runScan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	a, err := parseScan(args, stderr)
	if err != nil {
		return err
	}
	pc, store, err := openIndex(ctx, &a.cfg, index.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	pl, err := pipeline.New(pc, store)
	if err != nil {
		return err
	}

	w := &scanWriter{events: sink.NewLines(stdout), stderr: stderr}
	deadOut := stderr
	if a.deadPath != "" {
		f, err := os.Create(a.deadPath)
		if err != nil {
			return err
		}
		defer f.Close()
		deadOut = f
	}
	w.dead = sink.NewLines(deadOut)
	// On a terminal a dead letter is one line a person reads: its input
	// (up to 64 KiB, base64 for a binary file) would fill the screen.
	// Elsewhere (a pipe, a file) it is the JSON line whole.
	w.deadShort = a.deadPath == "" && isTerminal(stderr)

	src := &consumer.Files{Paths: a.paths, MaxBytes: a.cfg.Sketch.MaxBytes, Format: a.format, WARCID: a.warcIDs}
	if a.deadPath != "" {
		src.Exclude = []string{a.deadPath} // never read our own output
	}
	w.bar = progressBar(src, stderr, a.quiet)

	// The first interrupt stops reading input (ctx is cancelled by main);
	// in-flight documents are finished and flushed. A second interrupt
	// aborts.
	work, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()

	w.sum = &summary{kinds: map[string]int{}, start: time.Now()}
	read := func(sctx context.Context, items chan<- pipeline.Item) error {
		// The first interrupt (ctx) stops reading only.
		readCtx, stop := context.WithCancel(sctx)
		defer stop()
		defer context.AfterFunc(ctx, stop)()
		err := src.Run(readCtx, items)
		if err != nil && ctx.Err() != nil && sctx.Err() == nil {
			return nil // interrupted: drain what was read
		}
		return err
	}
	stopWatching := watchSecondInterrupt(ctx, abort)
	err = pl.Stream(work, read, w.write)
	stopWatching()
	if w.bar != nil {
		_ = w.bar.Finish()
	}
	if ferr := w.events.Flush(); err == nil {
		err = ferr
	}
	if ferr := w.dead.Flush(); err == nil {
		err = ferr
	}
	if !a.quiet {
		fmt.Fprintln(stderr, w.sum)
		if w.deadShort && w.sum.dead > 0 {
			fmt.Fprintln(stderr, "neardup scan: dead letters shown abridged; --dead-letter FILE writes each whole, with its input")
		}
		if src.WARC.Records > 0 {
			fmt.Fprintln(stderr, "neardup scan:", src.WARC)
		}
	}
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errInterrupted
	}
	return nil
}

// progressBar returns a bar over the bytes src will read, shown on a
// terminal only; nil on anything else, with quiet, or when src cannot
// tell its size.
func progressBar(src *consumer.Files, stderr io.Writer, quiet bool) *progressbar.ProgressBar {
	f, ok := stderr.(*os.File)
	if !ok || quiet || !isTerminal(f) {
		return nil
	}
	total, err := src.Total()
	if err != nil || total <= 0 {
		return nil
	}
	bar := progressbar.NewOptions64(total, progressbar.OptionSetWriter(stderr), progressbar.OptionShowBytes(true),
		progressbar.OptionSetDescription("scanning"), progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
	src.Progress = func(n int64) { _ = bar.Set64(n) }
	return bar
}

// scanWriter writes a scan's outputs in input order: events (and their
// corrections) as JSON lines, dead letters whole to their file or one
// line each to a terminal; it counts them for the summary.
type scanWriter struct {
	events, dead *sink.Lines
	stderr       io.Writer
	deadShort    bool // dead letters abridged, to the terminal
	bar          *progressbar.ProgressBar
	sum          *summary
}

func (w *scanWriter) write(o pipeline.Output) error {
	if o.Dead == nil {
		w.sum.docs++
	}
	switch {
	case o.Dead != nil && w.deadShort:
		w.sum.dead++
		if w.bar != nil {
			_ = w.bar.Clear()
		}
		fmt.Fprintln(w.stderr, deadLine(o.Dead))
	case o.Dead != nil:
		w.sum.dead++
		if err := w.dead.Write(o.Dead); err != nil {
			return err
		}
	case o.Event != nil:
		w.sum.kinds[o.Event.Kind]++
		if len(o.Event.Sentences) > 0 {
			w.sum.sentences++
		}
		if err := w.events.Write(o.Event); err != nil {
			return err
		}
	}
	for _, c := range o.Corrections {
		if err := w.events.Write(c); err != nil {
			return err
		}
	}
	for _, r := range o.Revisions {
		if err := w.events.Write(r); err != nil {
			return err
		}
	}
	return nil
}

// watchSecondInterrupt aborts the scan at a second interrupt: once ctx
// ends (the first), it listens for os.Interrupt and calls abort. The
// returned stop ends the watcher and waits for it; the caller calls it
// when the scan ends.
func watchSecondInterrupt(ctx context.Context, abort func()) (stop func()) {
	finished := make(chan struct{})
	watcher := make(chan struct{})
	go func() { // owned: stop ends it and waits
		defer close(watcher)
		select {
		case <-ctx.Done():
		case <-finished:
			return
		}
		// Listen only now, so the first interrupt is not counted twice.
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt)
		defer signal.Stop(sigs)
		select {
		case <-sigs: // the second interrupt
			abort()
		case <-finished:
		}
	}()
	return func() {
		close(finished)
		<-watcher
	}
}

// checkPaths fails with a usage error on a PATH that does not exist ("-"
// is standard input), before anything is read or opened.
func checkPaths(paths []string) error {
	for _, p := range paths {
		if p == "-" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			return usagef("%w", err)
		}
	}
	return nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// deadLine is a dead letter as one line for a person: where the input
// was, why it was rejected, without the input itself.
func deadLine(d *pipeline.DeadLetter) string {
	where := d.Source.File
	switch {
	case d.Source.Line > 0:
		where = fmt.Sprintf("%s:%d", where, d.Source.Line)
	case d.Source.Offset != nil:
		where = fmt.Sprintf("%s at byte %d", where, *d.Source.Offset)
	}
	if where == "" {
		where = "-"
	}
	if d.ID != "" && d.ID != d.Source.File {
		where += fmt.Sprintf(" (id %.80q)", d.ID)
	}
	return fmt.Sprintf("dead letter: %s: %s: %s", where, d.Reason, d.Error)
}

// checkWARC fails with a usage error on a file named with --input-format
// warc that does not start with a WARC record ("WARC/") or a gzip member,
// before anything is read: a text file read as WARC would be one
// malformed_warc dead letter and two summaries that disagree. Directories
// and standard input are read as they come.
func checkWARC(paths []string) error {
	for _, p := range paths {
		if p == "-" {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			return usagef("%w", err)
		}
		head := make([]byte, 16)
		n, _ := io.ReadFull(f, head)
		fi, _ := f.Stat()
		f.Close()
		head = head[:n]
		if fi != nil && fi.IsDir() || bytes.HasPrefix(head, []byte("WARC/")) || bytes.HasPrefix(head, []byte{0x1f, 0x8b}) {
			continue
		}
		return usagef("%s is not a WARC file: it starts with %q, not a WARC record (\"WARC/1.x\") or a gzip member; without --input-format warc it is read by its name (.warc, .warc.gz, .jsonl, else text)", p, head)
	}
	return nil
}
