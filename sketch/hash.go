package sketch

import "math/bits"

// The token hash is FNV-1a 64 over the token's normalized UTF-8 bytes,
// finished with the SplitMix64 finalizer so that every output bit depends on
// every input bit (plain FNV-1a has weak high bits for short inputs).
// It is frozen: stored signatures, band keys and unique-word sequences depend
// on it, and golden vectors in hash_test.go pin it. Do not change it without
// bumping index.SchemaVersion.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// shinglePrime multiplies the rolling polynomial over token hashes that
// identifies a word shingle (an odd 64-bit constant, the golden ratio).
const shinglePrime = 0x9e3779b97f4a7c15

// Mix64 is the SplitMix64 finalizer: a bijection on uint64 with full
// avalanche. It is part of the frozen hash definition.
func Mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// TokenHash returns the frozen 64-bit hash of one normalized token.
func TokenHash(tok []byte) uint64 {
	h := uint64(fnvOffset64)
	for _, c := range tok {
		h ^= uint64(c)
		h *= fnvPrime64
	}
	return Mix64(h)
}

// ShingleHash returns the frozen hash of a word shingle given its token
// hashes in order: Mix64 of the polynomial Σ t_j·P^(w-1-j) mod 2^64 with
// P = 0x9e3779b97f4a7c15. The polynomial form lets [Sketcher] roll it over a
// document in O(1) per shingle; this function is the reference.
func ShingleHash(tokens []uint64) uint64 {
	var s uint64
	for _, t := range tokens {
		s = s*shinglePrime + t
	}
	return Mix64(s)
}

// splitmix64 is the SplitMix64 generator step, used to derive per-function
// hash parameters from a seed.
type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	return Mix64(uint64(*s))
}

// hi64 returns the high 64 bits of a·b, i.e. ⌊a·b / 2^64⌋: a fast unbiased
// map of a uniform 64-bit value a onto [0, b).
func hi64(a, b uint64) uint64 {
	hi, _ := bits.Mul64(a, b)
	return hi
}
