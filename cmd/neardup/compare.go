package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/pipeline"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// comparison holds every score of a pair; its JSON keys are a contract.
type comparison struct {
	Jaccard       float64 `json:"jaccard"`
	ContainmentAB float64 `json:"containment_ab"`
	ContainmentBA float64 `json:"containment_ba"`
	JaccardEst    float64 `json:"jaccard_est"`
	JaccardEstOPH float64 `json:"jaccard_est_oph"`
	Hamming       int     `json:"hamming"`
	IMatchEqual   bool    `json:"imatch_equal"`
	UniqueA       int     `json:"unique_a"`
	UniqueB       int     `json:"unique_b"`
	LCS           int     `json:"lcs"`
	LCSCS         float64 `json:"lcs_cs"`
	LCSITS        float64 `json:"lcs_its"`
	// Candidate reports whether scan would compare the pair at all: they
	// share an LSH band (or a SimHash block within k, an I-Match digest, or
	// their normalized text).
	Candidate bool `json:"candidate"`
	// Checks is the profile's verdict of B against A on the stored
	// features; Verdict is scan's: Checks for a candidate, else distinct.
	Checks  string `json:"checks"`
	Verdict string `json:"verdict"`
}

// runCompare implements "neardup compare A B".
func runCompare(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print one JSON object instead of a table")
	htmlOut := fs.String("html", "", "also write a self-contained HTML page to this file: both texts side by side, copied passages highlighted and linked, the verdict and every score")
	overrides, path := config.RegisterFlags(fs, config.PipelineSections...)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: neardup compare [--json] [--html FILE] [--config FILE] [--KEY=VALUE ...] A B\n\nPrints every similarity score for files A and B (.html files are reduced to their text).\nAny configuration key is a flag, e.g. --sketch.shingle=3 --profile=books; see 'neardup config example'.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef("want two files, got %d arguments", fs.NArg())
	}
	if err := checkPaths(fs.Args()); err != nil {
		return err
	}
	cfg, err := loadConfig(*path, "", overrides)
	if err != nil {
		return err
	}
	lex, err := pipeline.Lexicon(&cfg)
	if err != nil {
		return usagef("%w", err)
	}
	var texts [2][]byte
	for i, p := range fs.Args() {
		texts[i], err = extract.ReadFile(p, cfg.Sketch.MaxBytes)
		switch {
		case errors.Is(err, extract.ErrEmpty) || errors.Is(err, extract.ErrBinary) || errors.Is(err, extract.ErrTooLarge):
			// A file that holds no text to compare is a mistake in the
			// arguments (scan makes such a document a dead letter).
			return usagef("%s: %w: compare needs text in both files", p, err)
		case err != nil:
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	sc := pipeline.SketchConfig(&cfg)
	var feats [2]map[sketch.Method]*sketch.Features
	for _, m := range []sketch.Method{sketch.Classic, sketch.OnePerm} {
		c := sc
		c.Method = m
		s, err := sketch.New(c, lex)
		if err != nil {
			return err
		}
		for i := range texts {
			var f sketch.Features
			if err := s.Sketch(texts[i], &f); err != nil {
				return fmt.Errorf("%s: %w", fs.Arg(i), err)
			}
			if f.Tokens == 0 {
				return usagef("%s: no words after normalization: compare needs text in both files", fs.Arg(i))
			}
			if feats[i] == nil {
				feats[i] = map[sketch.Method]*sketch.Features{}
			}
			feats[i][m] = &f
		}
	}
	a, b := feats[0][sc.Method], feats[1][sc.Method]
	aln := verify.LCS(a.Unique, b.Unique)
	res := comparison{
		Jaccard:       verify.Jaccard(a.Shingles, b.Shingles),
		ContainmentAB: verify.Containment(a.Shingles, b.Shingles),
		ContainmentBA: verify.Containment(b.Shingles, a.Shingles),
		JaccardEst:    feats[0][sketch.Classic].Signature.Jaccard(feats[1][sketch.Classic].Signature),
		JaccardEstOPH: feats[0][sketch.OnePerm].Signature.Jaccard(feats[1][sketch.OnePerm].Signature),
		Hamming:       sketch.Hamming(a.SimHash, b.SimHash),
		IMatchEqual:   a.HasIMatch && b.HasIMatch && a.IMatch == b.IMatch,
		UniqueA:       len(a.Unique),
		UniqueB:       len(b.Unique),
		LCS:           aln.Len,
		LCSCS:         verify.CS(aln.Len, len(a.Unique), len(b.Unique)),
		LCSITS:        verify.ITS(aln.Len, len(a.Unique), len(b.Unique)),
	}
	v, stored, err := verdict(&cfg, b, a)
	if err != nil {
		return err
	}
	res.Checks, res.Candidate = v, candidate(&cfg, a, b)
	res.Verdict = res.Checks
	if !res.Candidate {
		res.Verdict = string(verify.Distinct)
	}
	why := "a candidate: they share a bucket, a digest or the text"
	if !res.Candidate {
		why = "not a candidate: no shared LSH band, passage anchor, SimHash block or digest"
	}
	if *htmlOut != "" {
		if err := writeExplain(*htmlOut, &cfg, [2]string{fs.Arg(0), fs.Arg(1)}, texts, a, b, &res, why); err != nil {
			return fmt.Errorf("html: %w", err)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		return enc.Encode(res)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "A\t%s (%d tokens, %d shingles)\n", fs.Arg(0), a.Tokens, len(a.Shingles))
	fmt.Fprintf(tw, "B\t%s (%d tokens, %d shingles)\n", fs.Arg(1), b.Tokens, len(b.Shingles))
	shingle := fmt.Sprintf("word %d-shingles", sc.Shingle)
	if sc.CharGram > 0 {
		shingle = fmt.Sprintf("character %d-grams", sc.CharGram)
	}
	fmt.Fprintf(tw, "jaccard\t%.4f\texact resemblance of %s\n", res.Jaccard, shingle)
	fmt.Fprintf(tw, "containment A in B\t%.4f\t|A∩B| / |A|\n", res.ContainmentAB)
	fmt.Fprintf(tw, "containment B in A\t%.4f\t|A∩B| / |B|\n", res.ContainmentBA)
	fmt.Fprintf(tw, "jaccard_est (classic)\t%.4f\tMinHash estimate, K=%d\n", res.JaccardEst, sc.K)
	fmt.Fprintf(tw, "jaccard_est (oph)\t%.4f\tone-permutation estimate, K=%d\n", res.JaccardEstOPH, sc.K)
	lane := "lane off: sketch.simhash_k -1"
	if k := cfg.Sketch.SimHashK; k >= 0 {
		lane = fmt.Sprintf("a candidate at ≤ %d", k)
	}
	fmt.Fprintf(tw, "simhash hamming\t%d\tbits of 64 (%s)\n", res.Hamming, lane)
	fmt.Fprintf(tw, "imatch equal\t%v\tdigests: %s / %s\n", res.IMatchEqual, digest(a), digest(b))
	fmt.Fprintf(tw, "unique words\t%d / %d\tDUPNIQ sequence lengths\n", res.UniqueA, res.UniqueB)
	fmt.Fprintf(tw, "lcs\t%d\tof %d common unique words\n", res.LCS, aln.Common)
	fmt.Fprintf(tw, "lcs cs\t%.4f\tDUPNIQ-cs (threshold %.2f)\n", res.LCSCS, verify.DefaultCS)
	fmt.Fprintf(tw, "lcs its\t%.4f\tDUPNIQ-its (threshold %.2f)\n", res.LCSITS, verify.DefaultITS)
	fmt.Fprintf(tw, "checks\t%s\tB against A, %s profile, on the features scan stores (%s)\n", res.Checks, cfg.Profile, stored)
	fmt.Fprintf(tw, "verdict\t%s\tas scan decides it: %s\n", res.Verdict, why)
	return tw.Flush()
}

// candidate reports whether the index would hand a to b as a candidate:
// an LSH band key in common, a passage anchor in common (passage lane), a
// SimHash fingerprint within k (when the lane is on), an equal I-Match
// digest or equal content.
func candidate(c *config.Config, a, b *sketch.Features) bool {
	bands, rows := c.BandsRows()
	ka := sketch.BandKeys(nil, a.Signature, bands, rows)
	kb := sketch.BandKeys(nil, b.Signature, bands, rows)
	for i := range ka {
		if ka[i] == kb[i] {
			return true
		}
	}
	anchors := make(map[uint64]bool, len(a.Passage.Anchors))
	for _, x := range a.Passage.Anchors {
		anchors[x.Hash] = true
	}
	for _, x := range b.Passage.Anchors {
		if anchors[x.Hash] {
			return true
		}
	}
	return a.Content == b.Content ||
		(c.Sketch.SimHashK >= 0 && sketch.Hamming(a.SimHash, b.SimHash) <= c.Sketch.SimHashK) ||
		(a.HasIMatch && b.HasIMatch && a.IMatch == b.IMatch)
}

// verdict verifies b (the later document) against a (the earlier) under
// the configured profile, on the features scan stores and compares (a
// sample of the shingles of long documents, only what the profile reads),
// so that compare and scan give the same verdict for every pair. It also
// describes the stored shingle samples.
func verdict(c *config.Config, b, a *sketch.Features) (string, string, error) {
	v, _, desc, err := verifyStored(c, b, a)
	return string(v.Kind), desc, err
}

func digest(f *sketch.Features) string {
	if !f.HasIMatch {
		return "none"
	}
	return f.IMatch.String()[:12]
}
