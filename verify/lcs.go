package verify

import (
	"math/bits"
	"slices"

	"github.com/neardup/neardup/sketch"
)

// Alignment is the longest common subsequence of two unique-word
// sequences.
type Alignment struct {
	// Common is |X ∩ Y|, the number of words both sequences contain.
	Common int
	// Len is |LCS(X, Y)|.
	Len int
	// Pairs are the aligned words as token positions ([sketch.UniqueWord].Pos)
	// in a and in b, increasing in both. Nil when Len is 0 or when the
	// alignment was pruned.
	Pairs [][2]uint32
}

// LCS aligns two DUPNIQ unique-word sequences and returns the longest
// common subsequence of their hashes with the aligned positions.
//
// Because every hash occurs at most once per sequence, the LCS is the
// longest strictly increasing subsequence of the b-indices of the common
// words taken in a's order (Hunt–Szymanski): O(|a| + |b| + k·log k) time
// and O(|a| + |b|) memory for k common words, against O(|a|·|b|) for the
// textbook dynamic program. Empty input gives the zero Alignment.
//
// Sequences that break the contract and repeat a hash are accepted: only
// the first occurrence of each hash in each sequence takes part.
//
// LCS allocates its working memory; use an [Aligner] to reuse it.
func LCS(a, b []sketch.UniqueWord) Alignment {
	var al Aligner
	return al.Align(a, b)
}

// Aligner computes [LCS] with reusable buffers: after warm-up,
// [Aligner.Len] allocates nothing and [Aligner.Align] allocates only the
// returned pairs. The zero value is ready to use. An Aligner is not safe
// for concurrent use.
type Aligner struct {
	// Open-addressing hash table from hash to index+1 in the table side
	// (0 marks an empty slot).
	keys  []uint64
	slots []int32
	shift uint // 64 − log2(len(slots)), for Fibonacci hashing

	seq   []int32 // table-side index of each common word, in probe-side order
	from  []int32 // probe-side index of each common word
	tailv []int32 // tailv[l]: least value ending an increasing run of length l+1
	tails []int32 // tails[l]: index into seq of that value
	prev  []int32 // predecessor of each seq entry in its best run, or −1
}

// maxRetained bounds the buffers an Aligner keeps between calls, in
// elements: a 100 000-word pair runs fine, but its megabytes are not
// pinned for the small pairs that follow.
const maxRetained = 1 << 16

// Align returns the LCS of a and b with the aligned positions.
func (al *Aligner) Align(a, b []sketch.UniqueWord) Alignment {
	aln, _ := al.align(a, b, 0, true)
	return aln
}

// Len returns |LCS(a, b)| and |a ∩ b| without building the pairs. When
// the common words are fewer than minLen, it skips the alignment and
// returns ok false with lcs 0; minLen ≤ 0 never skips. Use [MinLCS] for
// the minLen that a score threshold implies: that is DUPNIQ's lower-bound
// test, passed by under 1% of book pairs in the paper.
func (al *Aligner) Len(a, b []sketch.UniqueWord, minLen int) (lcs, common int, ok bool) {
	aln, ok := al.align(a, b, minLen, false)
	return aln.Len, aln.Common, ok
}

// AlignAtLeast is [Aligner.Align] with the lower-bound test of
// [Aligner.Len].
func (al *Aligner) AlignAtLeast(a, b []sketch.UniqueWord, minLen int) (Alignment, bool) {
	return al.align(a, b, minLen, true)
}

func (al *Aligner) align(a, b []sketch.UniqueWord, minLen int, pairs bool) (Alignment, bool) {
	defer al.trim()
	if len(a) == 0 || len(b) == 0 {
		return Alignment{}, minLen <= 0
	}
	if minLen > min(len(a), len(b)) {
		return Alignment{}, false
	}
	// Index the shorter sequence, probe with the longer one: the table
	// stays small and cache-resident, and the probe is a single pass.
	table, probe, swapped := a, b, false
	if len(b) < len(a) {
		table, probe, swapped = b, a, true
	}
	al.build(table)
	common := al.probe(probe, pairs)
	if common < minLen {
		return Alignment{Common: common}, false
	}
	if !pairs {
		return Alignment{Common: common, Len: al.lisLen()}, true
	}
	n, last := al.lis()
	out := make([][2]uint32, n)
	for k, t := n-1, last; k >= 0; k, t = k-1, al.prev[t] {
		tp, pp := table[al.seq[t]].Pos, probe[al.from[t]].Pos
		if swapped {
			out[k] = [2]uint32{pp, tp}
		} else {
			out[k] = [2]uint32{tp, pp}
		}
	}
	if n == 0 {
		out = nil
	}
	return Alignment{Common: common, Len: n, Pairs: out}, true
}

