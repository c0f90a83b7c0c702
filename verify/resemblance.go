package verify

import "math"

// Shingle sets are sorted slices of distinct 64-bit hashes, as in
// [sketch.Features.Shingles]. Unsorted or repeating input gives
// meaningless scores, never a panic. Every function here is O(|a| + |b|) by a
// merge, or O(|small|·log |large|) by galloping search when one set is
// more than gallopRatio times the other.

// gallopRatio is the size ratio beyond which intersection switches from a
// linear merge to galloping (exponential then binary) search of the
// smaller set's elements in the larger one.
const gallopRatio = 32

// minLaneSet is the smallest set size merged in four lanes; below it the
// setup costs more than the overlap gains.
const minLaneSet = 64

// checkEvery is how many merge steps run between two early-exit tests, so
// the test costs little beside the merge itself.
const checkEvery = 64

// Intersection returns |a ∩ b| for sorted sets of distinct hashes.
func Intersection(a, b []uint64) int {
	n, _ := intersectAtLeast(a, b, 0)
	return n
}

// Overlap is one intersection of two sorted sets of distinct hashes, a
// and b, with their sizes: [Jaccard] and both [Containment]s from a single
// merge.
type Overlap struct{ Inter, A, B int }

// OverlapOf returns the overlap of a and b.
func OverlapOf(a, b []uint64) Overlap { return Overlap{Intersection(a, b), len(a), len(b)} }

// Jaccard is Jaccard(a, b).
func (o Overlap) Jaccard() float64 { return jaccard(o.Inter, o.A, o.B) }

// Containment returns Containment(a, b) and Containment(b, a).
func (o Overlap) Containment() (ab, ba float64) {
	return containment(o.Inter, o.A), containment(o.Inter, o.B)
}

// Jaccard returns the resemblance |a ∩ b| / |a ∪ b| of two sorted sets of
// distinct hashes (Broder 1997). Two empty sets score 0, not 1: nothing in
// common is never evidence of duplication.
func Jaccard(a, b []uint64) float64 {
	return jaccard(Intersection(a, b), len(a), len(b))
}

// Containment returns |a ∩ b| / |a|, the fraction of a's shingles found in
// b (Broder 1997); it is 0 when a is empty. Containment(a, b) near 1 with
// Containment(b, a) low means a is a part of b: the common partial
// duplicate of a short page quoted inside a longer one.
func Containment(a, b []uint64) float64 {
	return containment(Intersection(a, b), len(a))
}

// JaccardAtLeast reports whether Jaccard(a, b) ≥ t, stopping the merge as
// soon as the intersection can no longer grow large enough. When ok is
// true, j is the exact resemblance. When ok is false, j is an upper bound
// on it: exact if the merge ran to the end, the best still reachable if it
// stopped early. t ≤ 0 always holds (and computes j exactly).
func JaccardAtLeast(a, b []uint64, t float64) (j float64, ok bool) {
	need := minJaccardInter(t, len(a), len(b))
	n, done := intersectAtLeast(a, b, need)
	if !done {
		return jaccard(n, len(a), len(b)), false
	}
	j = jaccard(n, len(a), len(b))
	return j, j >= t
}

// ContainmentAtLeast reports whether Containment(a, b) ≥ t with the same
// early exit and the same meaning of c as [JaccardAtLeast].
func ContainmentAtLeast(a, b []uint64, t float64) (c float64, ok bool) {
	need := minContainmentInter(t, len(a))
	n, done := intersectAtLeast(a, b, need)
	if !done {
		return containment(n, len(a)), false
	}
	c = containment(n, len(a))
	return c, c >= t
}

func jaccard(inter, na, nb int) float64 {
	if inter == 0 {
		return 0
	}
	return float64(inter) / float64(na+nb-inter)
}

func containment(inter, na int) float64 {
	if inter == 0 {
		return 0
	}
	return float64(inter) / float64(na)
}

// minJaccardInter is the least intersection size i with jaccard(i, na, nb)
// ≥ t, or min(na, nb)+1 when none reaches it. It evaluates the same
// floating-point expression as the decision, so pruning on it never
// rejects a pair the decision would accept.
func minJaccardInter(t float64, na, nb int) int {
	hi := min(na, nb)
	if t <= 0 {
		return 0
	}
	// J ≥ t  ⇔  i ≥ t·(na+nb)/(1+t).
	guess := int(math.Ceil(t * float64(na+nb) / (1 + t)))
	return minSatisfying(guess, 1, hi, func(i int) bool { return jaccard(i, na, nb) >= t })
}

