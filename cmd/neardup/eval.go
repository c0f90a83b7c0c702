package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/internal/dataset"
)

// runEval implements "neardup eval" and "neardup eval synth".
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "synth" {
		return runEvalSynth(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "sites" {
		return runEvalSites(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	overrides, path := config.RegisterFlags(fs)
	data := fs.String("data", "", "folder holding the evaluation sets (default: $NEARDUP_DATA, else shared/data beside the repository or a parent)")
	out := fs.String("out", evalDefaultOut, "folder to write "+eval.ReportFile+" and the plots into; a run with --sets, a configuration or NEARDUP_* settings must name it (the default holds the committed full report)")
	setList := fs.String("sets", "", "comma-separated sets to run, by folder or short name (default: every set present): "+strings.Join(eval.SetNames(), ", "))
	quiet := fs.Bool("quiet", false, "no progress bar")
	host := fs.String("host", "", "give every document without a url one on this host (https://HOST/ID): the set as pages of one large site")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: neardup eval [--data DIR] [--profile P] [--out DIR] [--sets a,b] [--host H] [--KEY=VALUE ...]
       neardup eval synth [--seed N] [--out DIR] [--data DIR]
       neardup eval sites --write DIR [--data DIR] [--seed N] [--pages N]

Streams each labelled evaluation set through the same pipeline as scan, in
the order a crawler would meet it, and writes %s with precision, recall
and F1 of the reported links, per-score ROC AUC and precision-recall curves,
the LSH S-curve over the pairs' Jaccard, the PAN 2013 passage measures and
license cluster purity, and for the site sets the unique pages flagged by
their rank on their site, with PNG plots, into --out. Sets that are absent
are skipped with what they need; the sets (folders of --data, or generated):

`, eval.ReportFile)
		for _, n := range eval.SetNames() {
			if eval.Generated(n) {
				fmt.Fprintf(stderr, "  %s (generated from %s)\n", n, eval.SetGutenberg)
			} else {
				fmt.Fprintf(stderr, "  %s\n", n)
			}
		}
		fmt.Fprint(stderr, "\n'neardup eval synth' runs the synthetic overlap × noise sweep instead (see 'neardup eval synth -h'); 'neardup eval sites' writes the generated site corpus as JSON lines.\n\nFlags (any configuration key is also a flag; see 'neardup config example'):\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	if err := guardDefaultOut(fs, "eval", args, "data", "quiet"); err != nil {
		return err
	}
	cfg, err := config.Load(*path, os.Environ(), overrides)
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	names, err := evalSets(*setList)
	if err != nil {
		return err
	}
	root := *data
	if root == "" {
		if root = dataset.Root(); root == "" {
			folders := slices.DeleteFunc(eval.SetNames(), eval.Generated)
			return fmt.Errorf("no evaluation data found: pass --data DIR, set NEARDUP_DATA, or place shared/data beside the repository; it holds the folders %s", strings.Join(folders, ", "))
		}
	}
	sets, missing, err := eval.Build(root, names)
	if err != nil {
		return err
	}
	if len(sets) == 0 {
		var why []string
		for _, m := range missing {
			why = append(why, "  "+m.Name+": "+m.Why)
		}
		return fmt.Errorf("none of the evaluation sets is in %s:\n%s", root, strings.Join(why, "\n"))
	}
	for _, m := range missing {
		fmt.Fprintf(stderr, "neardup eval: skipping %s: %s\n", m.Name, m.Why)
	}
	if *host != "" {
		for _, s := range sets {
			s.OnHost(*host)
		}
	}
	start := time.Now()
	rep := &eval.Report{Command: reproduce("eval", args), Config: cfg, Missing: missing}
	for _, s := range sets {
		err := withBar(ctx, stderr, *quiet, s.Name, func(progress func(done, total int)) error {
			res, err := eval.Evaluate(ctx, cfg, s, func(_ string, done, total int) { progress(done, total) })
			rep.Results = append(rep.Results, res)
			return err
		})
		if err != nil {
			return err
		}
	}
	rep.Elapsed = time.Since(start)
	if err := rep.Write(*out); err != nil {
		return err
	}
	rep.Summary(stdout)
	fmt.Fprintf(stdout, "report: %s\n", strings.TrimSuffix(*out, "/")+"/"+eval.ReportFile)
	return nil
}

// evalDefaultOut is where the committed reports live (make eval).
const evalDefaultOut = "docs/eval"

// guardDefaultOut refuses a run that would overwrite the committed report
// in evalDefaultOut with different figures: one that sets a flag other than
// --out and those in same (flags that do not change what is measured), or a
// NEARDUP_* setting that does (see reproduce), without naming --out.
func guardDefaultOut(fs *flag.FlagSet, command string, args []string, same ...string) error {
	outSet := false
	var changed []string
	fs.Visit(func(f *flag.Flag) {
		switch {
		case f.Name == "out":
			outSet = true
		case !slices.Contains(same, f.Name):
			changed = append(changed, "--"+f.Name)
		}
	})
	if outSet {
		return nil
	}
	if r := reproduce(command, nil); r != "neardup "+command {
		changed = append(changed, strings.TrimSuffix(r, " neardup "+command))
	}
	if len(changed) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s would overwrite the committed report in %s with a different run (%s); pass --out DIR, or --out %s to replace it deliberately",
		errUsage, "neardup "+command, evalDefaultOut, strings.Join(changed, " "), evalDefaultOut)
}

// evalSets turns --sets into folder names; short names (pan13, clough,
// gutenberg, licensecheck, spdx) are accepted too.
func evalSets(list string) ([]string, error) {
	all := eval.SetNames()
	if list == "" {
		return all, nil
	}
	var out []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		found := ""
		for _, name := range all {
			if n == name || (&eval.Set{Name: name}).Short() == n {
				found = name
			}
		}
		if found == "" {
			return nil, fmt.Errorf("%w: --sets: unknown set %q (want %s)", errUsage, n, strings.Join(all, ", "))
		}
		if !slices.Contains(out, found) {
			out = append(out, found)
		}
	}
	return out, nil
}

// withBar runs work with a progress callback that drives a bar on a
// terminal (nothing elsewhere, or with quiet), and turns an error caused
// by an interrupt into errInterrupted.
func withBar(ctx context.Context, stderr io.Writer, quiet bool, name string, work func(progress func(done, total int)) error) error {
	var bar *progressbar.ProgressBar
	if f, ok := stderr.(*os.File); ok && !quiet && term.IsTerminal(int(f.Fd())) {
		bar = progressbar.NewOptions(1, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription(name),
			progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
	}
	err := work(func(done, total int) {
		if bar != nil {
			bar.ChangeMax(total)
			_ = bar.Set(done)
		}
	})
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil && ctx.Err() != nil {
		return errInterrupted
	}
	return err
}

// reproduce returns the command line that reproduces a run: the
// settings taken from NEARDUP_* variables that change what is measured
// (profile, sketch.*, verify.*) in front, then the arguments as given.
func reproduce(command string, args []string) string {
	var env []string
	for _, key := range config.Keys() {
		if key != "profile" && !strings.HasPrefix(key, "sketch.") && !strings.HasPrefix(key, "verify.") {
			continue
		}
		if v, ok := os.LookupEnv(config.EnvName(key)); ok {
			env = append(env, config.EnvName(key)+"="+shellQuote(v))
		}
	}
	parts := append(env, "neardup", command)
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// runEvalSynth implements "neardup eval synth".
func runEvalSynth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval synth", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Uint64("seed", 1, "seed of the excerpts, replaced spans and noise")
	out := fs.String("out", evalDefaultOut, "folder to write "+eval.SynthReport+" and its plots into; a run with other settings than the defaults must name it (the default holds the committed report)")
	data := fs.String("data", "", "folder holding gutenberg-editions, whose books give the texts (default: $NEARDUP_DATA, else shared/data beside the repository; absent: generated text)")
	words := fs.Int("words", 600, "words of the reference and of each copy")
	reps := fs.Int("reps", 10, "copies per cell of the overlap × noise grid")
	profile := fs.String("profile", "web", "profile whose sketch the scores are computed with")
	quiet := fs.Bool("quiet", false, "no progress bar")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: neardup eval synth [--seed N] [--out DIR] [--data DIR] [--words N] [--reps N] [--profile P]

The synthetic sweep of DUPNIQ (section 5): copies of a clean reference with
a share replaced by another text and OCR-like character noise, over an
overlap × noise grid. Writes %s with each score and each detector's
detection rate (LSH candidate, each check of the web, books and sentence
profiles, and their pipelines) over the grid, into --out.

Flags:
`, eval.SynthReport)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	if err := guardDefaultOut(fs, "eval synth", args, "data", "quiet"); err != nil {
		return err
	}
	o := &config.Overrides{}
	o.Add("profile", *profile)
	cfg, err := config.Load("", nil, o)
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	sc := eval.SynthConfig{Seed: *seed, Words: *words, Reps: *reps, Score: cfg,
		Source: "generated text: Zipf-distributed pseudo-words of internal/synth for both the reference and the replacement (gutenberg-editions was not found)"}
	root := *data
	if root == "" {
		root = dataset.Root()
	}
	if root != "" {
		dir := filepath.Join(root, eval.SetGutenberg, "texts")
		ref, err1 := os.ReadFile(filepath.Join(dir, "pg1342.txt"))
		other, err2 := os.ReadFile(filepath.Join(dir, "pg2701.txt"))
		if err1 == nil && err2 == nil {
			sc.Reference, sc.Other = eval.SynthText(ref), eval.SynthText(other)
			sc.Source = "excerpts of Pride and Prejudice (gutenberg-editions pg1342.txt) as references, replaced spans from Moby-Dick (pg2701.txt): different authors and topics, DUPNIQ's first scenario"
		}
	}
	var res *eval.SynthResult
	err = withBar(ctx, stderr, *quiet, "synth", func(progress func(done, total int)) error {
		res, err = eval.RunSynth(ctx, sc, progress)
		return err
	})
	if err != nil {
		return err
	}
	if err := res.Write(*out, reproduce("eval synth", args)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "neardup eval synth: %d cells × %d copies in %v\nreport: %s\n", len(res.Cells), sc.Reps,
		res.Elapsed.Round(100*time.Millisecond), filepath.Join(*out, eval.SynthReport))
	return nil
}

// runEvalSites implements "neardup eval sites": it writes the generated
// site corpus as JSON lines that neardup scan reads.
func runEvalSites(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval sites", flag.ContinueOnError)
	fs.SetOutput(stderr)
	write := fs.String("write", "", "folder to write the corpus into (required)")
	data := fs.String("data", "", "folder holding gutenberg-editions, whose e-texts give the articles (default: $NEARDUP_DATA, else shared/data beside the repository)")
	seed := fs.Uint64("seed", 0, "seed of every choice (default: the evaluation's, 22)")
	pages := fs.Int("pages", 0, "pages to generate (default: the evaluation's, 420)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: neardup eval sites --write DIR [--data DIR] [--seed N] [--pages N]

Generates the site set of neardup eval (pages of several sites: templates
around articles cut from the Gutenberg e-texts, with planted near and
partial copies) and writes it into DIR as JSON lines in crawl order, in the
input format of neardup scan: sites.jsonl (field text: the whole page's
visible text), sites-html.jsonl (field html), sites-html-boiler.jsonl (html
with the site's boilerplate paragraph inside every article); meta holds
each page's site, rank on its site, role (original, near, partial) and
sources. %s lists the expected links: {"later", "earlier": [...], "copy"}.

Flags:
`, eval.SitesLinksFile)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 || *write == "" {
		return fmt.Errorf("%w: eval sites needs --write DIR and no arguments", errUsage)
	}
	root := *data
	if root == "" {
		if root = dataset.Root(); root == "" {
			return fmt.Errorf("no evaluation data found: pass --data DIR, set NEARDUP_DATA, or place shared/data beside the repository; the site set needs its folder %s", eval.SetGutenberg)
		}
	}
	g, err := eval.GenerateSites(filepath.Join(root, eval.SetGutenberg), eval.SitesConfig{Seed: *seed, Pages: *pages})
	if err != nil {
		return err
	}
	paths, err := g.Write(*write)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "neardup eval sites: %d pages of %d sites, %d expected links\n", len(g.Pages), len(g.Sites), len(g.Expected()))
	for _, p := range paths {
		fmt.Fprintln(stdout, p)
	}
	return nil
}
