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
// It keeps the current window's minimum and scans the window again only
// when that minimum leaves it, which for random hashes happens about once
// in w/2 steps: O(len(hashes)) expected, with predictable branches (a
// monotonic deque is O(len(hashes)) in the worst case too, but mispredicts
// its pops; it measured 2–3 times slower on real text). The worst case,
// increasing hashes, is O(len(hashes)·w), bounded by MaxPassageTokens.
func Winnow(dst []Anchor, hashes []uint64, w int) []Anchor {
	n := len(hashes)
	if n == 0 {
		return dst
	}
	w = max(w, 1)
	m, last := 0, -1 // the window's rightmost minimum; the last selected
	for i, h := range hashes {
		switch {
		case h <= hashes[m]:
			// Every hash of the window is at least the previous window's
			// minimum, so h is this window's rightmost minimum.
			m = i
		case m <= i-w:
			// The minimum left the window: find the new one.
			m = i - w + 1
			for j := m + 1; j <= i; j++ {
				if hashes[j] <= hashes[m] {
					m = j
				}
			}
		}
		if (i >= w-1 || i == n-1) && m != last {
			dst = append(dst, Anchor{Hash: hashes[m], Pos: uint32(m)})
			last = m
		}
	}
	return dst
}
