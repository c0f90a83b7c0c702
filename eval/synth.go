package eval

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/internal/synth"
	"github.com/neardup/neardup/pipeline"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// SynthConfig configures the synthetic sweep of DUPNIQ (Yalniz, Can,
// Manmatha, CIKM 2011, section 5): a clean reference text; a copy of it
// with a share replaced by text of another document, keeping its length;
// character noise added to the copy, like OCR errors. Each cell of the
// overlap × noise grid is measured on Reps copies.
type SynthConfig struct {
	// Seed draws the excerpts, the replaced spans and the noise.
	Seed uint64
	// Words is the length of the reference and of the copy (default 600,
	// a web page; short enough for the sentence profile's edit check).
	Words int
	// Overlaps are the shares of the copy that are the reference's text
	// (default 0, 0.1, …, 1).
	Overlaps []float64
	// Noise are the per-letter noise rates: each letter substituted,
	// deleted or doubled with this probability (default 0, 0.01, 0.02,
	// 0.05, 0.1, 0.2; DUPNIQ went to 0.2, about 75% of words wrong).
	Noise []float64
	// Reps is the number of copies per cell (default 10; DUPNIQ averaged
	// 20).
	Reps int
	// Reference and Other are the texts excerpts are drawn from: the
	// reference text and the replacement text. Nil: generated text
	// (internal/synth pseudo-words), described as such in the report.
	Reference, Other []byte
	// Source says where Reference and Other come from.
	Source string
	// Score is the configuration the scores are computed under.
	Score config.Config
	// Profiles are the built-in profiles whose checks and pipeline are run
	// (default web, books, sentence).
	Profiles []string
}

func (c SynthConfig) withDefaults() SynthConfig {
	if c.Words <= 0 {
		c.Words = 600
	}
	if c.Overlaps == nil {
		for i := 0; i <= 10; i++ {
			c.Overlaps = append(c.Overlaps, float64(i)/10)
		}
	}
	if c.Noise == nil {
		c.Noise = []float64{0, 0.01, 0.02, 0.05, 0.1, 0.2}
	}
	if c.Reps <= 0 {
		c.Reps = 10
	}
	if c.Profiles == nil {
		c.Profiles = []string{"web", "books", "sentence"}
	}
	return c
}

// Detector is one way a copy can be found: the LSH bands of a profile,
// one check of its cascade on its own, or its whole pipeline.
type Detector struct {
	Profile string
	// Name is "candidate" (the copy shares an LSH band with the
	// reference), a check ("jaccard ≥ 0.5"), or "pipeline" (streamed after
	// the reference, the copy is reported as its duplicate).
	Name string
	// Check describes a check in full, with its size limits.
	Check string
}

func (d Detector) String() string { return d.Profile + ": " + d.Name }

// SynthCell is one cell of the grid.
type SynthCell struct {
	Overlap, Noise float64
	// Scores are the means over the copies; Edit only over copies whose
	// texts fit editMaxBytes (Has says whether any did).
	Scores [NumScores]float64
	Has    [NumScores]bool
	// Detected is, per detector (same index as SynthResult.Detectors), the
	// share of copies found.
	Detected []float64
}

// SynthResult is the sweep.
type SynthResult struct {
	Config    SynthConfig
	Detectors []Detector
	Cells     []SynthCell // overlap-major, then noise
	// WordErrors is, per noise rate, the share of the copies' words the
	// noise changed.
	WordErrors []float64
	Elapsed    time.Duration
}

// Cell returns the cell at overlap index i and noise index j.
func (r *SynthResult) Cell(i, j int) *SynthCell { return &r.Cells[i*len(r.Config.Noise)+j] }

// synthProfile is one profile's machinery.
type synthProfile struct {
	name        string
	cfg         config.Config
	sk          *sketch.Sketcher
	bands, rows int
	checks      []*verify.Verifier // one per check, alone
}

// SynthText returns the body of a Project Gutenberg e-text: what lies
// between its "*** START OF" and "*** END OF" lines when it has them.
func SynthText(b []byte) []byte {
	if i := bytes.Index(b, []byte("*** START OF")); i >= 0 {
		if nl := bytes.IndexByte(b[i:], '\n'); nl >= 0 {
			b = b[i+nl+1:]
		}
	}
	if i := bytes.Index(b, []byte("*** END OF")); i >= 0 {
		b = b[:i]
	}
	return b
}