func minContainmentInter(t float64, na int) int {
	if t <= 0 {
		return 0
	}
	guess := int(math.Ceil(t * float64(na)))
	return minSatisfying(guess, 1, na, func(i int) bool { return containment(i, na) >= t })
}

// intersectAtLeast counts |a ∩ b| and gives up once fewer than need common
// elements remain possible. done reports whether the count is exact; when
// it is false, n is the upper bound (common so far plus what could still
// match) that fell below need.
func intersectAtLeast(a, b []uint64, need int) (n int, done bool) {
	if len(a) > len(b) {
		a, b = b, a
	}
	if need > len(a) {
		return len(a), false
	}
	if len(a) == 0 {
		return 0, true
	}
	if len(b)/len(a) >= gallopRatio {
		return gallop(a, b, need)
	}
	return merge(a, b, need)
}

// merge counts common elements with a branch-free merge: the cursors
// advance by comparison results, so the unpredictable order of random
// hashes costs no branch mispredictions. A single merge is bound by the
// latency of its load → compare → advance chain, so the value range is cut
// at three elements of a into four lanes that merge in lockstep, which
// lets the CPU overlap four independent chains (about 2× faster at 800
// shingles).
func merge(a, b []uint64, need int) (n int, done bool) {
	if len(a) < minLaneSet || len(b) < minLaneSet {
		return mergeSmall(a, b), true
	}
	var ia, ea, ib, eb [4]int
	for c := 1; c < 4; c++ {
		ia[c] = c * len(a) / 4
		// max keeps the lanes ordered even for unsorted input, which
		// gives a meaningless count but must not panic.
		ib[c] = max(lowerBound64(b, a[ia[c]]), ib[c-1])
		ea[c-1], eb[c-1] = ia[c], ib[c]
	}
	ea[3], eb[3] = len(a), len(b)
	for {
		// Every cursor moves at most one place per step, so this many
		// steps stay in bounds without a test per step.
		steps := checkEvery
		for c := range 4 {
			steps = min(steps, ea[c]-ia[c], eb[c]-ib[c])
		}
		if steps <= 0 {
			break
		}
		i0, j0, i1, j1, i2, j2, i3, j3 := ia[0], ib[0], ia[1], ib[1], ia[2], ib[2], ia[3], ib[3]
		before := i0 + j0 + i1 + j1 + i2 + j2 + i3 + j3
		for range steps {
			x0, y0 := a[i0], b[j0]
			x1, y1 := a[i1], b[j1]
			x2, y2 := a[i2], b[j2]
			x3, y3 := a[i3], b[j3]
			i0 += b2i(x0 <= y0)
			j0 += b2i(y0 <= x0)
			i1 += b2i(x1 <= y1)
			j1 += b2i(y1 <= x1)
			i2 += b2i(x2 <= y2)
			j2 += b2i(y2 <= x2)
			i3 += b2i(x3 <= y3)
			j3 += b2i(y3 <= x3)
		}
		// A step moves both cursors of a lane exactly when they meet a
		// common element: the moves beyond one per step are the matches.
		n += i0 + j0 + i1 + j1 + i2 + j2 + i3 + j3 - before - 4*steps
		ia, ib = [4]int{i0, i1, i2, i3}, [4]int{j0, j1, j2, j3}
		bound := n
		for c := range 4 {
			bound += min(ea[c]-ia[c], eb[c]-ib[c])
		}
		if bound < need {
			return bound, false
		}
	}
	for c := range 4 {
		n += mergeSmall(a[ia[c]:ea[c]], b[ib[c]:eb[c]])
	}
	return n, true
}

// mergeSmall is the single-lane branch-free merge.
func mergeSmall(a, b []uint64) int {
	i, j, n := 0, 0, 0
	for i < len(a) && j < len(b) {
		x, y := a[i], b[j]
		n += b2i(x == y)
		i += b2i(x <= y)
		j += b2i(y <= x)
	}
	return n
}

// lowerBound64 returns the first index l with s[l] ≥ v in increasing s.
func lowerBound64(s []uint64, v uint64) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m] < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// gallop looks each element of the small set a up in the large set b by
// exponential then binary search from the last match position.
func gallop(a, b []uint64, need int) (n int, done bool) {
	lo := 0
	for i, x := range a {
		// Find the first index ≥ lo with b[k] ≥ x.
		step := 1
		hi := lo
		for hi < len(b) && b[hi] < x {
			lo = hi + 1
			hi += step
			step <<= 1
		}
		hi = min(hi, len(b))
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if b[m] < x {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo == len(b) {
			break
		}
		if b[lo] == x {
			n++
			lo++
		}
		if rest := len(a) - i - 1; n+rest < need {
			return n + rest, false
		}
	}
	return n, true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
