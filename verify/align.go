package verify

import (
	"cmp"
	"slices"
)

// AlignSide is what passage alignment reads of one document: a short
// fingerprint of every shingle position (only the low FpBits bits count),
// and the document's winnowing anchors (sketch.Winnow) with their hashes
// cut to 32 bits.
type AlignSide struct {
	Fp      []byte
	Anchors []AlignAnchor
}

// AlignAnchor is an anchor: 32 bits of its shingle hash and its position.
type AlignAnchor struct {
	Hash uint32
	Pos  uint32
}

// FpBits is the width of the per-position fingerprints
// (sketch.PassageFpBits). Extending a run one position past its true end
// happens with probability 2^-FpBits; a gap is bridged only by
// AlignOptions.Resume consecutive matches, which chance produces with
// probability 2^(-FpBits·Resume) per try: 2^-12 at the defaults, as
// with four bits and three matches before features version 5 (with three
// bits and three matches, false bridges cost PAN 2013 plagdet 0.924 →
// 0.911).
const FpBits = 3

// AlignPassage is one aligned passage: shingle positions [A0, A1) of the
// first document against [B0, B1) of the second, with Matched positions
// of the first document inside aligned runs.
type AlignPassage struct {
	A0, A1, B0, B1 int
	Matched        int
}

// AlignOptions tune the alignment.
type AlignOptions struct {
	// Gap is how many positions past a mismatch the extension looks for
	// the run to resume (default 12: a changed word breaks 5 shingles).
	Gap int
	// Drift is how far the resumed run may leave the diagonal, in
	// positions (default 3: words inserted or deleted).
	Drift int
	// Resume is how many consecutive matching positions resume a run
	// after a gap (default 4: with FpBits 3, a chance resumption has
	// probability 2^-12 per try).
	Resume int
	// MinMatched drops passages with fewer matched positions (default 1).
	MinMatched int
	// Merge joins passages whose gaps on both sides are at most this many
	// positions (default 3·Gap).
	Merge int
	// MaxPassages bounds the result (default 64), keeping the longest.
	MaxPassages int
}

func (o AlignOptions) withDefaults() AlignOptions {
	if o.Gap <= 0 {
		o.Gap = 12
	}
	if o.Drift < 0 {
		o.Drift = 0
	} else if o.Drift == 0 {
		o.Drift = 3
	}
	if o.Resume <= 0 {
		o.Resume = 12 / FpBits
	}
	if o.MinMatched <= 0 {
		o.MinMatched = 1
	}
	if o.Merge <= 0 {
		o.Merge = 3 * o.Gap
	}
	if o.MaxPassages <= 0 {
		o.MaxPassages = 64
	}
	return o
}

// PassageAligner finds copied passages; it keeps scratch buffers, so it
// is not safe for concurrent use (the verifier keeps one per goroutine).
// The zero value is ready to use.
type PassageAligner struct {
	seeds  []seed
	byHash []AlignAnchor // b's anchors sorted by hash
	chains []AlignPassage
	cover  []bool
}

type seed struct{ a, b int }

const fpMask = 1<<FpBits - 1

