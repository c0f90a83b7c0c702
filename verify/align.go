package verify

import (
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"
)

// AlignSide is what passage alignment reads of one document: a short
// fingerprint of every shingle position (only the low FpBits bits count),
// the document's winnowing anchors (sketch.Winnow) with their hashes cut
// to 32 bits, and, when known, where each of its words lies in its text.
type AlignSide struct {
	Fp      []byte
	Anchors []AlignAnchor
	// Starts and Ends, when set, are each word's range [Starts[w],
	// Ends[w]) in the text (sketch.Passage): len(Fp)+k−1 words for
	// shingles of k words. A run is then extended by a position only
	// when the word that position's shingle adds at the run's end has
	// the same length on both sides (see extend).
	Starts, Ends []uint32
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
	seeds  []uint64 // diagonal (biased) << 32 | position in a, sorted
	byHash []uint64 // a's anchors: hash << 32 | position, sorted
	// aKey names the document byHash was built for (alignKeyed): the
	// verifier aligns one document against each of its candidates in
	// turn, and sorts its anchors once. nil: built by Align.
	aKey   any
	chains []AlignPassage
	cover  []byte // 1: a position of a matched in a run, else 0
	// The lengths of a's words (built with byHash, for aKey): what extend
	// compares with the lengths of b's words.
	lensA []uint32
}

type seed struct{ a, b int }

// diagBias keeps a seed's diagonal b − a positive in the top half of
// its sort key, for positions up to maxAlignPositions.
const diagBias = 1 << 31

// maxAlignPositions bounds the positions Align reads on either side.
const maxAlignPositions = 1<<31 - 1

const fpMask = 1<<FpBits - 1

// coverAll marks eight positions of PassageAligner.cover at once.
const coverAll = 0x0101010101010101

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
	return al.alignKeyed(dst, a, b, opt, nil)
}

