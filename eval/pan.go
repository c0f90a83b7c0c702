package eval

import (
	"cmp"
	"math"
	"slices"
)

// Case is a pair of passages: text of a suspicious (later) document copied
// from a source (earlier) document, in characters. It is a labelled
// plagiarism case or a reported detection.
type Case struct {
	Susp, Src       string // document names
	SuspOff, SuspLn int    // characters of the suspicious document
	SrcOff, SrcLn   int    // characters of the source document
}

// PANScores are the PAN text-alignment measures (Potthast, Stein,
// Barrón-Cedeño, Rosso, "An Evaluation Framework for Plagiarism
// Detection", COLING 2010; used at PAN 2013): character-level precision
// and recall macro-averaged over detections and cases, granularity (the
// detections per detected case), and plagdet = F1 / log2(1 + granularity).
// A detection counts for a case when it overlaps the case on both the
// suspicious and the source side, as in the PAN 2013 evaluation script.
type PANScores struct {
	Precision, Recall, Granularity, PlagDet float64
	Cases, Detections, Detected             int
}

type span struct{ lo, hi int }

func (c Case) sides() (span, span) {
	return span{c.SuspOff, c.SuspOff + c.SuspLn}, span{c.SrcOff, c.SrcOff + c.SrcLn}
}

func overlap(a, b span) span { return span{max(a.lo, b.lo), min(a.hi, b.hi)} }

// unionLen returns the number of characters the spans cover.
func unionLen(ss []span) int {
	slices.SortFunc(ss, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	n, end := 0, math.MinInt
	for _, s := range ss {
		if s.hi <= s.lo {
			continue
		}
		lo := max(s.lo, end)
		if s.hi > lo {
			n += s.hi - lo
			end = s.hi
		}
	}
	return n
}

// PAN scores detections against the labelled cases.
func PAN(cases, dets []Case) PANScores {
	type pair struct{ susp, src string }
	byPair := map[pair][]int{}
	for i, d := range dets {
		k := pair{d.Susp, d.Src}
		byPair[k] = append(byPair[k], i)
	}
	casesByPair := map[pair][]int{}
	for i, c := range cases {
		k := pair{c.Susp, c.Src}
		casesByPair[k] = append(casesByPair[k], i)
	}
	res := PANScores{Cases: len(cases), Detections: len(dets)}
	detectedBy := 0
	// recall: per case, the share of its characters (both sides) covered.
	for _, c := range cases {
		cs, cr := c.sides()
		var covS, covR []span
		n := 0
		for _, i := range byPair[pair{c.Susp, c.Src}] {
			ds, dr := dets[i].sides()
			os, or := overlap(cs, ds), overlap(cr, dr)
			if os.hi > os.lo && or.hi > or.lo {
				n++
				covS, covR = append(covS, os), append(covR, or)
			}
		}
		if size := c.SuspLn + c.SrcLn; size > 0 {
			res.Recall += float64(unionLen(covS)+unionLen(covR)) / float64(size)
		}
		if n > 0 {
			res.Detected++
			detectedBy += n
		}
	}
	// precision: per detection, the share of its characters in some case.
	for _, d := range dets {
		ds, dr := d.sides()
		var covS, covR []span
		for _, i := range casesByPair[pair{d.Susp, d.Src}] {
			cs, cr := cases[i].sides()
			os, or := overlap(cs, ds), overlap(cr, dr)
			if os.hi > os.lo && or.hi > or.lo {
				covS, covR = append(covS, os), append(covR, or)
			}
		}
		if size := d.SuspLn + d.SrcLn; size > 0 {
			res.Precision += float64(unionLen(covS)+unionLen(covR)) / float64(size)
		}
	}
	if len(cases) > 0 {
		res.Recall /= float64(len(cases))
	}
	if len(dets) > 0 {
		res.Precision /= float64(len(dets))
	}
	res.Granularity = 1
	if res.Detected > 0 {
		res.Granularity = float64(detectedBy) / float64(res.Detected)
	}
	if res.Precision+res.Recall > 0 {
		f := 2 * res.Precision * res.Recall / (res.Precision + res.Recall)
		res.PlagDet = f / math.Log2(1+res.Granularity)
	}
	return res
}