// newSynthProfile builds the detectors of a profile for the sweep: its
// candidate stage, each of its checks alone, and the whole pipeline.
func newSynthProfile(name string) (*synthProfile, []Detector, error) {
	var dets []Detector
	o := &config.Overrides{}
	o.Add("profile", name)
	cfg, err := config.Load("", nil, o)
	if err != nil {
		return nil, nil, err
	}
	lex, err := pipeline.Lexicon(&cfg)
	if err != nil {
		return nil, nil, err
	}
	sk, err := sketch.New(pipeline.SketchConfig(&cfg), lex)
	if err != nil {
		return nil, nil, err
	}
	vp, err := pipeline.VerifyProfile(&cfg)
	if err != nil {
		return nil, nil, err
	}
	sp := &synthProfile{name: name, sk: sk}
	if sp.cfg, err = StreamConfig(cfg); err != nil { // resolves the bands once
		return nil, nil, err
	}
	sp.bands, sp.rows = sp.cfg.BandsRows()
	dets = append(dets, Detector{Profile: name, Name: "candidate"})
	for _, c := range vp.Checks {
		v, err := verify.New(verify.Profile{Name: name, Checks: []verify.Check{c}})
		if err != nil {
			return nil, nil, err
		}
		sp.checks = append(sp.checks, v)
		full := describeCheck(c)
		short, _, _ := strings.Cut(full, " (")
		short, _, _ = strings.Cut(short, " → ")
		dets = append(dets, Detector{Profile: name, Name: short, Check: full})
	}
	dets = append(dets, Detector{Profile: name, Name: "pipeline"})
	return sp, dets, nil
}

// RunSynth runs the sweep.
func RunSynth(ctx context.Context, sc SynthConfig, progress func(done, total int)) (*SynthResult, error) {
	t0 := time.Now()
	sc = sc.withDefaults()
	res := &SynthResult{Config: sc}
	scorer, err := newScorer(&sc.Score)
	if err != nil {
		return nil, err
	}
	scoreSk, err := sketch.New(scorer.sk, scorer.lex)
	if err != nil {
		return nil, err
	}
	var profs []*synthProfile
	for _, name := range sc.Profiles {
		sp, dets, err := newSynthProfile(name)
		if err != nil {
			return nil, err
		}
		res.Detectors = append(res.Detectors, dets...)
		profs = append(profs, sp)
	}

	gen := synth.NewGenerator(sc.Seed, 50000)
	r := rand.New(rand.NewPCG(sc.Seed, 0x5e1f))
	refWords, otherWords := strings.Fields(string(sc.Reference)), strings.Fields(string(sc.Other))
	excerpt := func(words []string, n int) []string {
		if len(words) < n {
			return gen.Words(n)
		}
		at := r.IntN(len(words) - n + 1)
		return words[at : at+n]
	}
	total, done := len(sc.Overlaps)*len(sc.Noise)*sc.Reps, 0
	var s pairScratch
	wrong, words := make([]float64, len(sc.Noise)), make([]float64, len(sc.Noise))
	for _, ov := range sc.Overlaps {
		for j, nz := range sc.Noise {
			cell := SynthCell{Overlap: ov, Noise: nz, Detected: make([]float64, len(res.Detectors))}
			var edits int
			for range sc.Reps {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				ref := excerpt(refWords, sc.Words)
				cp := append([]string(nil), ref...)
				if n := int(float64(sc.Words)*(1-ov) + 0.5); n > 0 {
					at := r.IntN(sc.Words - n + 1)
					copy(cp[at:at+n], excerpt(otherWords, n))
				}
				refText := strings.Join(ref, " ")
				// The normalizer lower-cases every text, so lower-casing the
				// copy changes no score; it lets the noise touch every letter.
				clean := strings.ToLower(strings.Join(cp, " "))
				cpText := gen.Noise(clean, nz)
				// Noise leaves spaces alone, so the words stay aligned
				// unless one lost all its letters.
				if cw, nw := strings.Fields(clean), strings.Fields(cpText); len(cw) == len(nw) {
					for k := range cw {
						if cw[k] != nw[k] {
							wrong[j]++
						}
					}
					words[j] += float64(len(cw))
				}

				var a, b features
				if err := scoreSk.Sketch([]byte(cpText), &a.f); err != nil {
					return nil, err
				}
				if err := scoreSk.Sketch([]byte(refText), &b.f); err != nil {
					return nil, err
				}
				a.keys = sketch.BandKeys(nil, a.f.Signature, scorer.bands, scorer.rows)
				b.keys = sketch.BandKeys(nil, b.f.Signature, scorer.bands, scorer.rows)
				var ps PairScores
				ps.score(&a, &b, &s)
				for k := range NumScores {
					if ps.Has[k] {
						cell.Scores[k] += ps.Values[k]
						cell.Has[k] = true
					}
				}
				if ps.Has[ScoreEdit] {
					edits++
				}
				d := 0
				for _, sp := range profs {
					found, err := sp.detect(ctx, []byte(refText), []byte(cpText))
					if err != nil {
						return nil, err
					}
					for _, f := range found {
						if f {
							cell.Detected[d]++
						}
						d++
					}
				}
				done++
				if progress != nil {
					progress(done, total)
				}
			}
			for k := range NumScores {
				n := sc.Reps
				if k == ScoreEdit {
					n = edits
				}
				if n > 0 {
					cell.Scores[k] /= float64(n)
				}
			}
			for k := range cell.Detected {
				cell.Detected[k] /= float64(sc.Reps)
			}
			res.Cells = append(res.Cells, cell)
		}
	}
	for j := range sc.Noise {
		res.WordErrors = append(res.WordErrors, wrong[j]/max(words[j], 1))
	}
	res.Elapsed = time.Since(t0)
	return res, nil
}

