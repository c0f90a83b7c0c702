package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/explain"
	"github.com/neardup/neardup/pipeline"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// verifyStored verifies b (the later document) against a under the
// configured profile on the features scan stores (see verdict), returning
// the whole verdict, passages included, and the profile.
func verifyStored(c *config.Config, b, a *sketch.Features) (verify.Verdict, verify.Profile, string, error) {
	prof, err := pipeline.VerifyProfile(c)
	if err != nil {
		return verify.Verdict{}, prof, "", err
	}
	v, err := verify.New(prof)
	if err != nil {
		return verify.Verdict{}, prof, "", err
	}
	lim := prof.Limits(pipeline.Limits(c))
	var sa, sb sketch.Features
	a.Stored(&sa, lim)
	b.Stored(&sb, lim)
	desc := fmt.Sprintf("stored shingles %d of %d and %d of %d", len(sa.Shingles), len(a.Shingles), len(sb.Shingles), len(b.Shingles))
	if lim.MaxShingles == 0 {
		desc = "no shingles stored"
	}
	return v.Verify(&sb, &sa), prof, desc, nil
}

// writeExplain writes the side-by-side HTML view of compare's result.
func writeExplain(path string, c *config.Config, names [2]string, texts [2][]byte, a, b *sketch.Features, res *comparison, why string) error {
	v, prof, stored, err := verifyStored(c, b, a)
	if err != nil {
		return err
	}
	r := &explain.Report{
		Title:   fmt.Sprintf("%s (B) compared with %s (A)", filepath.Base(names[1]), filepath.Base(names[0])),
		A:       explain.Document{Name: filepath.Base(names[0]), Text: string(texts[0]), Note: fmt.Sprintf("%d tokens, %d shingles", a.Tokens, len(a.Shingles))},
		B:       explain.Document{Name: filepath.Base(names[1]), Text: string(texts[1]), Note: fmt.Sprintf("%d tokens, %d shingles", b.Tokens, len(b.Shingles))},
		Verdict: res.Verdict,
		Method:  v.Check,
		Why:     why,
		Profile: c.Profile,
		Checks:  cascade(prof, v, a, b, stored),
		Scores:  scoreRows(c, prof, res, v),
	}
	if !res.Candidate {
		r.Method = "" // scan never compares the pair
	}
	// The verdict's passages run from B (the document verified) to A (the
	// earlier one), in shingle positions; Range maps them to code points
	// as the pipeline does for events.
	k := c.Sketch.Shingle
	for _, p := range v.Passages {
		boff, bn, okB := b.Passage.Range(p.A0, p.A1, k)
		aoff, an, okA := a.Passage.Range(p.B0, p.B1, k)
		if okA && okB {
			r.Passages = append(r.Passages, explain.Passage{AOffset: aoff, ALength: an, BOffset: boff, BLength: bn})
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := explain.Render(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// cascade describes each check of the profile as it ran on the pair: the
// first that fired decided, those before it did not fire, those after it
// did not run.
func cascade(prof verify.Profile, v verify.Verdict, a, b *sketch.Features, stored string) []explain.Check {
	s := v.Scores
	out := make([]explain.Check, 0, len(prof.Checks))
	decided := false
	for _, c := range prof.Checks {
		row := explain.Check{Method: string(c.Method), Kind: string(checkKind(c)), Threshold: threshold(c), Value: "not computed"}
		switch c.Method {
		case verify.MethodExact:
			row.Value = "texts differ"
			if a.Content == b.Content {
				row.Value = "equal texts"
			}
		case verify.MethodIMatch:
			if s.IMatchEqual != nil {
				row.Value = map[bool]string{true: "equal digests", false: "digests differ"}[*s.IMatchEqual]
			}
		case verify.MethodSimHash:
			if s.Hamming != nil {
				row.Value = fmt.Sprintf("%d bits", *s.Hamming)
			}
		case verify.MethodJaccard:
			row.Value = f4(s.Jaccard)
		case verify.MethodContainment:
			if s.ContainmentAB != nil && s.ContainmentBA != nil {
				row.Value = fmt.Sprintf("B in A %.4f, A in B %.4f", *s.ContainmentAB, *s.ContainmentBA)
			}
		case verify.MethodLCS:
			if c.Score == verify.ScoreCS {
				row.Value = "cs " + f4(s.CS)
			} else {
				row.Value = "its " + f4(s.ITS)
			}
		case verify.MethodEdit:
			row.Value = f4(s.Edit)
		case verify.MethodPassage:
			if s.Aligned != nil && s.AlignedAB != nil && s.AlignedBA != nil {
				row.Value = fmt.Sprintf("%d shingles aligned: %.4f of B, %.4f of A", *s.Aligned, *s.AlignedAB, *s.AlignedBA)
			}
		}
		if decided {
			// The cascade stopped at the deciding check; a score shown here
			// was computed afterwards (the passages of a near or partial
			// verdict are aligned once it is decided).
			if row.Value == "not computed" {
				row.Value = "not run"
			} else {
				row.Value = "not run; computed after the verdict: " + row.Value
			}
		}
		if !decided && v.Kind != verify.Distinct && v.Check == string(c.Method) && v.Kind == checkKind(c) {
			row.Fired, row.Decided, decided = true, true, true
		}
		out = append(out, row)
	}
	out = append(out, explain.Check{Method: "(features)", Kind: "", Threshold: "", Value: stored})
	return out
}

func f4(p *float64) string {
	if p == nil {
		return "not computed"
	}
	return fmt.Sprintf("%.4f", *p)
}

// checkKind is the verdict a check gives when it fires (verify.Check's
// documented defaults).
func checkKind(c verify.Check) verify.Kind {
	switch {
	case c.Kind != "":
		return c.Kind
	case c.Method == verify.MethodExact:
		return verify.Exact
	case c.Method == verify.MethodContainment || c.Method == verify.MethodLCS || c.Method == verify.MethodPassage:
		return verify.Partial
	}
	return verify.Near
}

// threshold describes when a check fires.
func threshold(c verify.Check) string {
	var t string
	switch c.Method {
	case verify.MethodExact:
		t = "equal normalized texts"
	case verify.MethodIMatch:
		t = "equal digests"
	case verify.MethodSimHash:
		t = fmt.Sprintf("≤ %g bits", c.Threshold)
	case verify.MethodPassage:
		shared := c.MinShared
		if shared == 0 {
			shared = verify.DefaultPassageShared
		}
		t = fmt.Sprintf("passages ≥ %d shingles", shared)
		if c.Threshold > 0 {
			t += fmt.Sprintf(", share ≥ %.2f", c.Threshold)
		}
	case verify.MethodLCS:
		sc := c.Score
		if sc == "" {
			sc = verify.ScoreITS
		}
		t = fmt.Sprintf("%s ≥ %.2f", sc, c.Threshold)
	default:
		t = fmt.Sprintf("≥ %.2f", c.Threshold)
	}
	if c.MinSize > 0 {
		t += fmt.Sprintf(" (min size %d)", c.MinSize)
	}
	if c.Asymmetric {
		t += " (one inside the other)"
	}
	return t
}

// scoreRows lists every score compare prints, on the whole texts, with
// the profile's threshold for it where a check reads it.
func scoreRows(c *config.Config, prof verify.Profile, res *comparison, v verify.Verdict) []explain.Score {
	first := func(m verify.Method) (verify.Check, bool) {
		for _, ch := range prof.Checks {
			if ch.Method == m {
				return ch, true
			}
		}
		return verify.Check{}, false
	}
	atLeast := func(m verify.Method, x float64) (string, *bool) {
		ch, ok := first(m)
		if !ok {
			return "", nil
		}
		pass := x >= ch.Threshold
		return fmt.Sprintf("≥ %.2f", ch.Threshold), &pass
	}
	var rows []explain.Score
	add := func(name, value, note string, thr string, pass *bool) {
		rows = append(rows, explain.Score{Name: name, Value: value, Threshold: thr, Passes: pass, Note: note})
	}
	thr, pass := atLeast(verify.MethodJaccard, res.Jaccard)
	add("jaccard", fmt.Sprintf("%.4f", res.Jaccard), "exact resemblance of the shingle sets", thr, pass)
	thr, pass = atLeast(verify.MethodContainment, res.ContainmentAB)
	add("containment A in B", fmt.Sprintf("%.4f", res.ContainmentAB), "|A∩B| / |A|", thr, pass)
	thr, pass = atLeast(verify.MethodContainment, res.ContainmentBA)
	add("containment B in A", fmt.Sprintf("%.4f", res.ContainmentBA), "|A∩B| / |B|", thr, pass)
	bands, rowsPerBand := c.BandsRows()
	add("jaccard_est (classic)", fmt.Sprintf("%.4f", res.JaccardEst), fmt.Sprintf("MinHash estimate, K=%d; LSH with %d bands of %d rows selects candidates", c.Sketch.K, bands, rowsPerBand), "", nil)
	add("jaccard_est (oph)", fmt.Sprintf("%.4f", res.JaccardEstOPH), "one-permutation MinHash estimate", "", nil)
	if ch, ok := first(verify.MethodSimHash); ok {
		p := float64(res.Hamming) <= ch.Threshold
		add("simhash hamming", fmt.Sprintf("%d", res.Hamming), "bits of 64", fmt.Sprintf("≤ %g", ch.Threshold), &p)
	} else {
		add("simhash hamming", fmt.Sprintf("%d", res.Hamming), fmt.Sprintf("bits of 64 (candidate at ≤ %d)", max(c.Sketch.SimHashK, 0)), "", nil)
	}
	imatch := res.IMatchEqual
	add("imatch equal", fmt.Sprintf("%v", res.IMatchEqual), "I-Match digests", map[bool]string{true: "equal", false: ""}[hasMethod(prof, verify.MethodIMatch)], ptrIf(hasMethod(prof, verify.MethodIMatch), imatch))
	add("unique words", fmt.Sprintf("%d / %d", res.UniqueA, res.UniqueB), "DUPNIQ sequence lengths", "", nil)
	add("lcs", fmt.Sprintf("%d", res.LCS), "longest common subsequence of unique words", "", nil)
	for _, s := range []struct {
		score verify.Score
		x     float64
	}{{verify.ScoreCS, res.LCSCS}, {verify.ScoreITS, res.LCSITS}} {
		thr, pass := "", (*bool)(nil)
		for _, ch := range prof.Checks {
			if ch.Method == verify.MethodLCS && (ch.Score == s.score || ch.Score == "" && s.score == verify.ScoreITS) {
				p := s.x >= ch.Threshold
				thr, pass = fmt.Sprintf("≥ %.2f", ch.Threshold), &p
				break
			}
		}
		add("lcs "+string(s.score), fmt.Sprintf("%.4f", s.x), "DUPNIQ-"+string(s.score), thr, pass)
	}
	if s := v.Scores; s.Aligned != nil && s.AlignedAB != nil && s.AlignedBA != nil {
		thr, pass := "", (*bool)(nil)
		if ch, ok := first(verify.MethodPassage); ok {
			thr = threshold(ch)
			p := v.Kind != verify.Distinct && len(v.Passages) > 0
			pass = &p
		}
		add("aligned passages", fmt.Sprintf("%d shingles; %.4f of B, %.4f of A", *s.Aligned, *s.AlignedAB, *s.AlignedBA), "passage alignment on the stored sections", thr, pass)
	}
	cand := "no"
	if res.Candidate {
		cand = "yes"
	}
	add("candidate", cand, "scan compares the pair only if they share an LSH band, passage anchor, SimHash block or digest", "", nil)
	return rows
}

func hasMethod(p verify.Profile, m verify.Method) bool {
	for _, c := range p.Checks {
		if c.Method == m {
			return true
		}
	}
	return false
}

func ptrIf(ok, v bool) *bool {
	if !ok {
		return nil
	}
	return &v
}
