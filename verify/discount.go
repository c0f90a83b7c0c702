package verify

// Discount is the part of the incoming document that is not evidence: the
// text it shares with so many stored documents that the index holds its
// keys as common (a site's template, a consent notice, a licence clause).
// Verification leaves it out of both documents: resemblance and
// containment are computed over the other shingles, and passage alignment
// is not seeded from common anchors.
//
// Hashes are in the stored form of [sketch.Features] (decoded features:
// the top 32 bits of a shingle or anchor hash in the low half).
type Discount struct {
	// Shingles are the hashes of the document's shingles that lie in
	// common passages, sorted and distinct; nil when the document is
	// judged whole (its text is mostly common).
	Shingles []uint64
	// Common are the document's common passages: sorted, disjoint ranges
	// of its shingle positions. A passage aligned with a candidate is
	// evidence only when at least the passage floor of its matched
	// positions lie outside them.
	Common []Range
}

// Range is the shingle positions [Lo, Hi).
type Range struct{ Lo, Hi int }

// empty reports whether d leaves nothing out.
func (d *Discount) empty() bool {
	return d == nil || len(d.Shingles) == 0 && len(d.Common) == 0
}

// without appends to dst the values of set (sorted) that are not in drop
// (sorted): a linear merge.
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

// outside returns how many of the positions [lo, hi) lie outside the
// ranges rs (sorted, disjoint).
func outside(rs []Range, lo, hi int) int {
	n := hi - lo
	for _, r := range rs {
		if r.Hi <= lo {
			continue
		}
		if r.Lo >= hi {
			break
		}
		n -= min(r.Hi, hi) - max(r.Lo, lo)
	}
	return n
}

// dropCommon removes the passages whose matched positions outside the
// common ranges are fewer than minShared (matched positions are taken as
// spread evenly over a passage) and returns the passages kept and the
// positions they match.
func dropCommon(ps []AlignPassage, rs []Range, minShared int) ([]AlignPassage, int) {
	kept, matched := ps[:0], 0
	for _, x := range ps {
		span := x.A1 - x.A0
		if span <= 0 {
			continue
		}
		if x.Matched*outside(rs, x.A0, x.A1)/span < minShared {
			continue
		}
		kept = append(kept, x)
		matched += x.Matched
	}
	return kept, matched
}
