package sketch

import "math/bits"

// SimHash returns the 64-bit SimHash (Charikar 2002, as used by Manku et al.
// 2007) of a token hash sequence with equal weights: bit j is set when more
// than half of the tokens have bit j set. Counting uses eight 8-bit lanes
// per byte of the hash, flushed every 255 tokens, so a token costs eight
// adds instead of 64.
func SimHash(tokens []uint64) uint64 {
	var counts [64]int32
	var lanes [8]uint64
	pending := 0
	for _, h := range tokens {
		for j := range 8 {
			lanes[j] += spread[byte(h>>(8*j))]
		}
		if pending++; pending == 255 {
			flushLanes(&counts, &lanes)
			pending = 0
		}
	}
	flushLanes(&counts, &lanes)
	half := int32(len(tokens))
	var fp uint64
	for j, c := range counts {
		if 2*c > half {
			fp |= 1 << j
		}
	}
	return fp
}

// spread[x] has byte lane i equal to bit i of x.
var spread = func() (t [256]uint64) {
	for x := range 256 {
		for i := range 8 {
			if x&(1<<i) != 0 {
				t[x] |= 1 << (8 * i)
			}
		}
	}
	return t
}()

func flushLanes(counts *[64]int32, lanes *[8]uint64) {
	for j, l := range lanes {
		for i := range 8 {
			counts[8*j+i] += int32(byte(l >> (8 * i)))
		}
		lanes[j] = 0
	}
}

// SimHashWeighted returns the SimHash of tokens with token weights from
// weight (for example idf): bit j is set when the weights of tokens with
// bit j set outweigh those without.
func SimHashWeighted(tokens []uint64, weight func(uint64) float64) uint64 {
	var v [64]float64
	for _, h := range tokens {
		w := weight(h)
		for j := range 64 {
			if h&(1<<j) != 0 {
				v[j] += w
			} else {
				v[j] -= w
			}
		}
	}
	var fp uint64
	for j, x := range v {
		if x > 0 {
			fp |= 1 << j
		}
	}
	return fp
}

// Hamming returns the number of differing bits of two fingerprints.
func Hamming(a, b uint64) int { return bits.OnesCount64(a ^ b) }

// SimHashBlocks splits fp into k+1 contiguous bit blocks (sizes differ by at
// most one, low bits first) and writes block i's value into dst[i]. Two
// fingerprints within Hamming distance k agree on at least one block
// (pigeonhole), which is what Manku-style lookup tables index: table i maps
// block i to documents. k must be in [0, 63].
func SimHashBlocks(dst []uint64, fp uint64, k int) []uint64 {
	dst = dst[:0]
	n := k + 1
	shift := 0
	for i := range n {
		width := 64 / n
		if i < 64%n {
			width++
		}
		mask := uint64(1)<<width - 1
		if width == 64 {
			mask = ^uint64(0)
		}
		dst = append(dst, fp>>shift&mask)
		shift += width
	}
	return dst
}
