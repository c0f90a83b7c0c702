package sketch

// Anchor is a selected shingle of a document: its hash and its position
// in the document's shingle sequence (shingle i starts at token i).
type Anchor struct {
	Hash uint64
	Pos  uint32
}

// WinnowWindow returns the winnowing window w that guarantees a shared
// anchor for every shared run of at least t tokens when shingles are k
// tokens wide: t = w + k − 1 (Schleimer, Wilkerson and Aiken, SIGMOD 2003).
// It is at least 1.
func WinnowWindow(t, k int) int { return max(t-k+1, 1) }

// Winnow appends to dst the anchors robust winnowing selects from hashes
// (a document's shingle hashes in document order) with window w: in every
// window of w consecutive hashes the minimum is selected (the rightmost one
// on ties), and a selection is recorded once however many windows select
// it. A sequence shorter than w is one window.
//
// Guarantee: two documents that share a run of at least w consecutive
// shingles (w + k − 1 tokens for k-token shingles) both select the minimum
// of a window inside that run, so they share an anchor hash. The expected
// density is 2/(w+1) of the positions for random hashes.
//
// It runs in O(len(hashes)) with a monotonic deque kept in scratch, which
// may be nil; the grown scratch is returned for reuse.
func Winnow(dst []Anchor, hashes []uint64, w int, scratch []uint32) ([]Anchor, []uint32) {
	n := len(hashes)
	if n == 0 {
		return dst, scratch
	}
	w = max(w, 1)
	// dq[head:] holds the positions that can still be a window's
	// minimum, their hashes strictly increasing from front to back; an
	// equal hash replaces the earlier position (rightmost minimum).
	dq := scratch[:0]
	head := 0
	last := -1
	for i := range n {
		h := hashes[i]
		for len(dq) > head && hashes[dq[len(dq)-1]] >= h {
			dq = dq[:len(dq)-1]
		}
		dq = append(dq, uint32(i))
		if int(dq[head]) <= i-w {
			head++
		}
		// Compact the deque now and then so it stays O(w) long.
		if head > 64 && head*2 > len(dq) {
			dq = append(dq[:0], dq[head:]...)
			head = 0
		}
		if i >= w-1 || i == n-1 {
			if m := int(dq[head]); m != last {
				dst = append(dst, Anchor{Hash: hashes[m], Pos: uint32(m)})
				last = m
			}
		}
	}
	return dst, dq
}
