//go:build !nodev

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/neardup/neardup/bench/corpus"
	"github.com/neardup/neardup/bench/servebench"
	"github.com/neardup/neardup/config"
)

// runBench implements "neardup bench serve", "neardup bench corpus" and
// the helper "neardup bench broker".
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const use = "Usage: neardup bench serve [flags]   the service's throughput, CPU per document and latency\n" +
		"       neardup bench corpus [flags]  write a benchmark corpus (real text by default) and its ground truth\n" +
		"       neardup bench broker          the Kafka broker bench serve starts in a process of its own\n\n" +
		"Run 'neardup bench serve -h' or 'neardup bench corpus -h' for their flags.\n"
	if len(args) == 0 {
		fmt.Fprint(stderr, use)
		return usagef("want 'bench serve [flags]', 'bench corpus [flags]' (or 'bench broker', the Kafka broker serve starts)")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, use)
		return nil
	case "serve":
		return runBenchServe(ctx, args[1:], stdout, stderr)
	case "corpus":
		return runBenchCorpus(args[1:], stdout, stderr)
	case "broker":
		fs := flag.NewFlagSet("bench broker", flag.ContinueOnError)
		fs.SetOutput(stderr)
		partitions := fs.Int("partitions", 6, "partitions of every seeded topic")
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		return servebench.RunBroker(ctx, *partitions, fs.Args(), os.Stdin, stdout)
	}
	return usagef("unknown 'bench %s'", args[0])
}

// runBenchServe parses the flags of "neardup bench serve" and runs the
// harness (package bench/servebench).
func runBenchServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	overrides, path := config.RegisterFlags(fs)
	o := servebench.Options{Version: buildVersion()}
	fs.IntVar(&o.Docs, "docs", 20000, "documents for the throughput run")
	fs.IntVar(&o.LatencyDocs, "latency-docs", 10000, "documents for the latency run (the corpus's next ones)")
	fs.IntVar(&o.Partitions, "partitions", 6, "partitions of the input topic")
	fs.Float64Var(&o.Rate, "rate", 0.5, "the latency run produces at this fraction of the measured sustained rate")
	fs.StringVar(&o.ProfileDir, "cpuprofile", "", "write a CPU profile of each throughput run to this directory and print where the time went")
	fs.StringVar(&o.Corpus, "corpus", "real", "the documents: "+corpus.Spec)
	fs.StringVar(&o.DataDir, "data", "", "folder holding the shared data sets a real-text corpus is cut from (default: $NEARDUP_DATA, else shared/data beside the repository)")
	fs.Uint64Var(&o.Seed, "seed", 2026, "seed of the corpus")
	indexes := fs.String("indexes", "memory,local-redis", "comma-separated index kinds: memory, local-redis (a redis-server from PATH on a free port), local-cluster (three of them as a Redis Cluster) or a redis:// URL")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: neardup bench serve [flags] [--key=value ...]

Runs the service against a Kafka broker in a separate process (kfake, so
the broker's CPU is not counted), for each index kind:
  1. throughput: all documents are produced first, then one instance
     decides them; documents/s and CPU per document of neardup (getrusage)
     and redis-server (INFO cpu), Redis commands per document;
  2. scan: the same documents through scan's path (files → pipeline) on a
     fresh index of the same kind, for the CPU per document without Kafka;
  3. latency: a fresh instance while documents are produced at a fraction
     of the sustained rate; p50/p99 from each record's timestamp to its
     event's.
The documents are a real-text corpus by default (--corpus; see neardup
bench corpus). Configuration keys apply as in serve (default web profile).

Flags:
`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o.Overrides, o.ConfigPath = overrides, *path
	for _, k := range strings.Split(*indexes, ",") {
		o.Indexes = append(o.Indexes, strings.TrimSpace(k))
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	o.BrokerCommand = []string{exe, "bench", "broker"}
	if err := servebench.Run(ctx, o, stdout); err != nil {
		if errors.Is(err, servebench.ErrUsage) || errors.Is(err, corpus.ErrUnknown) {
			return usagef("%w", err)
		}
		return err
	}
	return nil
}

// runBenchCorpus implements "neardup bench corpus": it writes a corpus
// of package bench/corpus as JSON lines, and its ground truth beside it.
func runBenchCorpus(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench corpus", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "file to write the corpus to, ending in .jsonl (required); the ground truth goes beside it, .truth.jsonl")
	spec := fs.String("corpus", "real", "the corpus: "+corpus.Spec)
	docs := fs.Int("docs", 20000, "documents")
	seed := fs.Uint64("seed", 0, "seed of every choice (default: 2026; sites: the evaluation's, 22)")
	data := fs.String("data", "", "folder holding the shared data sets (default: $NEARDUP_DATA, else shared/data beside the repository)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: neardup bench corpus --out FILE.jsonl [--corpus real|real:DUP|real:DUP:CLUSTER[:WINDOW]|sites|generated] [--docs N] [--seed N]

Writes a benchmark corpus as JSON lines in the input format of neardup
scan ({"id", "text"}), in stream order, and its ground truth beside it
(FILE.truth.jsonl: {"id", "kind", "sources", "groups"} per document; two
documents are duplicates when their groups meet). The real-text corpus
cuts the Gutenberg e-texts and PAN13 source documents of the shared data
folder into ~5 KB chunks, each followed later by exact, near (word edits,
case and punctuation noise) and partial (a passage inside other text)
copies: real:0.95 (the default) makes 95% of the documents copies, in
clusters of 20; real:0.3:1000 30% in clusters of 1,000. Every benchmark
(bench serve, bench/scanbench, bench/bytesbench) takes the file with
-corpus FILE. The same flags give the same file, byte for byte.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 || !strings.HasSuffix(*out, ".jsonl") {
		return usagef("bench corpus needs --out FILE.jsonl and no arguments")
	}
	c, err := corpus.Open(*spec, *docs, *seed, *data)
	if errors.Is(err, corpus.ErrUnknown) {
		return usagef("%w", err)
	}
	if err != nil {
		return err
	}
	if err := c.Write(*out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "neardup bench corpus: %s: %v\n%s\n%s\n", c.Name, c.Stats(), *out, corpus.TruthPath(*out))
	return nil
}