// build indexes table into a hash table at most a quarter full, so that
// a lookup almost always ends at its first slot; past 4096 words, where
// memory matters more than a probe, at most half full.
func (al *Aligner) build(table []sketch.UniqueWord) {
	load := 4
	if len(table) > 4096 {
		load = 2
	}
	size := max(1<<bits.Len(uint(load*len(table)-1)), 16) // a power of two ≥ load·len
	if cap(al.slots) < size {
		al.slots = make([]int32, size)
		al.keys = make([]uint64, size)
	} else {
		al.slots = al.slots[:size]
		al.keys = al.keys[:size]
		clear(al.slots)
	}
	al.shift = uint(64 - bits.Len(uint(size-1)))
	slots, keys, shift := al.slots, al.keys[:size], al.shift
	mask := size - 1
	for i, w := range table {
		h := int((w.Hash*fib)>>shift) & mask
		for slots[h] != 0 && keys[h] != w.Hash {
			h = (h + 1) & mask
		}
		if slots[h] == 0 { // else a repeated hash: keep the first occurrence
			slots[h] = int32(i + 1)
			keys[h] = w.Hash
		}
	}
}

// fib is 2^64/φ: multiplying by it and keeping the top bits spreads even
// poorly mixed keys over the table (Knuth's multiplicative hashing).
const fib = 0x9E3779B97F4A7C15

// probe looks every word of probe up and records the common ones in
// order: their table-side indices in seq and, when from is set, their
// probe-side indices. A matched slot is negated so that a repeated probe
// word cannot match it twice. Hit or miss is data, not control flow: the
// result is written unconditionally and the length advanced by the hit
// bit, because whether a word is common is as unpredictable as a coin.
func (al *Aligner) probe(probe []sketch.UniqueWord, from bool) int {
	// At most one entry per table word, plus the one speculative write.
	limit := len(probe) + 1
	seq := slices.Grow(al.seq[:0], limit)[:limit]
	var fr []int32
	if from {
		fr = slices.Grow(al.from[:0], limit)[:limit]
	}
	slots, keys, shift := al.slots, al.keys[:len(al.slots)], al.shift
	mask := len(slots) - 1
	n := 0
	for j, w := range probe {
		h := int((w.Hash*fib)>>shift) & mask
		s := slots[h]
		for s != 0 && keys[h] != w.Hash {
			h = (h + 1) & mask
			s = slots[h]
		}
		// Now slot h is empty (a miss), or holds w's hash: unmatched if
		// s > 0, already matched by a repeat of w if s < 0.
		hit := b2i(s > 0)
		seq[n] = s - 1
		if from {
			fr[n] = int32(j)
		}
		slots[h] = s * int32(1-2*hit)
		n += hit
	}
	al.seq, al.from = seq[:n], fr[:min(n, len(fr))]
	return n
}

// lisLen returns the length of the longest strictly increasing
// subsequence of seq by patience sorting: tailv[l] is the smallest value
// that ends an increasing run of length l+1, and tailv is increasing, so
// each element is placed by binary search.
func (al *Aligner) lisLen() int {
	// Sized for the worst case up front: one allocation, not a doubling
	// sequence, when a large pair outgrows the retained buffers.
	tailv := slices.Grow(al.tailv[:0], len(al.seq))
	for _, v := range al.seq {
		// Words of a duplicate mostly arrive in order and extend the
		// longest run: test that before searching.
		if len(tailv) == 0 || tailv[len(tailv)-1] < v {
			tailv = append(tailv, v)
			continue
		}
		l := lowerBound(tailv, v)
		if l == len(tailv) {
			tailv = append(tailv, v)
		} else {
			tailv[l] = v
		}
	}
	al.tailv = tailv
	return len(tailv)
}

// lis is lisLen that also records predecessors, and returns the length and
// the seq index ending one longest run. tailv mirrors the values at tails
// so the search reads one array.
func (al *Aligner) lis() (n int, last int32) {
	tailv, tails := slices.Grow(al.tailv[:0], len(al.seq)), slices.Grow(al.tails[:0], len(al.seq))
	al.prev = slices.Grow(al.prev[:0], len(al.seq))[:len(al.seq)]
	for t, v := range al.seq {
		l := len(tailv)
		if l > 0 && tailv[l-1] >= v {
			l = lowerBound(tailv, v)
		}
		if l > 0 {
			al.prev[t] = tails[l-1]
		} else {
			al.prev[t] = -1
		}
		if l == len(tailv) {
			tailv, tails = append(tailv, v), append(tails, int32(t))
		} else {
			tailv[l], tails[l] = v, int32(t)
		}
	}
	al.tailv, al.tails = tailv, tails
	if len(tails) == 0 {
		return 0, -1
	}
	return len(tails), tails[len(tails)-1]
}

// lowerBound returns the first index l with s[l] ≥ v in increasing s of
// non-negative values. The loop halves a length instead of moving two
// bounds and adds half under a sign mask, so it runs without branches on
// the data: the common words of unrelated books arrive in random order,
// and a mispredicted branch per level would cost more than the compare.
func lowerBound(s []int32, v int32) int {
	base, n := 0, len(s)
	for n > 1 {
		half := n >> 1
		// −1 when s[base+half−1] < v; both are ≥ 0, so no overflow.
		lt := (int(s[base+half-1]) - int(v)) >> 63
		base += half & lt
		n -= half
	}
	if n == 1 && s[base] < v {
		base++
	}
	return base
}

func (al *Aligner) trim() {
	if cap(al.slots) > 2*maxRetained {
		al.slots, al.keys = nil, nil
	}
	if cap(al.seq) > maxRetained {
		al.seq, al.from, al.prev, al.tails, al.tailv = nil, nil, nil, nil, nil
	}
}
