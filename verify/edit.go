package verify

import (
	"math"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// DefaultEdit is the edit-similarity threshold of the sentence profile:
// normalized edit distance e ≤ 0.25, the "good pair" cut-off of the
// Wikipedia similar-sentence study (Ayhan, Bradley, Weissman), which uses
// edit distance as the final filter after MinHash banding.
const DefaultEdit = 0.75

// EditDistance returns the Levenshtein distance between a and b counted in
// Unicode code points; each byte of invalid UTF-8 is one symbol of its own.
// It runs Myers' bit-parallel algorithm in Hyyrö's multi-word form:
// O(⌈m/64⌉·n) word operations for the shorter length m and the longer n.
func EditDistance(a, b []byte) int {
	var e Editor
	return e.Distance(a, b)
}

// EditSimilarity returns 1 − EditDistance(a, b) / max(|a|, |b|), lengths
// in code points: 1 for equal texts, 0 when nothing can be kept. Two empty
// texts score 0, like two empty shingle sets in [Jaccard].
func EditSimilarity(a, b []byte) float64 {
	var e Editor
	return e.Similarity(a, b)
}

// EditSimilarityAtLeast reports whether EditSimilarity(a, b) ≥ t. It
// confines the computation to the diagonal band that an alignment of cost
// k = ⌊(1−t)·max(|a|, |b|)⌋ can reach (O(⌈k/64⌉·n) instead of
// O(⌈m/64⌉·n)) and gives up as soon as every cell of that band exceeds k.
// When ok is true, s is exact; when it is false, s is an upper bound on
// the similarity, exact if the computation ran to the end.
func EditSimilarityAtLeast(a, b []byte, t float64) (s float64, ok bool) {
	var e Editor
	return e.SimilarityAtLeast(a, b, t)
}

// Editor computes edit distances with reusable buffers; after warm-up it
// allocates nothing for ASCII texts. The zero value is ready to use. An
// Editor is not safe for concurrent use.
type Editor struct {
	ra, rb []rune
	pat    []int32 // symbol ids of the pattern (the shorter text)
	txt    []int32 // symbol ids of the text; σ for symbols not in pattern
	ascii  [utf8.RuneSelf]int32
	ids    map[rune]int32
	peq    []uint64 // peq[id·nb + blk]: bit i set where pat[64·blk+i] == id
	pv, mv []uint64
	score  []int // D at the last row of each block
}

// Distance returns the Levenshtein distance between a and b; see
// [EditDistance].
func (e *Editor) Distance(a, b []byte) int {
	d, _ := e.distance(a, b, math.MaxInt)
	return d
}

// Similarity returns the normalized edit similarity; see [EditSimilarity].
func (e *Editor) Similarity(a, b []byte) float64 {
	s, _ := e.SimilarityAtLeast(a, b, 0)
	return s
}

// SimilarityAtLeast is [EditSimilarityAtLeast].
func (e *Editor) SimilarityAtLeast(a, b []byte, t float64) (s float64, ok bool) {
	e.decode(a, b)
	l := max(len(e.ra), len(e.rb))
	if l == 0 {
		return 0, t <= 0
	}
	sim := func(d int) float64 { return 1 - float64(d)/float64(l) }
	// k is the largest distance whose similarity still reaches t.
	k := l
	if t > 0 {
		k = int((1 - t) * float64(l))
		k = max(0, min(k, l))
		for k < l && sim(k+1) >= t {
			k++
		}
		for k >= 0 && sim(k) < t {
			k--
		}
		if k < 0 {
			// Not even identical texts reach t (t > 1).
			return 1, false
		}
	}
	d, exact := e.runeDistance(k)
	return sim(d), exact && sim(d) >= t
}

// distance decodes a and b and returns their distance if it is at most
// k (ok true), or a lower bound above k (ok false).
func (e *Editor) distance(a, b []byte, k int) (int, bool) {
	e.decode(a, b)
	return e.runeDistance(k)
}

// decode fills e.ra and e.rb, sized up front (no more runes than bytes) so
// that long texts cost one allocation each, not a growth sequence.
func (e *Editor) decode(a, b []byte) {
	e.ra = decodeRunes(slices.Grow(e.ra[:0], len(a)), a)
	e.rb = decodeRunes(slices.Grow(e.rb[:0], len(b)), b)
}

func decodeRunes(dst []rune, s []byte) []rune {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, rune(c))
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			// Keep invalid bytes distinct from each other and from U+FFFD.
			r = utf8.MaxRune + 1 + rune(c)
		}
		dst = append(dst, r)
		i += size
	}
	return dst
}