// alignKeyed is Align; a non-nil key names a's anchors and positions:
// when the previous call had the same key, a's sorted anchors are reused.
func (al *PassageAligner) alignKeyed(dst []AlignPassage, a, b AlignSide, opt AlignOptions, key any) ([]AlignPassage, int) {
	opt = opt.withDefaults()
	if len(a.Anchors) == 0 || len(b.Anchors) == 0 || len(a.Fp) == 0 || len(b.Fp) == 0 {
		return dst, 0
	}
	if len(a.Fp) > maxAlignPositions || len(b.Fp) > maxAlignPositions {
		// Beyond what the seeds' sort keys hold (no document within
		// sketch.MaxSketchBytes comes near).
		return dst, 0
	}
	// a's anchors as hash<<32 | position, sorted: by hash, then by
	// position (the order of equal hashes does not matter: the seeds are
	// sorted again below, totally).
	if key == nil || key != al.aKey {
		al.byHash = al.byHash[:0]
		for _, x := range a.Anchors {
			if int(x.Pos) < len(a.Fp) {
				al.byHash = append(al.byHash, uint64(x.Hash)<<32|uint64(x.Pos))
			}
		}
		slices.Sort(al.byHash)
		al.lensA = wordLens(al.lensA, a)
		al.aKey = key
	}
	// The seeds as one word each, sorted by diagonal (b − a, biased to
	// stay positive), then by a: the order extend takes them in.
	al.seeds = al.seeds[:0]
	for _, x := range b.Anchors {
		if int(x.Pos) >= len(b.Fp) {
			continue
		}
		i, _ := slices.BinarySearch(al.byHash, uint64(x.Hash)<<32)
		for ; i < len(al.byHash) && uint32(al.byHash[i]>>32) == x.Hash; i++ {
			pa := int64(uint32(al.byHash[i]))
			al.seeds = append(al.seeds, uint64(int64(x.Pos)-pa+diagBias)<<32|uint64(pa))
		}
	}
	if len(al.seeds) == 0 {
		return dst, 0
	}
	slices.Sort(al.seeds)
	al.chains = al.chains[:0]
	al.cover = slices.Grow(al.cover[:0], len(a.Fp))[:len(a.Fp)]
	clear(al.cover)
	var words *wordPair
	if k, ok := wordsOf(a, b); ok {
		words = &wordPair{al.lensA, b.Starts, b.Ends[:len(b.Starts)], k}
	}
	match := fpPair{a: a.Fp, b: b.Fp, words: words}
	for _, k := range al.seeds {
		a := int(uint32(k))
		s := seed{a, int(int64(k>>32)-diagBias) + a}
		if al.covered(s) {
			continue
		}
		c := al.extend(s, match, opt)
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
		p.Matched = countCovered(al.cover[p.A0:p.A1])
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

// countCovered counts the positions of c that are set (each byte 0 or
// 1), eight at a time.
func countCovered(c []byte) int {
	n := 0
	for len(c) >= 8 {
		n += bits.OnesCount64(le64(c))
		c = c[8:]
	}
	for _, x := range c {
		n += int(x)
	}
	return n
}

// covered reports whether seed s already lies in a run found earlier.
func (al *PassageAligner) covered(s seed) bool {
	for i := len(al.chains) - 1; i >= 0; i-- {
		c := al.chains[i]
		if s.a >= c.A0 && s.a < c.A1 && s.b >= c.B0 && s.b < c.B1 && al.cover[s.a] != 0 {
			return true
		}
	}
	return false
}

// fpPair holds the fingerprints of both sides, and their words' lengths
// when known; match is a method, not a closure, so that extend's inner
// loops inline it.
type fpPair struct {
	a, b  []byte
	words *wordPair
}

// wordPair is the lengths of a's words (AlignSide.Ends − Starts,
// wordLens: a is aligned with each of its candidates in turn), where b's
// lie, and the shingle width k they imply: all extend compares of the
// words.
type wordPair struct {
	la     []uint32
	sb, eb []uint32 // len(eb) == len(sb)
	k      int
}

// wordsOf returns the shingle width the words of a and b imply; ok is
// false when either side has none or they do not fit its positions (a
// shingle width k ≥ 1, the same on both sides).
func wordsOf(a, b AlignSide) (k int, ok bool) {
	ka, kb := len(a.Starts)-len(a.Fp)+1, len(b.Starts)-len(b.Fp)+1
	if len(a.Ends) != len(a.Starts) || len(b.Ends) != len(b.Starts) || ka < 1 || ka != kb || len(a.Starts) == 0 {
		return 0, false
	}
	return ka, true
}

// wordLens returns the lengths of s's words, Ends[w] − Starts[w] as
// uint32 (what sameNewWord compares), in dst's memory.
func wordLens(dst []uint32, s AlignSide) []uint32 {
	n := min(len(s.Starts), len(s.Ends))
	dst = slices.Grow(dst[:0], n)[:n]
	starts, ends := s.Starts[:n], s.Ends[:n]
	for w := range dst {
		dst[w] = ends[w] - starts[w]
	}
	return dst
}

// sameNewWord reports whether the word that shingle position i of a and j
// of b add to a run extended to them in direction dir (the shingle's
// first word going back, its last going forward) has the same length on
// both sides; true when the words are not known.
//
// A position whose shingle is not copied still has a matching
// fingerprint with probability 2^-FpBits (1/8), and a run extended by
// such a position takes in a word that was not copied, the one that
// shingle adds. The other words of that shingle are copied (they are in
// the run's next shingle), so the shingles' equality, on the text, rests
// on that one word: words of different lengths are different words. The
// check takes the chance of such a false extension from 1/8 to 1/8 of
// the chance that two different words have the same length (about 1/7
// for English text).
func (w *wordPair) sameNewWord(i, j, dir int) bool {
	if w == nil {
		return true
	}
	if dir > 0 {
		i, j = i+w.k-1, j+w.k-1
	}
	if i < 0 || j < 0 || i >= len(w.la) || j >= len(w.sb) {
		return true
	}
	return w.la[i] == w.eb[j]-w.sb[j]
}

// sameAhead returns how many of the n ≤ 8 positions after (i, j) in
// direction dir add, one after another, words of the same lengths on both
// sides (sameNewWord of each, in order), when ahead has said that the
// eight positions lie inside both documents: their words then lie inside
// both word lists, and are read as eight of each.
func (w *wordPair) sameAhead(i, j, dir, n int) int {
	if w == nil {
		return n
	}
	xa, xb := i-8, j-8 // the words positions i−1 … i−8 add going back
	if dir > 0 {
		xa, xb = i+w.k, j+w.k // those positions i+1 … i+8 add going on
	}
	if xa < 0 || xb < 0 || xa > len(w.la)-8 || xb > len(w.sb)-8 {
		k := 0 // not eight words on a side: a position at a time
		for k < n && w.sameNewWord(i+dir*(k+1), j+dir*(k+1), dir) {
			k++
		}
		return k
	}
	la, sb, eb := (*[8]uint32)(w.la[xa:xa+8]), (*[8]uint32)(w.sb[xb:xb+8]), (*[8]uint32)(w.eb[xb:xb+8])
	if dir > 0 { // the nearest word first
		for m := range min(n, 8) {
			if la[m] != eb[m]-sb[m] {
				return m
			}
		}
		return n
	}
	for m := range min(n, 8) {
		if la[7-m] != eb[7-m]-sb[7-m] {
			return m
		}
	}
	return n
}

// sameRun reports whether the n positions from (i, j) in direction dir,
// a resumed run, have words of the same lengths on both sides: every
// word of the first one's shingle and the word each next one adds.
//
// Those words are one stretch of each side: going on, the words of
// positions i … i+n−1's shingles, i … i+k+n−2; going back, i−n+1 …
// i+k−1. So the stretches are compared word by word, a pair outside
// either list taken as the same (as sameNewWord takes it).
func (w *wordPair) sameRun(i, j, dir, n int) bool {
	if w == nil {
		return true
	}
	n = max(n, 1) // the first position's shingle is compared whatever n is
	lo, lob := i, j
	if dir < 0 {
		lo, lob = i-n+1, j-n+1
	}
	l := w.k + n - 1
	if lo >= 0 && lob >= 0 && lo+l <= len(w.la) && lob+l <= len(w.sb) {
		la, sb := w.la[lo:lo+l], w.sb[lob:lob+l]
		eb := w.eb[lob:][:len(sb)]
		for m, x := range la {
			if x != eb[m]-sb[m] {
				return false
			}
		}
		return true
	}
	for m := range l {
		x, y := lo+m, lob+m
		if x < 0 || y < 0 || x >= len(w.la) || y >= len(w.sb) {
			continue
		}
		if w.la[x] != w.eb[y]-w.sb[y] {
			return false
		}
	}
	return true
}

// match reports whether position i of a and j of b have the same
// fingerprint (false outside either side).
func (f fpPair) match(i, j int) bool {
	return i >= 0 && j >= 0 && i < len(f.a) && j < len(f.b) && (f.a[i]^f.b[j])&fpMask == 0
}

// ahead returns how many of the eight positions after (i, j) in direction
// dir match in a row (their fingerprints only), reading eight of each
// side at once; ok is false when those positions do not all lie inside
// both documents (match then decides a position at a time).
func (f fpPair) ahead(i, j, dir int) (n int, ok bool) {
	const low3 = 0x0101010101010101 * fpMask
	if dir > 0 {
		if i < -1 || j < -1 || i > len(f.a)-9 || j > len(f.b)-9 {
			return 0, false
		}
		x := (le64(f.a[i+1:i+9]) ^ le64(f.b[j+1:j+9])) & low3
		return bits.TrailingZeros64(x) / 8, true
	}
	if i < 8 || j < 8 || i > len(f.a) || j > len(f.b) {
		return 0, false
	}
	// Bytes i−8 … i−1 of a: i−1 is the high byte.
	x := (le64(f.a[i-8:i]) ^ le64(f.b[j-8:j])) & low3
	return bits.LeadingZeros64(x) / 8, true
}

// extend grows a run around seed s in both directions and marks the
// matched positions of a in al.cover.
func (al *PassageAligner) extend(s seed, fp fpPair, opt AlignOptions) AlignPassage {
	p := AlignPassage{A0: s.a, A1: s.a + 1, B0: s.b, B1: s.b + 1}
	al.cover[s.a] = 1
	for dir := -1; dir <= 1; dir += 2 {
		i, j := s.a, s.b
		for {
			if n, ok := fp.ahead(i, j, dir); ok {
				// Away from the ends: the next eight fingerprints at once,
				// then the words of those that match, in order.
				k := fp.words.sameAhead(i, j, dir, n)
				if k == 8 {
					// Eight positions of a, all inside it (ahead), covered
					// at once.
					if dir > 0 {
						binary.LittleEndian.PutUint64(al.cover[i+1:], coverAll)
					} else {
						binary.LittleEndian.PutUint64(al.cover[i-8:], coverAll)
					}
					i, j = i+dir*8, j+dir*8
					continue
				}
				for m := 1; m <= k; m++ {
					al.cover[i+dir*m] = 1
				}
				i, j = i+dir*k, j+dir*k
				// The next position fails on its fingerprint or its word.
			} else {
				ni, nj := i+dir, j+dir
				if fp.match(ni, nj) && fp.words.sameNewWord(ni, nj, dir) {
					i, j = ni, nj
					al.cover[i] = 1
					continue
				}
			}
			// Look for the run to resume within Gap positions, near the
			// diagonal. With the words known, the resumed shingles' words
			// must have the same lengths on both sides too: a resumption
			// by chance (4 fingerprints in a row, 2^-12 per try) past the
			// end of a copy would take in a dozen words that were not
			// copied.
			ri, rj, found := resume(fp, i, j, dir, opt)
			if found && !fp.words.sameRun(ri, rj, dir, opt.Resume) {
				// The nearest place fails on the words: look further.
				ri, rj, found = resumeAccept(fp, i, j, dir, opt, fp.words.sameRun)
			}
			if found {
				for k := 0; k < opt.Resume; k++ {
					al.cover[ri+dir*k] = 1
				}
				i, j = ri+dir*(opt.Resume-1), rj+dir*(opt.Resume-1)
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

// resume looks for a run broken after positions (i, j) to resume, going
// in direction dir: the first place (ri, rj) from which opt.Resume
// positions match along the diagonal, ri at most opt.Gap positions on
// and rj within opt.Drift of the diagonal, trying the nearest gap first
// and, for one gap, the drifts 0, +1, −1, +2, −2, … in turn. It reads
// sixteen positions of each diagonal at once (resumeWords; near the ends
// of the documents, resumeEdge) when the tries fit in them; resumeSlow
// is the same search, a try at a time.
func resume(fp fpPair, i, j, dir int, opt AlignOptions) (ri, rj int, found bool) {
	if opt.Gap+opt.Resume <= resumeSpan+1 && opt.Resume <= 8 && opt.Drift <= maxWordDrift {
		g, dd, ok, done := resumeWords(fp, i, j, dir, opt)
		if !done {
			g, dd, ok = resumeEdge(fp, i, j, dir, opt)
		}
		if ok {
			return i + dir*g, j + dir*(g+dd), true
		}
		return 0, 0, false
	}
	return resumeSlow(fp, i, j, dir, opt, nil)
}

// resumeSpan is how many positions past a break resumeWords reads: the
// tries of gaps up to Gap, each Resume positions long, when Gap + Resume
// − 1 is at most this.
const resumeSpan = 16

// maxWordDrift bounds the drifts resumeWords handles.
const maxWordDrift = 7

// resumeSlow is resume's search, one try at a time; with accept, a place
// is taken only when accept(ri, rj, dir, opt.Resume) says so too.
func resumeSlow(fp fpPair, i, j, dir int, opt AlignOptions, accept func(ri, rj, dir, n int) bool) (ri, rj int, found bool) {
	na, nb := len(fp.a), len(fp.b)
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
				if ok && (accept == nil || accept(ri, rj, dir, opt.Resume)) {
					return ri, rj, true
				}
				if d == 0 {
					break
				}
			}
		}
	}
	return 0, 0, false
}

// resumeWords is resume's search on whole words: for each drift, the
// sixteen fingerprints past the break on both sides are compared eight
// at a time (a byte a position), which gives the positions that match as
// sixteen bits (matchMask); ANDing the mask with itself shifted
// (runStarts) leaves the places where Resume matches start. The nearest
// such place, over the drifts in their order, is what resumeSlow finds:
// a drift after the first wins only with a place nearer than the best so
// far, so the gaps it may take narrow to those, and once a place is
// found at the first gap no later drift is read. done is false when a
// read would leave either document (resumeWindow, driftWindows: near its
// ends), where resumeEdge decides. It returns the gap and the drift of
// the place found.
func resumeWords(fp fpPair, i, j, dir int, opt AlignOptions) (g, dd int, found, done bool) {
	drift := opt.Drift
	a0, a1, ok := resumeWindow(fp, i, dir)
	bw, bok := driftWindows(fp, j, dir)
	if !ok || !bok {
		return 0, 0, false, false
	}
	r := opt.Resume
	gaps := uint32(1)<<min(opt.Gap, resumeSpan) - 1 // starts 0 … Gap−1 a bit each
	best, bestDD := resumeSpan, 0
	for d := 0; d <= drift && gaps != 0; d++ {
		for x := d; ; x = -x {
			b0, b1 := bw.drift(x, dir)
			if s := runStarts(matchMask(a0^b0, a1^b1), r) & gaps; s != 0 {
				best, bestDD = bits.TrailingZeros32(s), x
				gaps = 1<<best - 1
			}
			if x <= 0 {
				break
			}
		}
	}
	if best == resumeSpan {
		return 0, 0, false, true
	}
	return best + 1, bestDD, true, true
}

// resumeEdge is resumeWords where a read of sixteen positions would
// leave either document: the positions past the break are copied, a's
// sixteen and b's over every drift, with which of them lie inside their
// document, and a position outside either one does not match (as in
// fpPair.match, so a place needs its Resume positions inside both).
func resumeEdge(fp fpPair, i, j, dir int, opt AlignOptions) (g, dd int, found bool) {
	drift := opt.Drift
	// wa[p] is position i+dir·(p+1) of a; wb[p] is position
	// j+dir·(p+1−drift) of b, so that drift x's p-th is wb[p+x+drift].
	var wa [resumeSpan]byte
	var wb [resumeSpan + 2*maxWordDrift]byte
	var va uint32
	var vb uint64
	for p := range wa {
		if q := i + dir*(p+1); q >= 0 && q < len(fp.a) {
			wa[p], va = fp.a[q], va|1<<p
		}
	}
	for p := range resumeSpan + 2*drift {
		if q := j + dir*(p+1-drift); q >= 0 && q < len(fp.b) {
			wb[p], vb = fp.b[q], vb|1<<p
		}
	}
	a0, a1 := le64(wa[:]), le64(wa[8:])
	r := opt.Resume
	gaps := uint32(1)<<min(opt.Gap, resumeSpan) - 1
	best, bestDD := resumeSpan, 0
	for d := 0; d <= drift && gaps != 0; d++ {
		for x := d; ; x = -x {
			o := x + drift
			m := matchMask(a0^le64(wb[o:]), a1^le64(wb[o+8:])) & va & uint32(vb>>o)
			if s := runStarts(m, r) & gaps; s != 0 {
				best, bestDD = bits.TrailingZeros32(s), x
				gaps = 1<<best - 1
			}
			if x <= 0 {
				break
			}
		}
	}
	if best == resumeSpan {
		return 0, 0, false
	}
	return best + 1, bestDD, true
}

// resumeWindow returns the sixteen fingerprints of a past a break after
// position i in direction dir (positions i+dir·1 … i+dir·16, a byte each,
// the nearest in the low byte of a0); ok is false when they would leave
// a.
func resumeWindow(fp fpPair, i, dir int) (a0, a1 uint64, ok bool) {
	if dir > 0 {
		if i < -1 || i+1+resumeSpan > len(fp.a) {
			return 0, 0, false
		}
		return le64(fp.a[i+1:]), le64(fp.a[i+9:]), true
	}
	if i-resumeSpan < 0 || i > len(fp.a) {
		return 0, 0, false
	}
	return bits.ReverseBytes64(le64(fp.a[i-8:])), bits.ReverseBytes64(le64(fp.a[i-16:])), true
}

// bWindows is 32 fingerprints of b around a break after position j,
// which hold the sixteen past it on every drift up to maxWordDrift:
// positions j−7 … j+24 going on, j−25 … j+6 going back. Read through an
// array, the drifts' reads need no bounds checks.
type bWindows struct{ p *[32]byte }

// driftWindows returns b's windows of a break after j in direction dir;
// ok is false when they would leave b.
func driftWindows(fp fpPair, j, dir int) (w bWindows, ok bool) {
	lo := j - 7
	if dir < 0 {
		lo = j - 25
	}
	if lo < 0 || lo+32 > len(fp.b) {
		return w, false
	}
	return bWindows{(*[32]byte)(fp.b[lo : lo+32])}, true
}

// drift returns b's sixteen fingerprints past the break on drift x
// (positions j+x+dir·1 …, a byte each, the nearest in the low byte of
// b0), |x| ≤ maxWordDrift.
func (w bWindows) drift(x, dir int) (b0, b1 uint64) {
	o := uint(x+maxWordDrift) & 15
	if dir > 0 { // position j+x+1 is byte x+8
		return le64(w.p[o+1:]), le64(w.p[o+9:])
	}
	e := 32 - o // bytes e−8 … e−1 hold positions j−x−8 … j−x−1
	return bits.ReverseBytes64(le64(w.p[e-8:])), bits.ReverseBytes64(le64(w.p[e-16:]))
}

// matchMask returns which of sixteen positions match, a bit each (the
// nearest in bit 0), given x0 and x1, the XOR of both sides' fingerprints
// for positions 1 … 8 and 9 … 16 (a byte each, the nearest in the low
// byte).
func matchMask(x0, x1 uint64) uint32 {
	return gatherBytes(matchBytes(x0)) | gatherBytes(matchBytes(x1))<<8
}

// gatherBytes packs the high bits of x's bytes into eight bits, byte k's
// into bit k: multiplied by the constant, bit 8k moves to bit 8k+7i+7
// for each i, all different, so nothing carries, and bit 56+k is byte k's
// (i = 7−k).
func gatherBytes(x uint64) uint32 {
	return uint32((x >> 7) * 0x0102040810204080 >> 56)
}

// runStarts returns, a bit each, the places where resume consecutive
// positions match, given m, which of sixteen positions match (a bit
// each, the nearest in bit 0; a place whose positions reach past the
// sixteenth does not match): m ANDed with itself shifted. The shifts
// double: after m is ANDed with itself shifted by h, a place's bit says
// that 2h positions from it match; a last shift by resume − h (at most h)
// makes it resume.
func runStarts(m uint32, resume int) uint32 {
	if resume == 4 { // the default
		m &= m >> 1
		return m & (m >> 2)
	}
	h := 1
	for ; 2*h <= resume; h *= 2 {
		m &= m >> h
	}
	if h < resume {
		m &= m >> (resume - h)
	}
	return m
}

// resumeAccept is resumeSlow with accept: the first place in its order
// (the nearest gap first, then the drifts 0, +1, −1, …) where Resume
// positions match and that accept takes. Where resumeWords can read the
// sixteen positions past the break on every drift, it finds the places
// that match as resumeWords does and asks accept only about those;
// elsewhere resumeSlow decides.
func resumeAccept(fp fpPair, i, j, dir int, opt AlignOptions, accept func(ri, rj, dir, n int) bool) (ri, rj int, found bool) {
	drift := opt.Drift
	if opt.Gap+opt.Resume > resumeSpan+1 || opt.Resume > 8 || drift > maxWordDrift {
		return resumeSlow(fp, i, j, dir, opt, accept)
	}
	a0, a1, ok := resumeWindow(fp, i, dir)
	bw, bok := driftWindows(fp, j, dir)
	if !ok || !bok {
		return resumeSlow(fp, i, j, dir, opt, accept)
	}
	// The places of each drift, in resumeSlow's order of drifts, and
	// which gaps have one on some drift.
	var starts [2*maxWordDrift + 1]uint32
	var drifts [2*maxWordDrift + 1]int
	var anyAt uint32
	n := 0
	for d := 0; d <= drift; d++ {
		for x := d; ; x = -x {
			b0, b1 := bw.drift(x, dir)
			starts[n], drifts[n] = runStarts(matchMask(a0^b0, a1^b1), opt.Resume), x
			anyAt |= starts[n]
			n++
			if x <= 0 {
				break
			}
		}
	}
	for g := 1; g <= opt.Gap; g++ {
		bit := uint32(1) << (g - 1) // the place of gap g
		if anyAt&bit == 0 {
			continue
		}
		for k := range n {
			if starts[k]&bit == 0 {
				continue
			}
			ri, rj := i+dir*g, j+dir*(g+drifts[k])
			if accept(ri, rj, dir, opt.Resume) {
				return ri, rj, true
			}
		}
	}
	return 0, 0, false
}

// matchBytes returns the high bit of each byte of x whose fingerprint
// bits (low3) are all zero: the positions whose fingerprints match.
func matchBytes(x uint64) uint64 {
	const low3, high = 0x0101010101010101 * fpMask, 0x8080808080808080
	x &= low3
	// A byte of at most 0x07 plus 0x7f sets its high bit exactly when it
	// is not zero, and carries into no other byte.
	return ^(x + 0x7f7f7f7f7f7f7f7f | x) & high
}

// le64 reads eight bytes little-endian.
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
