package verify_test

import (
	"os"
	"testing"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/internal/dataset"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// alignDoc is a document prepared for passage alignment the way the
// pipeline will: shingle hashes in order, winnowing anchors, 4-bit
// fingerprints, token offsets.
type alignDoc struct {
	side       verify.AlignSide
	start, end []uint32 // byte offsets of tokens (the PAN texts are ASCII)
}

func prepare(t *testing.T, path string, w int) alignDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := sketch.NewNormalizer(sketch.Normalization{FoldQuotes: true})
	var tok sketch.Tokens
	n.Tokenize(b, &tok)
	hs := sketch.AppendShingles(nil, tok.Hash, 5)
	anchors := sketch.Winnow(nil, hs, w)
	d := alignDoc{}
	for _, h := range hs {
		d.side.Fp = append(d.side.Fp, byte(h>>61))
	}
	for _, a := range anchors {
		d.side.Anchors = append(d.side.Anchors, verify.AlignAnchor{Hash: uint32(a.Hash >> 32), Pos: a.Pos})
	}
	for i := range tok.Len() {
		d.start = append(d.start, tok.Off[i])
		d.end = append(d.end, tok.Off[i]+uint32(len(tok.Word(i))))
	}
	return d
}

// On PAN13, passages from anchors and 4-bit fingerprints reach the PAN
// measures of exact token alignment.
func TestAlignPAN13(t *testing.T) {
	set, err := eval.LoadPAN13(dataset.Dir(t, "pan13-text-alignment-no-obfuscation"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pw := range []int{25, 30, 40} {
		w := sketch.WinnowWindow(pw, 5)
		var al verify.PassageAligner
		var dets []eval.Case
		linked := 0
		docs := map[string]alignDoc{}
		get := func(p string) alignDoc {
			if d, ok := docs[p]; ok {
				return d
			}
			d := prepare(t, p, w)
			docs[p] = d
			return d
		}
		for _, pr := range set.Pairs {
			a, b := get(set.SuspPath(pr[0])), get(set.SrcPath(pr[1]))
			ps, covered := al.Align(nil, a.side, b.side, verify.AlignOptions{MinMatched: 20})
			if covered > 0 {
				linked++
			}
			for _, p := range ps {
				// Shingle positions to tokens: shingle i spans tokens i..i+4.
				ae, be := min(p.A1+3, len(a.end)-1), min(p.B1+3, len(b.end)-1)
				dets = append(dets, eval.Case{Susp: pr[0], Src: pr[1],
					SuspOff: int(a.start[p.A0]), SuspLn: int(a.end[ae] - a.start[p.A0]),
					SrcOff: int(b.start[p.B0]), SrcLn: int(b.end[be] - b.start[p.B0])})
			}
		}
		s := eval.PAN(set.Cases, dets)
		t.Logf("passage words %d (w %d): %d/%d pairs linked; precision %.3f recall %.3f granularity %.3f plagdet %.3f (%d detections)",
			pw, w, linked, len(set.Pairs), s.Precision, s.Recall, s.Granularity, s.PlagDet, s.Detections)
		if linked < 495 || s.Precision < 0.9 || s.Recall < 0.9 {
			t.Errorf("passage words %d: below the PAN13 targets (495 pairs, precision and recall 0.9)", pw)
		}
	}
}

// On Clough & Stevenson, how much of each answer aligns with its task's
// source, by category; on Gutenberg, what aligns between different works.
func TestAlignCloughGutenberg(t *testing.T) {
	cl, err := eval.LoadClough(dataset.Dir(t, "clough-plagiarised-short-answers"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := eval.LoadGutenberg(dataset.Dir(t, "gutenberg-editions"))
	if err != nil {
		t.Fatal(err)
	}
	widths := []int{25, 30, 40, 50}
	if testing.Short() {
		// The race run (-short, make race): the extremes; make unit
		// aligns at every width (the aligner is serial).
		widths = []int{25, 50}
	}
	for _, pw := range widths {
		w := sketch.WinnowWindow(pw, 5)
		var al verify.PassageAligner
		src := map[string]alignDoc{}
		for _, a := range cl.Answers {
			if a.Category == "orig" {
				src[a.Task] = prepare(t, cl.Path(a.File), w)
			}
		}
		hist := map[string][]int{}
		linked := map[string]int{}
		const floor = 20 // matched shingles of a passage
		for _, a := range cl.Answers {
			if a.Category == "orig" {
				continue
			}
			d := prepare(t, cl.Path(a.File), w)
			_, covered := al.Align(nil, d.side, src[a.Task].side, verify.AlignOptions{MinMatched: floor})
			hist[a.Category] = append(hist[a.Category], covered*100/max(1, len(d.side.Fp)))
			if covered > 0 {
				linked[a.Category]++
			}
		}
		gd := map[string]alignDoc{}
		for _, f := range g.Texts {
			gd[f] = prepare(t, g.Path(f), w)
		}
		var cross []int
		for _, p := range g.Pairs {
			_, covered := al.Align(nil, gd[p.A].side, gd[p.B].side, verify.AlignOptions{MinMatched: floor})
			if p.SameWork != (covered > 0) {
				t.Errorf("passage words %d: %s/%s (same work %v) aligned %d shingles", pw, p.A, p.B, p.SameWork, covered)
			}
			if !p.SameWork {
				cross = append(cross, covered)
			}
		}
		if linked["cut"] < 17 || linked["non"] > 0 {
			t.Errorf("passage words %d: cut answers linked %d (want ≥ 17 of 19), non %d (want 0)", pw, linked["cut"], linked["non"])
		}
		t.Logf("passage words %d: linked %v", pw, linked)
		t.Logf("passage words %d: %% of answer aligned: cut %v light %v heavy %v non %v; gutenberg cross-work pairs: %v",
			pw, hist["cut"], hist["light"], hist["heavy"], hist["non"], cross)
	}
}
