package eval

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/verify"
)

// Result is the evaluation of one set.
type Result struct {
	Set *Set
	// Events are the stream's verdicts, one per document in stream order.
	Events []Event
	// Kinds counts the events by kind ("dead" for dead letters).
	Kinds map[string]int
	Links LinkStats
	// Pairs are the scored labelled pairs, Curves their per-score curves.
	Pairs  []PairScores
	Curves []Curve
	// Set-specific results; nil for the other sets.
	PAN       *PANResult
	Clough    *CloughResult
	Gutenberg []GutenbergRow
	Licenses  *LicenseResult
	Sites     *SitesResult
	RefDocs   *RefDocsResult
	// Elapsed is the time the set took: stream, sketches and scores.
	Elapsed time.Duration
}

// Progress is told of the work done on a set: done of total steps (a
// document streamed, a document sketched, a pair scored).
type Progress func(set string, done, total int)

// negativesSeed seeds the sample of negative pairs; it is fixed so that a
// report is reproducible.
const negativesSeed = 1

// Evaluate streams the set through the pipeline cfg describes, judges
// the reported links against the labels and scores the labelled pairs.
func Evaluate(ctx context.Context, cfg config.Config, s *Set, progress Progress) (*Result, error) {
	t0 := time.Now()
	sc, err := newScorer(&cfg)
	if err != nil {
		return nil, err
	}
	pairs := labelledPairList(s, negativesSeed)
	total, done := 2*len(s.Docs)+len(pairs), 0
	step := func() {
		done++
		if progress != nil && (done%64 == 0 || done == total) {
			progress(s.Name, done, total)
		}
	}
	events, err := Stream(ctx, cfg, s.Docs, step)
	if err != nil {
		return nil, err
	}
	r := &Result{Set: s, Events: events, Kinds: map[string]int{}}
	for _, ev := range events {
		if ev.Dead != "" {
			r.Kinds["dead"]++
		} else {
			r.Kinds[ev.Kind]++
		}
	}
	r.Links = judgeLinks(s, events)
	feats, err := sc.sketchAll(s.Docs, lockedStep(step))
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*features, len(s.Docs))
	for i, d := range s.Docs {
		byID[d.ID] = feats[i]
	}
	r.Pairs = scorePairs(pairs, byID, lockedStep(step))
	r.Curves = curves(r.Pairs)
	switch {
	case s.pan != nil:
		r.PAN = panResult(s, events)
	case s.clough != nil:
		r.Clough = cloughResult(s, events)
	case s.gutenbergSet != nil:
		r.Gutenberg = gutenbergRows(s, events)
	case s.licenses != nil:
		r.Licenses = licenseResult(s, events)
	case s.sites != nil:
		r.Sites = sitesResult(s, events, r.Links, cfg.Index.CommonDocs)
	case s.refdocs != nil:
		r.RefDocs = refDocsResult(s, events)
	}
	r.Elapsed = time.Since(t0)
	return r, nil
}

func eventsByID(events []Event) map[string]*Event {
	m := make(map[string]*Event, len(events))
	for i := range events {
		m[events[i].ID] = &events[i]
	}
	return m
}

// PANResult is what the passage lane reported on PAN13, judged with the
// PAN 2013 text-alignment measures.
type PANResult struct {
	// Passages counts the passages reported on the labelled (suspicious,
	// source) pairs; PAN scores them (zero scores when there are none).
	// PAN 2013's text-alignment task hands the detector the pairs to
	// compare and scores the detections of those pairs, so passages on
	// other pairs are left out of the measures and counted below.
	Passages int
	PAN      PANScores
	// OffPair counts the passages reported between a suspicious document
	// and a source it is not labelled with, OffPairChars their characters
	// in the suspicious documents, and OffPairCopied those whose words
	// are at least 90% the source passage's (2·LCS/(|a|+|b|) over words):
	// copies the labels of this subset do not list.
	OffPair, OffPairChars, OffPairCopied int
	// LinkedPairs counts labelled pairs linked by any match.
	LinkedPairs int
	// ByLength splits the labelled cases by copied length.
	ByLength []LengthBin
}

