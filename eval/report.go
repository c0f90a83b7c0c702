package eval

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/pipeline"
	"github.com/neardup/neardup/verify"
)

// Report is the evaluation of every set, as neardup eval writes it.
type Report struct {
	// Command is the command line that reproduces the report.
	Command string
	Config  config.Config
	Results []*Result
	Missing []Missing
	Elapsed time.Duration
}

// ReportFile is the name of the report in the output folder.
const ReportFile = "report.md"

// Write writes the report and its plots into dir.
func (r *Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bands, rows := r.Config.BandsRows()
	for _, res := range r.Results {
		names, figs := plots(res, bands, rows)
		for i, fig := range figs {
			if err := savePNG(filepath.Join(dir, names[i]), plotW, plotH, fig); err != nil {
				return fmt.Errorf("eval: plots of %s: %w", res.Set.Name, err)
			}
		}
	}
	f, err := os.Create(filepath.Join(dir, ReportFile))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := r.WriteMarkdown(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// num formats a share or score with three decimals, "–" when undefined.
func num(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.3f", x)
}

// Summary writes one line per set and the run time.
func (r *Report) Summary(w io.Writer) {
	for _, res := range r.Results {
		l := res.Links
		fmt.Fprintf(w, "%-36s %5d docs  links: precision %s recall %s F1 %s (%d of %d expected)",
			res.Set.Name, len(res.Events), num(l.All.Precision()), num(l.All.Recall(l.Expected)), num(l.All.F1(l.Expected)), l.All.Found, l.Expected)
		if res.PAN != nil {
			if res.PAN.Passages == 0 {
				fmt.Fprint(w, "  passages: none reported")
			} else {
				fmt.Fprintf(w, "  passages: plagdet %.3f", res.PAN.PAN.PlagDet)
			}
		}
		if res.Sites != nil {
			fmt.Fprintf(w, "  unique pages flagged: %d of %d (%.1f%%)", res.Sites.Flagged, res.Sites.Unique, 100*res.Sites.FlaggedShare())
			fmt.Fprintf(w, "  from a site's 3rd page: precision %s, flagged %s", num(res.Sites.Third.Links.Precision()), pct(res.Sites.Third.Flagged, res.Sites.Third.Unique))
		}
		if res.RefDocs != nil {
			fmt.Fprintf(w, "  first versions linked wrongly: %d of %d, hubs: %d (most wrong links to a page: %d)", res.RefDocs.FirstWrong, res.RefDocs.Texts, len(res.RefDocs.Hubs), res.RefDocs.MostWrong)
		}
		fmt.Fprintf(w, "  %v\n", res.Elapsed.Round(100*time.Millisecond))
	}
	for _, m := range r.Missing {
		fmt.Fprintf(w, "%-36s skipped: %s\n", m.Name, m.Why)
	}
	fmt.Fprintf(w, "neardup eval: %d sets in %v\n", len(r.Results), r.Elapsed.Round(100*time.Millisecond))
}

// describeCheck says what a check of the cascade does.
func describeCheck(c verify.Check) string {
	kind := c.Kind
	if kind == "" {
		switch c.Method {
		case verify.MethodExact:
			kind = verify.Exact
		case verify.MethodContainment, verify.MethodLCS, verify.MethodPassage:
			kind = verify.Partial
		default:
			kind = verify.Near
		}
	}
	var b strings.Builder
	b.WriteString(string(c.Method))
	switch c.Method {
	case verify.MethodSimHash:
		fmt.Fprintf(&b, " ≤ %g bits", c.Threshold)
	case verify.MethodJaccard, verify.MethodContainment, verify.MethodEdit:
		fmt.Fprintf(&b, " ≥ %g", c.Threshold)
	case verify.MethodLCS:
		score := c.Score
		if score == "" {
			score = verify.ScoreITS
		}
		fmt.Fprintf(&b, " %s ≥ %g", score, c.Threshold)
	case verify.MethodPassage:
		fmt.Fprintf(&b, " (passages of ≥ %d aligned shingles)", cmp.Or(c.MinShared, verify.DefaultPassageShared))
	}
	var notes []string
	if c.Asymmetric {
		notes = append(notes, "one way")
	}
	if c.MinSize > 0 {
		unit := "shingles"
		switch c.Method {
		case verify.MethodLCS:
			unit = "unique words"
		case verify.MethodEdit:
			unit = "bytes"
		}
		notes = append(notes, fmt.Sprintf("smaller ≥ %d %s", c.MinSize, unit))
	}
	if c.MaxSize > 0 {
		notes = append(notes, fmt.Sprintf("texts ≤ %d bytes", c.MaxSize))
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(notes, ", "))
	}
	fmt.Fprintf(&b, " → %s", kind)
	return b.String()
}

// WriteMarkdown writes the report (without its plots).
func (r *Report) WriteMarkdown(w io.Writer) error {
	c := r.Config
	bands, rows := c.BandsRows()
	prof, err := pipeline.VerifyProfile(&c)
	if err != nil {
		return err
	}
	var checks []string
	for _, ch := range prof.Checks {
		checks = append(checks, describeCheck(ch))
	}
	shingle := fmt.Sprintf("word %d-shingles", c.Sketch.Shingle)
	if c.Sketch.CharGram > 0 {
		shingle = fmt.Sprintf("character %d-grams", c.Sketch.CharGram)
	}
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("# neardup on labelled data\n\n")
	p("Every figure and plot here is computed by `neardup eval`; this report is reproduced by\n\n    %s\n\n", r.Command)
	p("run from the repository root with the evaluation sets in `../shared/data` (read in place, never copied). ")
	p("Nothing in it depends on the machine (the one sample drawn is seeded); the run time is printed, not written here.\n\n")
	p("Each set is streamed through the pipeline `neardup scan` runs, in the order a crawler would meet it (originals first), ")
	p("with a fresh memory index, every verdict emitted (`--emit all`) and every verified match listed (`pipeline.max_matches` 100).\n\n")
	p("**Profile %s**: %s, K = %d %s MinHash, LSH %d bands × %d rows; verification cascade (the first check that fires decides): %s.\n\n",
		c.Profile, shingle, c.Sketch.K, c.Sketch.Method, bands, rows, strings.Join(checks, "; "))
	p("## How to read it\n\n")
	p("- A **link** is one verified match of an event: the document is a duplicate (exact, near or partial) of that earlier document; `duplicate_of` names the best one.\n")
	p("- **precision** = right links / links the labels judge; **recall** = expected links reported / expected links; **F1** = their harmonic mean. Links the labels say nothing about (two PAN13 sources, two Clough answers that copied one source) are counted apart.\n")
	p("- **Per-score curves** rank every labelled pair by one score, whatever the stream reported, so they show which score separates a kind of data and where a threshold would fall: ")
	p("AUC is the probability that a positive pair scores above a negative one, AP the area under the precision–recall curve, best F1 the best any threshold reaches. ")
	p("Scores are computed as `neardup compare` computes them, on the whole documents. When a set has more than %d negative pairs, a seeded uniform sample of %d is scored, each standing for its share of the rest.\n", maxNegatives, maxNegatives)
	p("- **In-sample figures.** Some defaults were chosen on these very sets, so their figures here are in-sample, not a held-out estimate: the passage lane's 40 words (`sketch.passage_words`) and its floor of 20 aligned shingles (`verify.DefaultPassageShared`) on Clough & Stevenson, the Gutenberg editions and PAN 2013; the books profile's Jaccard 0.6 (`verify.BooksJaccard`) on the Gutenberg editions (with generated copies); and the built-in I-Match lexicon is built from five books of the Gutenberg editions set. The web profile's Jaccard 0.5 and containment 0.8, DUPNIQ's its 0.72, the sentence profile's edit similarity 0.75 and the LSH bands come from the papers and the S-curve, not from these sets; `index.common_docs` 3 was chosen on PAN 2013, Clough & Stevenson, licensecheck and the generated site sets, and the rule that tells a template from a copied text among common passages (`pipeline/common.go`) among four forms on the site sets, PAN 2013 and licensecheck, and its sources of widely copied texts and the window a known template's scraps need (no setting of their own) on the site sets, licensecheck and the copy-dense real-text corpora of `bench/corpus` (`docs/boilerplate.md`); of the sets here only the SPDX license texts chose no default.\n")
	p("- The **LSH plot** draws the probability that a pair becomes a candidate, 1 − (1 − J^%d)^%d, over the Jaccard histograms of positive and negative pairs: what the bands miss is never verified. ", rows, bands)
	p("The index may also return candidates outside the bands (equal digests); the S-curve is the bands alone.\n\n")

	p("## Summary\n\n")
	p("| set | documents | expected links | found | recall | judged links | precision | F1 | best score over all pairs (AUC, AP) |\n|---|--:|--:|--:|--:|--:|--:|--:|---|\n")
	for _, res := range r.Results {
		l := res.Links
		p("| [%s](#%s) | %d | %d | %d | %s | %d | %s | %s | %s |\n", res.Set.Name, res.Set.Short(), len(res.Events), l.Expected, l.All.Found,
			num(l.All.Recall(l.Expected)), l.All.TP+l.All.FP, num(l.All.Precision()), num(l.All.F1(l.Expected)), bestScore(res.Curves))
	}
	for _, m := range r.Missing {
		p("| %s | skipped: %s | | | | | | | |\n", m.Name, m.Why)
	}
	p("\n")
	for _, res := range r.Results {
		if res.Licenses != nil {
			p("For the license sets a wrong link is one between licenses of different families, a weak label: texts of different families can be near duplicates (AFL and OSL, BSD-style licenses); see their sections.\n\n")
			break
		}
	}
	for _, res := range r.Results {
		if res.PAN != nil {
			if res.PAN.Passages == 0 {
				p("**Passages (PAN13):** no passages reported: this build's events carry no `passages`, so there is nothing to score with the PAN 2013 measures.\n\n")
			} else {
				s := res.PAN.PAN
				p("**Passages (PAN13):** %d passages; PAN 2013 precision %.3f, recall %.3f, granularity %.3f, plagdet %.3f.\n\n", res.PAN.Passages, s.Precision, s.Recall, s.Granularity, s.PlagDet)
			}
		}
	}
	p("The synthetic sweep (copies with a share replaced and OCR-like noise, where each method breaks) is in [synth.md](synth.md), made by `neardup eval synth`.\n\n")
	for _, res := range r.Results {
		names, _ := plots(res, bands, rows)
		r.writeSet(w, res, names, bands, rows)
	}
	return nil
}

// bestScore names the scores with the highest AUC, ties broken by AP, as
// the report prints them (three decimals), among the scores computed on
// every pair (edit is computed on short texts only).
func bestScore(cs []Curve) string {
	all := 0.0
	for _, c := range cs {
		all = max(all, c.Pairs)
	}
	key := func(c Curve) string { return num(c.AUC) + " " + num(c.AP) }
	var best []Curve
	for _, c := range cs {
		switch {
		case math.IsNaN(c.AUC) || c.Pairs < all:
		case len(best) == 0 || num(c.AUC) > num(best[0].AUC) || num(c.AUC) == num(best[0].AUC) && num(c.AP) > num(best[0].AP):
			best = []Curve{c}
		case key(c) == key(best[0]):
			best = append(best, c)
		}
	}
	if len(best) == 0 {
		return "–"
	}
	var names []string
	for _, c := range best {
		names = append(names, c.Score.String())
	}
	who := strings.Join(names, ", ")
	if len(names) > 3 {
		who = fmt.Sprintf("%d scores tie", len(names))
	}
	return fmt.Sprintf("%s (%s, %s)", who, num(best[0].AUC), num(best[0].AP))
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func (r *Report) writeSet(w io.Writer, res *Result, plots []string, bands, rows int) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	s := res.Set
	p("<a id=\"%s\"></a>\n\n## %s\n\n", s.Short(), s.Name)
	p("**Stream:** %s. ", s.Order)
	var kinds []string
	for _, k := range []string{pipeline.KindUnique, pipeline.KindExact, pipeline.KindNear, pipeline.KindPartial, "dead"} {
		if n := res.Kinds[k]; n > 0 {
			name := k
			if k == "dead" {
				name = "dead letters"
			}
			kinds = append(kinds, fmt.Sprintf("%d %s", n, name))
		}
	}
	p("Verdicts: %s.\n\n", strings.Join(kinds, ", "))

	l := res.Links
	p("**Links** (%d expected):\n\n", l.Expected)
	p("| links | reported | right | wrong | unlabelled | precision | expected found | recall | F1 |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	row := func(name string, c Counts) {
		p("| %s | %d | %d | %d | %d | %s | %d | %s | %s |\n", name, c.TP+c.FP+c.Unlabelled, c.TP, c.FP, c.Unlabelled, num(c.Precision()), c.Found, num(c.Recall(l.Expected)), num(c.F1(l.Expected)))
	}
	row("every match", l.All)
	row("`duplicate_of` only", l.Best)
	for _, m := range sortedKeys(l.ByMethod) {
		row("method "+m, *l.ByMethod[m])
	}
	for _, k := range sortedKeys(l.ByKind) {
		row("kind "+k, *l.ByKind[k])
	}
	p("\n")
	if len(l.Wrong) > 0 {
		var ws []string
		for _, x := range l.Wrong {
			ws = append(ws, fmt.Sprintf("%s → %s", x[0], x[1]))
		}
		more := ""
		if l.All.FP > len(l.Wrong) {
			more = fmt.Sprintf(" (first %d of %d)", len(l.Wrong), l.All.FP)
		}
		p("Wrong links%s: %s.\n\n", more, strings.Join(ws, "; "))
	}

	switch {
	case res.PAN != nil:
		writePAN(p, res.PAN, len(s.pan.Pairs))
	case res.Clough != nil:
		writeClough(p, res.Clough)
	case res.Gutenberg != nil:
		writeGutenberg(p, res.Gutenberg)
	case res.Licenses != nil:
		writeLicenses(p, res.Licenses)
	case res.Sites != nil:
		writeSites(p, res.Sites)
	case res.RefDocs != nil:
		writeRefDocs(p, res.RefDocs)
	}

	if len(res.Pairs) > 0 {
		var pos, neg, negW float64
		for _, pr := range res.Pairs {
			if pr.Label == Positive {
				pos++
			} else {
				neg++
				negW += pr.Weight
			}
		}
		p("**Scores over labelled pairs:** %s: %.0f positive", s.PairsDoc, pos)
		if negW > neg+0.5 {
			p(", %.0f negative (a sample of %.0f scored)", negW, neg)
		} else {
			p(", %.0f negative", neg)
		}
		p(".\n\n| score | pairs | AUC | AP | best F1 | at | precision | recall |\n|---|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, c := range res.Curves {
			at := "–"
			switch {
			case c.BestF1 == 0 || math.IsNaN(c.BestF1):
			case c.Score == ScoreHamming:
				at = fmt.Sprintf("≤ %.0f", c.BestThreshold)
			default:
				at = "≥ " + num(c.BestThreshold)
			}
			p("| %s | %.0f | %s | %s | %s | %s | %s | %s |\n", c.Score, c.Pairs, num(c.AUC), num(c.AP), num(c.BestF1), at, num(c.BestPrecision), num(c.BestRecall))
		}
		p("\n")
		var posCand, posN, negCand, negN float64
		for _, pr := range res.Pairs {
			if pr.Label == Positive {
				posN += pr.Weight
				if pr.Candidate {
					posCand += pr.Weight
				}
			} else {
				negN += pr.Weight
				if pr.Candidate {
					negCand += pr.Weight
				}
			}
		}
		p("**LSH (%d × %d):** %.0f of %.0f positive pairs (%.1f%%) share a band and become candidates; %.0f of %.0f negative pairs (%.2f%%) do and are verified for nothing.\n\n",
			bands, rows, posCand, posN, 100*posCand/math.Max(posN, 1), negCand, negN, 100*negCand/math.Max(negN, 1))
	}
	for _, f := range plots {
		p("![%s](%s)\n\n", strings.TrimSuffix(f, ".png"), f)
	}
}

type printf func(format string, args ...any)

func writePAN(p printf, r *PANResult, pairs int) {
	p("**Passages:** ")
	if r.Passages == 0 {
		p("no passages reported. The events of this build carry no `passages`, so the PAN 2013 text-alignment measures have nothing to score (precision 0, recall 0 over %d cases).\n\n", r.PAN.Cases)
	} else {
		s := r.PAN
		p("%d passages reported on the labelled (suspicious, source) pairs, scored with the PAN 2013 text-alignment measures against the %d labelled cases (as in PAN 2013, where the detector is given the pairs to compare):\n\n", r.Passages, s.Cases)
		p("| precision | recall | granularity | plagdet | cases detected |\n|--:|--:|--:|--:|--:|\n| %.3f | %.3f | %.3f | %.3f | %d of %d |\n\n", s.Precision, s.Recall, s.Granularity, s.PlagDet, s.Detected, s.Cases)
		if r.OffPair > 0 {
			p("The stream also reported %d passages (%d characters) between suspicious documents and sources they are not labelled with; %d of them are word-for-word copies (at least 90%% of their words in order, 2·LCS/(|a|+|b|)) that this subset's labels do not list. Scored against the labels as false detections, precision would be %.3f.\n\n",
				r.OffPair, r.OffPairChars, r.OffPairCopied, s.Precision*float64(r.Passages)/float64(r.Passages+r.OffPair))
		}
	}
	p("%d of the %d labelled (suspicious, source) pairs are linked. By copied length:\n\n", r.LinkedPairs, pairs)
	p("| copied characters | cases | detected by a passage | pair linked |\n|---|--:|--:|--:|\n")
	for _, b := range r.ByLength {
		hi := fmt.Sprint(b.Hi)
		if b.Hi >= 1<<30 {
			hi = "…"
		}
		p("| %d – %s | %d | %d | %d |\n", b.Lo, hi, b.Cases, b.Detected, b.Linked)
	}
	p("\n")
}

func writeClough(p printf, r *CloughResult) {
	p("**By category** (an answer is compared with its task's source):\n\n| category | answers | linked to its source | by kind | linked to another task's source |\n|---|--:|--:|---|--:|\n")
	for _, row := range r.Rows {
		p("| %s | %d | %d | %s | %d |\n", row.Category, row.Answers, row.Linked, kindCounts(row.ByKind), row.WrongSource)
	}
	p("\nLinks between two answers that copied the same source (unlabelled): %d.\n\n", r.AnswerLinks)
}

func kindCounts(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, ", ")
}

