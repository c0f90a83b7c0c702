// Command neardup detects near-duplicate and partial-duplicate documents.
//
// Usage:
//
//	neardup demo                    the service end to end on an embedded Kafka
//	neardup serve [--config FILE]   the streaming service (Kafka in, events out)
//	neardup scan [flags] [PATH...]  duplicates among local files
//	neardup check [flags] PATH...   decide documents against an index, storing nothing
//	neardup delete --index URL ID...  remove documents from a Redis index
//	neardup compare [flags] A B     every similarity score for two files
//	neardup lexicon build [flags] FILE...   build an I-Match idf lexicon
//	neardup eval [flags]            accuracy on labelled data: report and plots
//
// Run "neardup help" for the full list.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/internal/buildinfo"
	"github.com/neardup/neardup/internal/suggest"
)

// quietRedis drops go-redis's own log lines.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

// Exit codes, the same for every command (README "Exit codes").
const (
	exitOK    = 0
	exitError = 1 // the run failed: an index or broker unavailable, a write failed
	exitUsage = 2 // bad flags, arguments, paths or configuration (file, NEARDUP_* variables)
	exitIntr  = 130
)

// errUsage marks a command-line mistake (exit code 2): errors.Is finds it
// in every error usagef makes, whose message it does not change.
var errUsage = errors.New("bad usage")

// usageError is an error that is a command-line mistake.
type usageError struct{ err error }

func (e usageError) Error() string        { return e.err.Error() }
func (e usageError) Unwrap() error        { return e.err }
func (e usageError) Is(target error) bool { return target == errUsage }

// usagef formats an error (%w wraps, as with fmt.Errorf) that is a
// command-line mistake: exit code 2, no other prefix than the command's.
func usagef(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}

// parseFlags parses args with fs. -h prints the command's usage (fs.Usage)
// and returns flag.ErrHelp; any other mistake returns a usage error that
// names it, with the flag the user most likely meant, and points to -h
// instead of printing every flag.
func parseFlags(fs *flag.FlagSet, args []string) error {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(out)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		config.DescribeDefaults(fs)
		if usage != nil {
			usage()
		} else {
			fmt.Fprintf(out, "Usage of neardup %s:\n", fs.Name())
			fs.PrintDefaults()
		}
		return flag.ErrHelp
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		msg = "unknown flag -" + name
		if best := suggest.Closest(strings.TrimLeft(name, "-"), names); best != "" {
			msg += "; did you mean --" + best + "?"
		}
	}
	return usagef("%s (run 'neardup %s -h' for its flags)", msg, fs.Name())
}

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"demo", "run the Kafka service end to end on an embedded broker with a planted crawl", runDemo},
		{"serve", "the streaming service: Kafka consumer group in, duplicate events out", runServe},
		{"scan", "find duplicates among local files and JSON lines", runScan},
		{"check", "decide documents against an index without storing them", runCheck},
		{"delete", "remove documents from a Redis index by id (as a tombstone on the input topic does)", runDelete},
		{"compare", "print every similarity score for two files", runCompare},
		{"lexicon", "build an I-Match idf lexicon from text files", runLexicon},
		{"config", "print a commented example configuration, or check one", runConfig},
		{"bench", "measure the service end to end: throughput, CPU per document, latency (bench serve)", runBench},
		{"eval", "accuracy on the labelled sets in shared/data, with plots (eval synth: the overlap × noise sweep)", runEval},
		{"version", "print the version", runVersion},
	}
}

func main() {
	// go-redis logs failed dials through a package-level logger; the
	// command reports the error itself (serve sends them to its log).
	redis.SetLogger(quietRedis{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, args[1:], stdout, stderr)
			switch {
			case err == nil, errors.Is(err, flag.ErrHelp): // -h: the usage was printed
				return exitOK
			case errors.Is(err, errInterrupted):
				fmt.Fprintf(stderr, "neardup %s: interrupted\n", c.name)
				return exitIntr
			case errors.Is(err, errUsage):
				fmt.Fprintf(stderr, "neardup %s: %v\n", c.name, err)
				return exitUsage
			default:
				fmt.Fprintf(stderr, "neardup %s: %v\n", c.name, err)
				return exitError
			}
		}
	}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	hint := ""
	if best := suggest.Closest(args[0], names); best != "" {
		hint = fmt.Sprintf("; did you mean %q?", best)
	}
	fmt.Fprintf(stderr, "neardup: unknown command %q%s (run 'neardup help' for the commands)\n", args[0], hint)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "neardup: streaming near-duplicate and partial-duplicate detection")
	fmt.Fprintln(w, "\nUsage: neardup COMMAND [flags] [args]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'neardup COMMAND -h' for a command's flags.")
}

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: neardup version\n\nPrints the version (what events' params.version and the neardup_build_info metric say),\nthe commit it was built from and the Go toolchain.")
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	_, err := fmt.Fprintln(stdout, "neardup", buildinfo.Read(version))
	return err
}

// errWriter remembers the first error of the writes to w, for output
// written with fmt.Fprint*, whose errors are not checked one by one: a
// command whose standard output fails (a closed pipe, a full disk) must
// not exit 0.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