// runeDistance computes the distance between e.ra and e.rb if it is at
// most k. It returns (d, true) with the exact distance d ≤ k, or
// (lb, false) with a lower bound lb > k: the length difference or k+1.
//
// Only the cells (i, j) on some alignment of cost ≤ k are computed: with
// d = i − j, such a path pays |d| to reach the cell and |d + δ| to leave
// it (δ = n − m ≥ 0), so |d| + |d + δ| ≤ k. Blocks of 64 rows are
// computed while they meet that band; a block entering from below starts
// from the upper bound D[i] = D[i−1] + 1, and the first live block takes
// a horizontal input of +1, another upper bound. Upper bounds never lower
// a cell, and every cell on an alignment of cost ≤ k depends only on band
// cells, so the result is exact when it is ≤ k (Ukkonen's cut-off in
// Hyyrö's block form).
func (e *Editor) runeDistance(k int) (int, bool) {
	pat, txt := e.ra, e.rb
	if len(pat) > len(txt) {
		pat, txt = txt, pat
	}
	m, n := len(pat), len(txt)
	delta := n - m
	if delta > k {
		return delta, false // the length difference alone costs δ
	}
	if m == 0 {
		return n, true
	}
	sigma := e.symbols(pat, txt)
	if m <= 64 {
		return e.oneBlock(m, n, k, sigma)
	}
	nb := (m + 63) / 64
	e.peq = grow(e.peq, (sigma+1)*nb)
	clear(e.peq)
	for i, id := range e.pat {
		e.peq[int(id)*nb+i>>6] |= 1 << (i & 63)
	}
	pv, mv := grow(e.pv, nb), grow(e.mv, nb)
	score := growInt(e.score, nb)
	e.pv, e.mv, e.score = pv, mv, score
	lastHigh := uint64(1) << ((m - 1) & 63)

	// Band of diagonals d = i − j; without a useful k, all of them.
	banded := k < m+n
	dlo, dhi := -n, m
	if banded {
		dlo, dhi = -(k+delta)/2, (k-delta)/2
	}
	rowBlock := func(i int) int { return min(max(i-1, 0)>>6, nb-1) }

	// Column 0: D[i][0] = i, vertical deltas all +1.
	lb := rowBlock(1 + dhi)
	for b := 0; b <= lb; b++ {
		pv[b], mv[b] = ^uint64(0), 0
		score[b] = min(64*(b+1), m)
	}
	fb := 0
	for j := 1; j <= n; j++ {
		if banded {
			fb = rowBlock(j + dlo)
			if nlb := rowBlock(j + dhi); nlb > lb {
				// Rows entering the band from below start at D[i−1] + 1.
				for b := lb + 1; b <= nlb; b++ {
					pv[b], mv[b] = ^uint64(0), 0
					score[b] = score[b-1] + min(64, m-64*b)
				}
				lb = nlb
			}
		}
		c := int(e.txt[j-1]) * nb
		eqs := e.peq[c : c+nb]
		// hinPos/hinNeg: the horizontal delta entering the block's top
		// row, +1 for row 0 (D[0][j] = j) and for the first live block.
		hinPos, hinNeg := uint64(1), uint64(0)
		for b := fb; b <= lb; b++ {
			high := uint64(1) << 63
			if b == nb-1 {
				high = lastHigh
			}
			p, q, eq := pv[b], mv[b], eqs[b]
			// Myers 1999, Fig. 7 (advance_block), written without branches.
			xv := eq | q
			eq |= hinNeg
			xh := (((eq & p) + p) ^ p) | eq
			ph := q | ^(xh | p)
			mh := p & xh
			outPos, outNeg := b2u(ph&high != 0), b2u(mh&high != 0)
			ph = ph<<1 | hinPos
			mh = mh<<1 | hinNeg
			pv[b] = mh | ^(xv | ph)
			mv[b] = ph & xv
			score[b] += int(outPos) - int(outNeg)
			hinPos, hinNeg = outPos, outNeg
		}
		if banded && j&31 == 0 && j < n && e.bandMin(fb, lb, j, j+dlo, j+dhi, m, n) > k {
			return k + 1, false
		}
	}
	if d := score[nb-1]; d <= k {
		return d, true
	}
	// Above k the computed value may overestimate; k+1 is what is known.
	return k + 1, false
}

