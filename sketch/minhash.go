package sketch

import "math"

// Signature is a MinHash signature: K minimum hash values. Position i of two
// signatures from the same [Signer] agree with probability equal to the
// Jaccard resemblance of the two underlying sets. An empty set has every
// position set to [Empty].
type Signature []uint64

// Empty marks a signature position that saw no element.
const Empty = math.MaxUint64

// Jaccard returns the fraction of positions where s and o agree, the MinHash
// estimate of the Jaccard resemblance. Positions that are [Empty] in both
// never count as agreement, so two empty sets estimate 0. It returns 0 when
// the lengths differ.
func (s Signature) Jaccard(o Signature) float64 {
	if len(s) != len(o) || len(s) == 0 {
		return 0
	}
	o = o[:len(s)]
	eq := 0
	for i, v := range s {
		if v == o[i] && v != Empty {
			eq++
		}
	}
	return float64(eq) / float64(len(s))
}

// Signer computes MinHash signatures of 64-bit hash sets. Implementations
// are safe for concurrent use.
type Signer interface {
	// Sign writes the signature of set into dst (grown if needed) and
	// returns it. Duplicates in set do not change the result.
	Sign(dst Signature, set []uint64) Signature
	// Size is K, the signature length.
	Size() int
}

// MinHash is classic K-permutation MinHash: position i holds
// min over the set of (a_i·x + b_i) mod 2^64, with odd a_i and b_i drawn
// from SplitMix64 seeded by the seed. Cost O(n·K).
type MinHash struct {
	a, b []uint64
}

// NewMinHash returns a classic MinHash of size k with the given seed.
func NewMinHash(k int, seed uint64) *MinHash {
	m := &MinHash{a: make([]uint64, k), b: make([]uint64, k)}
	sm := splitmix64(seed)
	for i := range k {
		m.a[i] = sm.next() | 1
		m.b[i] = sm.next()
	}
	return m
}

// Size returns K.
func (m *MinHash) Size() int { return len(m.a) }

// Sign implements [Signer].
func (m *MinHash) Sign(dst Signature, set []uint64) Signature {
	k := len(m.a)
	dst = fill(dst, k)
	a, b, d := m.a[:k], m.b[:k], dst[:k]
	// Four elements per sweep quarter the loads and stores of the
	// signature; min compiles to conditional moves.
	i := 0
	for ; i+4 <= len(set); i += 4 {
		x, y, z, w := set[i], set[i+1], set[i+2], set[i+3]
		for j := range d {
			aj, bj := a[j], b[j]
			d[j] = min(d[j], aj*x+bj, aj*y+bj, aj*z+bj, aj*w+bj)
		}
	}
	for ; i < len(set); i++ {
		x := set[i]
		for j := range d {
			d[j] = min(d[j], a[j]*x+b[j])
		}
	}
	return dst
}

func fill(dst Signature, k int) Signature {
	if cap(dst) < k {
		dst = make(Signature, k)
	}
	dst = dst[:k]
	for i := range dst {
		dst[i] = Empty
	}
	return dst
}

// OnePermutation is one-permutation MinHash (Li, Owen, Zhang 2012) with
// optimal densification (Shrivastava, ICML 2017): each element is hashed
// once, the hash picks one of K bins and competes for that bin's minimum;
// empty bins then borrow the value of a non-empty bin chosen by a
// bin-specific probe sequence shared by all documents. Cost O(n + K).
type OnePermutation struct {
	k    int
	seed uint64
	// probe seeds the densification probe sequence.
	probe uint64
}

// NewOnePermutation returns a one-permutation MinHash of size k.
func NewOnePermutation(k int, seed uint64) *OnePermutation {
	sm := splitmix64(seed ^ 0x6f6e657065726d) // distinct stream from classic
	return &OnePermutation{k: k, seed: sm.next(), probe: sm.next()}
}

// Size returns K.
func (o *OnePermutation) Size() int { return o.k }

// Sign implements [Signer].
func (o *OnePermutation) Sign(dst Signature, set []uint64) Signature {
	k := o.k
	dst = fill(dst, k)
	d := dst[:k]
	uk := uint64(k)
	for _, x := range set {
		v := Mix64(x ^ o.seed)
		bin := hi64(v, uk)
		d[bin] = min(d[bin], v)
	}
	if len(set) == 0 {
		return dst
	}
	// Densify: bins still Empty borrow from an originally non-empty bin.
	// The probe loop ends because at least one bin is non-empty; the
	// expected number of attempts is K/(number of non-empty bins). The
	// emptiness bitmap lives on the stack for K ≤ 1024.
	var stack [16]uint64
	empty := stack[:]
	if words := (k + 63) / 64; words > len(stack) {
		empty = make([]uint64, words)
	}
	for i, v := range d {
		if v == Empty {
			empty[i/64] |= 1 << (i % 64)
		}
	}
	for i := range d {
		if empty[i/64]&(1<<(i%64)) == 0 {
			continue
		}
		for attempt := uint64(1); ; attempt++ {
			j := hi64(Mix64(o.probe^uint64(i)<<32^attempt), uk)
			if empty[j/64]&(1<<(j%64)) == 0 {
				d[i] = d[j]
				break
			}
		}
	}
	return dst
}