// LengthBin counts the labelled cases whose copied length (characters of
// the suspicious document) is in [Lo, Hi): Detected by an overlapping
// reported passage, and in a pair that was Linked at all.
type LengthBin struct {
	Lo, Hi                  int
	Cases, Detected, Linked int
}

// panLengthBins are the bin edges, in characters: PAN13's cases run from
// 256 to 8,546 characters (median 467).
var panLengthBins = []int{0, 350, 500, 750, 1000, 2000, 4000, 1 << 30}

func panResult(s *Set, events []Event) *PANResult {
	res := &PANResult{}
	isSusp := func(id string) bool { return strings.HasPrefix(id, "suspicious-") }
	var dets []Case
	labelled := map[[2]string]bool{}
	for _, pr := range s.pan.Pairs {
		labelled[pr] = true
	}
	texts := map[string][]byte{}
	for _, d := range s.Docs {
		texts[d.ID] = d.Text
	}
	linked := map[[2]string]bool{}
	for _, ev := range events {
		if !isSusp(ev.ID) {
			continue
		}
		for _, m := range ev.Matches {
			if isSusp(m.ID) {
				continue
			}
			linked[[2]string{ev.ID, m.ID}] = true
			for _, p := range m.Passages {
				c := Case{Susp: ev.ID, Src: m.ID, SuspOff: p.Offset, SuspLn: p.Length, SrcOff: p.MatchOffset, SrcLn: p.MatchLength}
				if labelled[[2]string{ev.ID, m.ID}] {
					dets = append(dets, c)
					continue
				}
				res.OffPair++
				res.OffPairChars += p.Length
				if copied(texts[ev.ID], texts[m.ID], c) {
					res.OffPairCopied++
				}
			}
		}
	}
	res.Passages = len(dets)
	res.PAN = PAN(s.pan.Cases, dets)
	for _, pr := range s.pan.Pairs {
		if linked[pr] {
			res.LinkedPairs++
		}
	}
	for i := 0; i+1 < len(panLengthBins); i++ {
		res.ByLength = append(res.ByLength, LengthBin{Lo: panLengthBins[i], Hi: panLengthBins[i+1]})
	}
	for _, c := range s.pan.Cases {
		b := &res.ByLength[0]
		for j := range res.ByLength {
			if c.SuspLn >= res.ByLength[j].Lo && c.SuspLn < res.ByLength[j].Hi {
				b = &res.ByLength[j]
			}
		}
		b.Cases++
		if linked[[2]string{c.Susp, c.Src}] {
			b.Linked++
		}
		if PAN([]Case{c}, dets).Detected > 0 {
			b.Detected++
		}
	}
	return res
}

// CloughResult is the Clough & Stevenson corpus by answer category.
type CloughResult struct {
	Rows []CloughRow
	// AnswerLinks counts links between two answers of one task that both
	// copied its source (unlabelled: they share the copied text).
	AnswerLinks int
}

// CloughRow is one answer category: how many answers were linked to
// their task's source, by kind, and how many to another task's source.
type CloughRow struct {
	Category string
	Answers  int
	// Linked counts answers linked to their task's source; ByKind splits
	// them by the kind of that link.
	Linked      int
	ByKind      map[string]int
	WrongSource int
}

var cloughCategories = []string{"cut", "light", "heavy", "non"}

func cloughResult(s *Set, events []Event) *CloughResult {
	res := &CloughResult{}
	rows := map[string]*CloughRow{}
	for _, c := range cloughCategories {
		rows[c] = &CloughRow{Category: c, ByKind: map[string]int{}}
	}
	for i := range events {
		ev := &events[i]
		a := s.clough[ev.ID]
		row := rows[a.Category]
		if row == nil {
			continue // a source
		}
		row.Answers++
		own := "orig_task" + a.Task + ".txt"
		if m := linkedTo(ev, func(id string) bool { return id == own }); m != nil {
			row.Linked++
			row.ByKind[m.Kind]++
		}
		if linkedTo(ev, func(id string) bool { return id != own && s.clough[id].Category == "orig" }) != nil {
			row.WrongSource++
		}
		for _, m := range ev.Matches {
			if s.clough[m.ID].Category != "orig" && s.Label(ev.ID, m.ID) == Unlabelled {
				res.AnswerLinks++
			}
		}
	}
	for _, c := range cloughCategories {
		res.Rows = append(res.Rows, *rows[c])
	}
	return res
}