// detect says, for each detector of the profile in order (candidate,
// each check, pipeline), whether it finds the copy.
func (sp *synthProfile) detect(ctx context.Context, ref, cp []byte) ([]bool, error) {
	var a, b sketch.Features
	if err := sp.sk.Sketch(cp, &a); err != nil {
		return nil, err
	}
	if err := sp.sk.Sketch(ref, &b); err != nil {
		return nil, err
	}
	ka := sketch.BandKeys(nil, a.Signature, sp.bands, sp.rows)
	kb := sketch.BandKeys(nil, b.Signature, sp.bands, sp.rows)
	cand := false
	for i := range ka {
		cand = cand || ka[i] == kb[i]
	}
	out := []bool{cand}
	for _, v := range sp.checks {
		out = append(out, v.Verify(&a, &b).Kind != verify.Distinct)
	}
	evs, err := Stream(ctx, sp.cfg, []Doc{{ID: "reference", Text: ref}, {ID: "copy", Text: cp}}, nil)
	if err != nil {
		return nil, err
	}
	return append(out, linkedTo(&evs[1], func(id string) bool { return id == "reference" }) != nil), nil
}

// SynthReport is the name of the sweep's report in the output folder.
const SynthReport = "synth.md"

// Write writes the sweep's report and plots into dir; command is the
// command line that reproduces it.
func (r *SynthResult) Write(dir, command string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := savePNG(filepath.Join(dir, "synth-scores.png"), 12*plotInch, 6.5*plotInch, r.scoresFigure()); err != nil {
		return err
	}
	if err := savePNG(filepath.Join(dir, "synth-detection.png"), 12*plotInch, 11*plotInch, r.detectionFigure()); err != nil {
		return err
	}
	var b strings.Builder
	r.writeMarkdown(&b, command)
	return os.WriteFile(filepath.Join(dir, SynthReport), []byte(b.String()), 0o644)
}

// BreakPoint returns the smallest overlap at which detector d finds at
// least half the copies at noise index j, and false when it never does.
func (r *SynthResult) BreakPoint(d, j int) (float64, bool) {
	for i := range r.Config.Overlaps {
		if r.Cell(i, j).Detected[d] >= 0.5 {
			return r.Config.Overlaps[i], true
		}
	}
	return 0, false
}

func (r *SynthResult) writeMarkdown(w *strings.Builder, command string) {
	c := r.Config
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("# Synthetic sweep: where each method breaks\n\n")
	p("Computed by\n\n    %s\n\n(seeded: the same command gives the same figures). ", command)
	p("After DUPNIQ's synthetic experiments (Yalniz, Can, Manmatha, CIKM 2011, section 5): a clean reference of %d words; ", c.Words)
	p("a copy of it with a share replaced by a span of another text of the same length, so that the copy keeps the reference's length; ")
	p("then character noise on the copy, each letter substituted, deleted or doubled with the given probability, like OCR errors. ")
	p("Each cell of the grid (overlap %s × noise %s) is measured on %d copies, each from its own reference excerpt.\n\n", fmtList(c.Overlaps, "%.0f%%", 100), fmtList(c.Noise, "%g", 1), c.Reps)
	var we []string
	for j, nz := range c.Noise {
		we = append(we, fmt.Sprintf("%g: %.0f%%", nz, 100*r.WordErrors[j]))
	}
	p("Words the noise changed, per noise rate: %s (DUPNIQ: about 75%% at 0.2).\n\n", strings.Join(we, ", "))
	p("**Texts:** %s.\n\n", c.Source)
	p("## Scores\n\n")
	p("Mean score of the copy against its reference (profile %s's sketch; edit similarity only where both normalized texts have at most %d bytes). One line per noise rate, as in DUPNIQ's figure 3.\n\n", c.Score.Profile, editMaxBytes)
	p("![scores](synth-scores.png)\n\n")
	p("## Detection\n\n")
	p("Share of the copies found, per profile: *candidate*: the copy shares an LSH band with the reference, so the index hands it to verification; ")
	p("each check of the cascade on its own (on the whole documents); *pipeline*: the reference then the copy streamed through the profile's pipeline, the copy reported as a duplicate of the reference (any kind).\n\n")
	p("![detection](synth-detection.png)\n\n")
	p("**Where each breaks:** the smallest overlap at which at least half the copies are found, per noise rate (– never, at any overlap).\n\n")
	p("| detector |")
	for _, nz := range c.Noise {
		p(" noise %g |", nz)
	}
	p("\n|---|")
	for range c.Noise {
		p("--:|")
	}
	p("\n")
	for d, det := range r.Detectors {
		if det.Check != "" {
			p("| %s: %s |", det.Profile, det.Check)
		} else {
			p("| %s |", det)
		}
		for j := range c.Noise {
			if ov, ok := r.BreakPoint(d, j); ok {
				p(" %.0f%% |", 100*ov)
			} else {
				p(" – |")
			}
		}
		p("\n")
	}
	p("\n")
}

func fmtList(xs []float64, format string, scale float64) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, fmt.Sprintf(format, x*scale))
	}
	return strings.Join(parts, ", ")
}