// Align finds the passages a and b share: seeds are positions where both
// have an anchor with the same hash (winnowing guarantees one in every
// shared run of at least w shingles); each seed is extended along its
// diagonal in both directions while the fingerprints match, bridging gaps
// of up to Gap positions that drift at most Drift positions off the
// diagonal when Resume consecutive positions match again. Runs are then
// merged into passages when both sides are close, in order. Passages
// come back in order of A0, at most MaxPassages of them; the second result
// is the number of positions of a covered by some passage run.
func (al *PassageAligner) Align(dst []AlignPassage, a, b AlignSide, opt AlignOptions) ([]AlignPassage, int) {
	opt = opt.withDefaults()
	if len(a.Anchors) == 0 || len(b.Anchors) == 0 || len(a.Fp) == 0 || len(b.Fp) == 0 {
		return dst, 0
	}
	al.byHash = al.byHash[:0]
	for _, x := range b.Anchors {
		if int(x.Pos) < len(b.Fp) {
			al.byHash = append(al.byHash, x)
		}
	}
	slices.SortFunc(al.byHash, func(x, y AlignAnchor) int { return cmp.Compare(x.Hash, y.Hash) })
	al.seeds = al.seeds[:0]
	for _, x := range a.Anchors {
		if int(x.Pos) >= len(a.Fp) {
			continue
		}
		i, _ := slices.BinarySearchFunc(al.byHash, x.Hash, func(e AlignAnchor, h uint32) int { return cmp.Compare(e.Hash, h) })
		for ; i < len(al.byHash) && al.byHash[i].Hash == x.Hash; i++ {
			al.seeds = append(al.seeds, seed{int(x.Pos), int(al.byHash[i].Pos)})
		}
	}
	if len(al.seeds) == 0 {
		return dst, 0
	}
	slices.SortFunc(al.seeds, func(x, y seed) int {
		return cmp.Or(cmp.Compare(x.b-x.a, y.b-y.a), cmp.Compare(x.a, y.a))
	})
	al.chains = al.chains[:0]
	al.cover = slices.Grow(al.cover[:0], len(a.Fp))[:len(a.Fp)]
	clear(al.cover)
	match := fpPair{a.Fp, b.Fp}
	for _, s := range al.seeds {
		if al.covered(s) {
			continue
		}
		c := al.extend(s, match, opt, len(a.Fp), len(b.Fp))
		al.chains = append(al.chains, c)
	}
	// Merge chains that follow each other on both sides.
	slices.SortFunc(al.chains, func(x, y AlignPassage) int { return cmp.Or(cmp.Compare(x.A0, y.A0), cmp.Compare(x.B0, y.B0)) })
	merged := al.chains[:0]
	for _, c := range al.chains {
		if n := len(merged); n > 0 {
			p := &merged[n-1]
			if c.A0 <= p.A1+opt.Merge && c.B0 <= p.B1+opt.Merge && c.B1 >= p.B0-opt.Merge && c.B0 >= p.B0-opt.Merge {
				p.A1, p.B0, p.B1 = max(p.A1, c.A1), min(p.B0, c.B0), max(p.B1, c.B1)
				continue
			}
		}
		merged = append(merged, c)
	}
	covered := 0
	out := dst
	start := len(dst)
	for _, p := range merged {
		p.Matched = 0
		for i := p.A0; i < p.A1; i++ {
			if al.cover[i] {
				p.Matched++
			}
		}
		if p.Matched >= opt.MinMatched {
			out = append(out, p)
			covered += p.Matched
		}
	}
	if res := out[start:]; len(res) > opt.MaxPassages {
		slices.SortStableFunc(res, func(x, y AlignPassage) int { return cmp.Compare(y.Matched, x.Matched) })
		out = out[:start+opt.MaxPassages]
		slices.SortFunc(out[start:], func(x, y AlignPassage) int { return cmp.Compare(x.A0, y.A0) })
	}
	return out, covered
}

// covered reports whether seed s already lies in a run found earlier.
func (al *PassageAligner) covered(s seed) bool {
	for i := len(al.chains) - 1; i >= 0; i-- {
		c := al.chains[i]
		if s.a >= c.A0 && s.a < c.A1 && s.b >= c.B0 && s.b < c.B1 && al.cover[s.a] {
			return true
		}
	}
	return false
}

// fpPair holds the fingerprints of both sides; match is a method, not a
// closure, so that extend's inner loops inline it.
type fpPair struct{ a, b []byte }

// match reports whether position i of a and j of b have the same
// fingerprint (false outside either side).
func (f fpPair) match(i, j int) bool {
	return i >= 0 && j >= 0 && i < len(f.a) && j < len(f.b) && (f.a[i]^f.b[j])&fpMask == 0
}

// extend grows a run around seed s in both directions and marks the
// matched positions of a in al.cover.
func (al *PassageAligner) extend(s seed, fp fpPair, opt AlignOptions, na, nb int) AlignPassage {
	p := AlignPassage{A0: s.a, A1: s.a + 1, B0: s.b, B1: s.b + 1}
	al.cover[s.a] = true
	for dir := -1; dir <= 1; dir += 2 {
		i, j := s.a, s.b
		for {
			ni, nj := i+dir, j+dir
			if fp.match(ni, nj) {
				i, j = ni, nj
				al.cover[i] = true
				continue
			}
			// Look for the run to resume within Gap positions, near the
			// diagonal.
			found := false
		search:
			for g := 1; g <= opt.Gap; g++ {
				for d := 0; d <= opt.Drift; d++ {
					for _, dd := range [2]int{d, -d} {
						ri, rj := i+dir*g, j+dir*(g+dd)
						if ri < 0 || rj < 0 || ri >= na || rj >= nb {
							continue
						}
						ok := true
						for k := 0; k < opt.Resume; k++ {
							if !fp.match(ri+dir*k, rj+dir*k) {
								ok = false
								break
							}
						}
						if ok {
							for k := 0; k < opt.Resume; k++ {
								al.cover[ri+dir*k] = true
							}
							i, j = ri+dir*(opt.Resume-1), rj+dir*(opt.Resume-1)
							found = true
							break search
						}
						if d == 0 {
							break
						}
					}
				}
			}
			if !found {
				break
			}
		}
		if dir < 0 {
			p.A0, p.B0 = i, j
		} else {
			p.A1, p.B1 = i+1, j+1
		}
	}
	return p
}