func writeGutenberg(p printf, rows []GutenbergRow) {
	p("**Edition pairs:**\n\n| later | earlier | reported |\n|---|---|---|\n")
	cross, crossLinked := 0, 0
	for _, r := range rows {
		if !r.SameWork {
			cross++
			if r.Kind != "" {
				crossLinked++
			}
			continue
		}
		rep := "not linked"
		if r.Kind != "" {
			rep = r.Kind + " (" + r.Method + ")"
		}
		p("| %s | %s | %s |\n", r.Later, r.Earlier, rep)
	}
	p("\nPairs of different works linked: %d of %d.\n\n", crossLinked, cross)
}

func writeLicenses(p printf, r *LicenseResult) {
	p("**By class of document:**\n\n| class | documents | with an earlier copy of their text | linked to their license text | by kind | linked to another family |\n|---|--:|--:|--:|---|--:|\n")
	for _, c := range r.Classes {
		p("| %s | %d | %d | %d | %s | %d |\n", c.Class, c.Docs, c.Expected, c.Linked, kindCounts(c.ByKind), c.OtherFamily)
	}
	classDocs := map[string]string{
		classReference: "*reference* an SPDX license text",
		classFull:      fmt.Sprintf("*full* a test file that is one license (licensecheck expects it over ≥ %d%% of the file; some are short notices the license text contains)", embeddedCoverage),
		classEmbedded:  fmt.Sprintf("*embedded* a license in a longer file (expected over < %d%% of it, or two licenses)", embeddedCoverage),
		classNotice:    "*notice* a short pointer to a license (kinds *-Header, *-Short, *-Notice, or only the license's URL expected), not a copy of its text, so no link is expected",
		classNone:      "*none* a file licensecheck finds no license in (unlabelled)",
	}
	var docs []string
	for _, c := range r.Classes {
		docs = append(docs, classDocs[c.Class])
	}
	p("\nClasses: %s. A license text is an SPDX id without -only, -or-later and + (ids whose texts are identical are one); a family is an id's first part (GPL, BSD, MIT; CC-BY for Creative Commons).\n\n", strings.Join(docs, "; "))
	if len(r.Embedded) > 0 {
		found := 0
		for _, e := range r.Embedded {
			if e.Kind == string(verify.Partial) {
				found++
			}
		}
		p("**Licenses embedded in a longer file:** %d of %d found as a partial duplicate of a copy of their license text.\n\n| file | expected coverage | licenses | reported | of |\n|---|--:|---|---|---|\n", found, len(r.Embedded))
		for _, e := range r.Embedded {
			lic := strings.Join(e.Licenses, ", ")
			if len(e.Licenses) > 4 {
				lic = fmt.Sprintf("%s and %d more", strings.Join(e.Licenses[:3], ", "), len(e.Licenses)-3)
			}
			rep, to := "not linked", ""
			if e.Kind != "" {
				rep, to = e.Kind+" ("+e.Method+")", e.To
			}
			p("| %s | %.1f%% | %s | %s | %s |\n", e.File, e.Coverage, lic, rep, to)
		}
		p("\n")
	}
	if td := r.TextDup; td.Wrong > 0 {
		var kinds []string
		for _, k := range sortedKeys(td.ByKind) {
			kinds = append(kinds, fmt.Sprintf("%s %d of %d", k, td.ByKind[k][1], td.ByKind[k][0]))
		}
		p("**Wrong links that are near duplicates as texts** (word-%d-shingle Jaccard ≥ %g or containment of either text in the other ≥ %g on the whole texts, independent of the sketches): %d of %d (%s). A text-duplicate detector must link those pairs and the family labels call them wrong: a rule that kept them and dropped every other wrong link would reach precision %.3f; counting them as unlabelled, precision is %.3f (a diagnostic of the labels, not a figure of the detector).\n\n",
			textShingle, verify.DefaultJaccard, verify.DefaultContainment, td.WrongText, td.Wrong, strings.Join(kinds, ", "), td.Ceiling(), td.Unlabelled())
	}
	cs := r.Clusters
	p("**Clusters against the license families** (weak labels: texts of different families can be near duplicates, and one family holds different texts): ")
	p("%d labelled documents, %d clusters of two or more holding %d of them; purity %.3f, pair precision %.3f, pair recall %.3f; pairs of one license text in one cluster: %.3f.\n\n",
		cs.Docs, cs.Clusters, cs.InClusters, cs.Purity, cs.PairPrecision, cs.PairRecall, cs.TextRecall)
	if len(cs.Mixed) > 0 {
		p("Clusters with more than one family (%d; the largest):\n\n| cluster | families |\n|---|---|\n", len(cs.Mixed))
		for _, m := range cs.Mixed[:min(len(cs.Mixed), 8)] {
			fams := sortedKeys(m.Families)
			slices.SortStableFunc(fams, func(a, b string) int { return m.Families[b] - m.Families[a] })
			var parts []string
			for _, f := range fams[:min(len(fams), 8)] {
				parts = append(parts, fmt.Sprintf("%s %d", f, m.Families[f]))
			}
			if len(fams) > 8 {
				parts = append(parts, fmt.Sprintf("%d more", len(fams)-8))
			}
			p("| %s | %s |\n", m.Cluster, strings.Join(parts, ", "))
		}
		p("\n")
	}
}
