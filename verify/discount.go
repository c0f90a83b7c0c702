package verify

import "github.com/neardup/neardup/sketch"

// Discount is the part of the incoming document that is not evidence: the
// text it shares with so many stored documents that the index holds its
// keys as common (a site's template, a consent notice, a licence clause).
// Verification leaves it out of both documents: resemblance and
// containment are computed over the other shingles, and passage alignment
// is not seeded from common anchors.
//
// Hashes are in the stored form of [sketch.Features] (decoded features:
// [sketch.StoredShingle] at the document's shingle shift).
type Discount struct {
	// Shingles are the hashes of the document's shingles that lie in
	// common passages, sorted and distinct; nil when the document is
	// judged whole (its text is mostly common). Only those its stored
	// sample keeps need be listed: the others are in no stored set it is
	// compared on.
	Shingles []uint64
	// Common are the document's common passages: sorted, disjoint ranges
	// of its shingle positions. A passage aligned with a candidate is
	// evidence only when at least the passage floor of its matched
	// positions lie outside them.
	Common []Range
	// Sources are candidates whose text others copied whole, so that
	// some of the common passages are copies of it, not a template:
	// against each, only its Source.Common are left out.
	Sources []Source
	// Templates are candidates' own templates (the template records of
	// pages of other sites): against each, its shingles are left out of
	// resemblance and containment on both sides too.
	Templates []Template
	// MinRun is the fewest matched positions outside Common (in runs of
	// at least MinEvidenceRun) that make a passage evidence, when more
	// than the passage floor (0: the floor alone): the winnowing window.
	// Text shared in pieces shorter than it has no anchor the index can
	// count, so a template's scraps (a short footer after the article
	// whose anchors depend on the article's last words, a share line)
	// are never common; on a page whose template the stream knows, they
	// are not evidence.
	MinRun int
	// Whole are candidates (Features, as handed to verification) that
	// the document's site rules found to be the same text as it (a page
	// republished or updated on its own site): nothing is left out
	// against them, the two are judged whole.
	Whole []*sketch.Features
}

// Source is a candidate (Features, as handed to verification) whose text
// is a widely copied text, and the common passages that stay out of the
// evidence against it (a subset of Discount.Common).
type Source struct {
	Features *sketch.Features
	Common   []Range
}

// Template is a candidate's own template: the values of its stored sample
// (at its shingle shift) that lie in it. The candidate is the one whose
// content digest and token count are these.
type Template struct {
	Content  sketch.ContentDigest
	Tokens   int
	Shingles []uint64
}

// TemplateOf returns the template shingles of candidate b (nil: none).
func (d *Discount) TemplateOf(b *sketch.Features) []uint64 {
	if d == nil {
		return nil
	}
	for _, t := range d.Templates {
		if t.Content == b.Content && t.Tokens == b.Tokens {
			return t.Shingles
		}
	}
	return nil
}

// commonFor returns the common passages that are not evidence against
// candidate b.
func (d *Discount) commonFor(b *sketch.Features) []Range {
	if d == nil {
		return nil
	}
	for _, s := range d.Sources {
		if s.Features == b {
			return s.Common
		}
	}
	return d.Common
}

// Range is the shingle positions [Lo, Hi).
type Range struct{ Lo, Hi int }

// empty reports whether d leaves nothing out.
func (d *Discount) empty() bool {
	return d == nil || len(d.Shingles) == 0 && len(d.Common) == 0 && len(d.Templates) == 0 && len(d.Sources) == 0 && len(d.Whole) == 0
}

// Without appends to dst the values of set (sorted) that are not in drop
// (sorted): a linear merge.
func Without(dst, set, drop []uint64) []uint64 { return without(dst, set, drop) }

func without(dst, set, drop []uint64) []uint64 {
	j := 0
	for _, x := range set {
		for j < len(drop) && drop[j] < x {
			j++
		}
		if j < len(drop) && drop[j] == x {
			continue
		}
		dst = append(dst, x)
	}
	return dst
}

// MinEvidenceRun is the shortest run of consecutive matched positions
// outside the common passages that counts towards a passage's evidence:
// shorter runs are scraps of a template (a share line, a title in a
// related-links list) that the common passages did not cover.
const MinEvidenceRun = 8

// dropCommon removes the passages with fewer than minShared matched
// positions outside the common ranges rs (sorted, disjoint), counted in
// runs of at least MinEvidenceRun consecutive matched positions (cover:
// the aligner's matched positions of the document), or fewer than minRun
// when more, and returns the passages kept and the positions they match.
func dropCommon(ps []AlignPassage, rs []Range, cover []byte, minShared, minRun int) ([]AlignPassage, int) {
	kept, matched := ps[:0], 0
	need := max(minShared, minRun)
	for _, x := range ps {
		out, run, r := 0, 0, 0
		end := min(x.A1, len(cover))
		for q := x.A0; q < end; q++ {
			for r < len(rs) && rs[r].Hi <= q {
				r++
			}
			if r < len(rs) && q >= rs[r].Lo {
				// Inside a common range: the run ends, and the range is
				// skipped whole.
				if run >= MinEvidenceRun {
					out += run
				}
				run = 0
				q = rs[r].Hi - 1
				continue
			}
			if cover[q] == 0 {
				if run >= MinEvidenceRun {
					out += run
				}
				run = 0
				continue
			}
			run++
			if run >= MinEvidenceRun && out+run >= need {
				// This run counts, whatever its length: the passage is
				// kept.
				break
			}
		}
		if run >= MinEvidenceRun {
			out += run
		}
		if out < need {
			continue
		}
		kept = append(kept, x)
		matched += x.Matched
	}
	return kept, matched
}