// GutenbergRow is one pair of e-texts and what the stream reported.
type GutenbergRow struct {
	Later, Earlier string
	SameWork       bool
	// Kind and Method of the link, empty when the pair was not linked.
	Kind, Method string
}

func gutenbergRows(s *Set, events []Event) []GutenbergRow {
	byID := eventsByID(events)
	var rows []GutenbergRow
	for later, earlier := range s.Pairs {
		row := GutenbergRow{Later: later, Earlier: earlier, SameWork: s.Label(later, earlier) == Positive}
		if m := linkedTo(byID[later], func(id string) bool { return id == earlier }); m != nil {
			row.Kind, row.Method = m.Kind, m.Method
		}
		rows = append(rows, row)
	}
	slices.SortStableFunc(rows, func(a, b GutenbergRow) int {
		if a.SameWork != b.SameWork {
			if a.SameWork {
				return -1
			}
			return 1
		}
		return 0
	})
	return rows
}

// LicenseResult is a license set: links by class of document, the
// embedded licenses, and the clusters against the license families.
type LicenseResult struct {
	Classes  []ClassRow
	Embedded []EmbeddedRow
	Clusters ClusterStats
	// TextDup says how many wrong links are near duplicates as texts.
	TextDup TextDupLinks
}

// ClassRow counts the documents of one class: those linked to a document
// of their own license text, by the kind of that link (the first such
// link; for an embedded license a partial one when there is one), and
// those linked to a license of another family.
type ClassRow struct {
	Class       string
	Docs        int
	Expected    int // documents with an earlier copy of their license text
	Linked      int
	ByKind      map[string]int
	OtherFamily int
}

// EmbeddedRow is one license embedded in a longer file.
type EmbeddedRow struct {
	File     string
	Coverage float64
	Licenses []string
	// Kind and To are the link to a document of one of its license
	// texts; empty when there is none.
	Kind, Method, To string
}

// ClusterStats judge the stream's clusters (the event's cluster: the
// first document of a group of duplicates) against the license families.
type ClusterStats struct {
	// Docs counts the labelled documents (one family); Clusters the
	// clusters of two or more of them, holding InClusters documents.
	Docs, Clusters, InClusters int
	// Purity is the share of the documents in those clusters that belong
	// to their cluster's most common family.
	Purity float64
	// PairPrecision is the share of same-cluster pairs of one family;
	// PairRecall the share of same-family pairs put in one cluster;
	// TextRecall the share of pairs of one license text put in one
	// cluster.
	PairPrecision, PairRecall, TextRecall float64
	// Mixed lists the clusters with more than one family, largest first.
	Mixed []MixedCluster
}

// MixedCluster is a cluster holding more than one family.
type MixedCluster struct {
	Cluster  string
	Families map[string]int
}

func licenseResult(s *Set, events []Event) *LicenseResult {
	res := &LicenseResult{}
	byID := eventsByID(events)
	expected := map[string]bool{}
	for _, x := range s.Expected {
		expected[x.Later] = true
	}
	rows := map[string]*ClassRow{}
	for _, d := range s.Docs {
		l := s.licenses[d.ID]
		if l.class == classReference && s.Name == setLicensecheck {
			continue // the references are judged by the spdx set
		}
		row := rows[l.class]
		if row == nil {
			row = &ClassRow{Class: l.class, ByKind: map[string]int{}}
			rows[l.class] = row
		}
		row.Docs++
		if expected[d.ID] {
			row.Expected++
		}
		ev := byID[d.ID]
		if ev == nil {
			ev = &Event{ID: d.ID} // no event, no links
		}
		same := linkedTo(ev, func(id string) bool { return s.Label(d.ID, id) == Positive })
		if l.class == classEmbedded {
			// A partial link to its license, if there is one, else the first.
			for i := range ev.Matches {
				if m := &ev.Matches[i]; m.Kind == string(verify.Partial) && s.Label(d.ID, m.ID) == Positive {
					same = m
					break
				}
			}
		}
		if same != nil {
			row.Linked++
			row.ByKind[same.Kind]++
		}
		if linkedTo(ev, func(id string) bool { return s.Label(d.ID, id) == Negative }) != nil {
			row.OtherFamily++
		}
		if l.class == classEmbedded {
			e := EmbeddedRow{File: l.variant.File, Coverage: l.variant.Coverage}
			for _, m := range l.variant.Matches {
				e.Licenses = appendUnique(e.Licenses, m.Name)
			}
			if same != nil {
				e.Kind, e.Method, e.To = same.Kind, same.Method, same.ID
			}
			res.Embedded = append(res.Embedded, e)
		}
	}
	for _, c := range []string{classReference, classFull, classEmbedded, classNotice, classNone} {
		if rows[c] != nil {
			res.Classes = append(res.Classes, *rows[c])
		}
	}
	res.Clusters = clusterStats(s, events)
	res.TextDup = textDupLinks(s, events)
	return res
}