// oneBlock is runeDistance for a pattern of at most 64 code points: the
// whole column lives in two registers, and the band needs no blocks. The
// early exit uses the last row: D[m][n] ≥ D[m][j] − (n − j).
func (e *Editor) oneBlock(m, n, k, sigma int) (int, bool) {
	e.peq = grow(e.peq, sigma+1)
	peq := e.peq
	clear(peq)
	for i, id := range e.pat {
		peq[id] |= 1 << i
	}
	high := uint64(1) << (m - 1)
	p, q, d := ^uint64(0), uint64(0), m
	for j, c := range e.txt {
		eq := peq[c]
		xv := eq | q
		xh := (((eq & p) + p) ^ p) | eq
		ph := q | ^(xh | p)
		mh := p & xh
		d += int(b2u(ph&high != 0)) - int(b2u(mh&high != 0))
		ph = ph<<1 | 1
		mh <<= 1
		p = mh | ^(xv | ph)
		q = ph & xv
		if d-(n-j-1) > k {
			return k + 1, false
		}
	}
	return d, d <= k
}

// bandMin returns min over rows i in [ilo, ihi] ∩ [0, m] of the computed
// D[i][j] + |(m−i) − (n−j)|, from the vertical deltas of blocks fb..lb.
// If the distance is at most k, the cell where its alignment leaves column
// j is computed exactly and this minimum is at most k; so a minimum above
// k proves the distance is above k.
func (e *Editor) bandMin(fb, lb, j, ilo, ihi, m, n int) int {
	best := math.MaxInt
	if ilo <= 0 {
		best = j + abs(m-(n-j)) // row 0: D[0][j] = j
	}
	ilo, ihi = max(ilo, 64*fb+1), min(ihi, m, 64*(lb+1))
	if ilo > ihi {
		return best
	}
	// D at row ilo−1, from the last row of its block and the deltas of
	// the rows after it within the block.
	b := (ilo - 1) >> 6
	last := min(64*(b+1), m)
	after := ^uint64(0) << ((ilo - 1) & 63) // rows ilo..: bits from ilo−1−64b
	if rows := last - 64*b; rows < 64 {
		after &= ^uint64(0) >> (64 - rows)
	}
	d := e.score[b] - bits.OnesCount64(e.pv[b]&after) + bits.OnesCount64(e.mv[b]&after)
	for i := ilo; i <= ihi; i++ {
		bit := uint(i-1) & 63
		blk := (i - 1) >> 6
		d += int(e.pv[blk]>>bit&1) - int(e.mv[blk]>>bit&1)
		best = min(best, d+abs((m-i)-(n-j)))
	}
	return best
}

// symbols maps the pattern's code points to dense ids 0..σ−1 and the
// text's to the same ids, or σ when the pattern lacks them, and returns σ.
func (e *Editor) symbols(pat, txt []rune) int {
	for i := range e.ascii {
		e.ascii[i] = -1
	}
	if len(e.ids) > 0 {
		clear(e.ids)
	}
	sigma := int32(0)
	e.pat = slices.Grow(e.pat[:0], len(pat))
	for _, r := range pat {
		var id int32
		if r < utf8.RuneSelf {
			id = e.ascii[r]
			if id < 0 {
				id, sigma = sigma, sigma+1
				e.ascii[r] = id
			}
		} else {
			if e.ids == nil {
				e.ids = make(map[rune]int32)
			}
			var found bool
			if id, found = e.ids[r]; !found {
				id, sigma = sigma, sigma+1
				e.ids[r] = id
			}
		}
		e.pat = append(e.pat, id)
	}
	e.txt = slices.Grow(e.txt[:0], len(txt))
	for _, r := range txt {
		id := int32(-1)
		if r < utf8.RuneSelf {
			id = e.ascii[r]
		} else if e.ids != nil {
			if v, found := e.ids[r]; found {
				id = v
			}
		}
		if id < 0 {
			id = sigma
		}
		e.txt = append(e.txt, id)
	}
	return int(sigma)
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func grow(s []uint64, n int) []uint64 {
	if cap(s) < n {
		return make([]uint64, n)
	}
	return s[:n]
}

func growInt(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
