package sketch

import "math"

// Collision returns P(s) = 1 − (1 − s^r)^b, the probability that two sets
// with Jaccard resemblance s share at least one of b bands of r rows.
func Collision(s float64, b, r int) float64 {
	return 1 - math.Pow(1-math.Pow(s, float64(r)), float64(b))
}

// Bands chooses the number of bands b and rows per band r (b·r ≤ k) that
// minimize the equally weighted sum of the false-positive area
// ∫₀ᵗ P(s) ds and the false-negative area ∫ₜ¹ 1 − P(s) ds. For k = 128 it
// gives 9×13 at t = 0.8 and 25×5 at t = 0.5.
func Bands(k int, t float64) (b, r int) { return BandsWeighted(k, t, 0.5) }

// BandsWeighted is [Bands] with the false-negative area weighted by fn and
// the false-positive area by 1 − fn. Since every candidate is verified
// exactly, a missed pair costs more than a spurious one, and fn above 0.5
// buys recall with candidates: for k = 128 and t = 0.5, fn = 0.8 gives
// 30×4 (P(0.6) = 0.985) instead of 25×5 (P(0.6) = 0.868).
func BandsWeighted(k int, t, fn float64) (b, r int) {
	best := math.Inf(1)
	for bb := 1; bb <= k; bb++ {
		for rr := 1; bb*rr <= k; rr++ {
			fp := integrate(func(s float64) float64 { return Collision(s, bb, rr) }, 0, t)
			fneg := integrate(func(s float64) float64 { return 1 - Collision(s, bb, rr) }, t, 1)
			if e := (1-fn)*fp + fn*fneg; e < best {
				best, b, r = e, bb, rr
			}
		}
	}
	return b, r
}

// integrate is the composite Simpson rule with 256 intervals; P(s) is smooth
// so this is exact to well below the differences between (b, r) choices.
func integrate(f func(float64) float64, lo, hi float64) float64 {
	const n = 256
	h := (hi - lo) / n
	sum := f(lo) + f(hi)
	for i := 1; i < n; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		sum += w * f(lo+float64(i)*h)
	}
	return sum * h / 3
}

// BandKeys writes the b band keys of sig into dst and returns it. Key i is
// Mix64 of the polynomial over i and rows i·r … i·r+r−1, so equal keys in
// the same band mean (up to a 2^-64 collision) equal rows. Rows past b·r are
// not used.
func BandKeys(dst []uint64, sig Signature, b, r int) []uint64 {
	dst = dst[:0]
	for i := range b {
		h := uint64(i)
		for _, v := range sig[i*r : i*r+r] {
			h = h*shinglePrime + v
		}
		dst = append(dst, Mix64(h))
	}
	return dst
}