func clusterStats(s *Set, events []Event) ClusterStats {
	var st ClusterStats
	members := map[string][]string{} // cluster → labelled documents
	for _, ev := range events {
		l := s.licenses[ev.ID]
		if len(l.families) != 1 || ev.Dead != "" {
			continue
		}
		st.Docs++
		members[ev.Cluster] = append(members[ev.Cluster], ev.ID)
	}
	pairs := func(n int) int { return n * (n - 1) / 2 }
	famTotal, keyTotal := map[string]int{}, map[string]int{}
	var samePairs, sameFamPairs, sameKeyPairs, famPairs, keyPairs int
	for _, c := range slices.Sorted(maps.Keys(members)) {
		ids := members[c]
		fams, keys := map[string]int{}, map[string]int{}
		for _, id := range ids {
			l := s.licenses[id]
			fams[l.families[0]]++
			famTotal[l.families[0]]++
			for _, k := range l.keys {
				keys[k]++
				keyTotal[k]++
			}
		}
		for _, n := range fams {
			sameFamPairs += pairs(n)
		}
		for _, n := range keys {
			sameKeyPairs += pairs(n)
		}
		if len(ids) < 2 {
			continue
		}
		st.Clusters++
		st.InClusters += len(ids)
		samePairs += pairs(len(ids))
		st.Purity += float64(slices.Max(slices.Collect(maps.Values(fams))))
		if len(fams) > 1 {
			st.Mixed = append(st.Mixed, MixedCluster{Cluster: c, Families: fams})
		}
	}
	for _, n := range famTotal {
		famPairs += pairs(n)
	}
	for _, n := range keyTotal {
		keyPairs += pairs(n)
	}
	ratio := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	st.Purity = ratio(int(st.Purity), st.InClusters)
	st.PairPrecision = ratio(sameFamPairs, samePairs)
	st.PairRecall = ratio(sameFamPairs, famPairs)
	st.TextRecall = ratio(sameKeyPairs, keyPairs)
	slices.SortStableFunc(st.Mixed, func(a, b MixedCluster) int {
		return cmp.Compare(sum(b.Families), sum(a.Families))
	})
	return st
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// lockedStep makes step safe to call from several goroutines.
func lockedStep(step func()) func() {
	var mu sync.Mutex
	return func() {
		mu.Lock()
		step()
		mu.Unlock()
	}
}

// copied reports whether the passage c of susp is, word for word, at
// least 90% the passage of src: 2·LCS/(|a|+|b|) over whitespace-separated
// words, offsets in code points.
func copied(susp, src []byte, c Case) bool {
	a := strings.Fields(runeSlice(susp, c.SuspOff, c.SuspLn))
	b := strings.Fields(runeSlice(src, c.SrcOff, c.SrcLn))
	if len(a)+len(b) == 0 {
		return false
	}
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return 2*prev[len(b)] >= 9*(len(a)+len(b))/10
}

// runeSlice returns n code points of text from code point off (clamped).
func runeSlice(text []byte, off, n int) string {
	r := []rune(string(text))
	off = min(max(off, 0), len(r))
	return string(r[off:min(off+max(n, 0), len(r))])
}
