package pipeline

import "github.com/neardup/neardup/sketch"

// hashBits is a set of anchors' stored hashes, a bit for each value of
// sketch.StoredBits bits (what stored and decoded features hold), so
// that the index stage's rules test a candidate's anchors against a
// document's without a map per call; clear empties it in the time it
// took to fill. Wider values (features built by hand) go to a map.
type hashBits struct {
	bits []uint64
	in   []uint32 // the values set, to clear
	wide map[uint32]bool
}

// addAnchors adds the stored hashes (low 32 bits) of as.
func (s *hashBits) addAnchors(as []sketch.Anchor) {
	for _, a := range as {
		s.add(uint32(a.Hash))
	}
}

func (s *hashBits) add(h uint32) {
	if h >= 1<<sketch.StoredBits {
		if s.wide == nil {
			s.wide = map[uint32]bool{}
		}
		s.wide[h] = true
		return
	}
	if s.bits == nil {
		s.bits = make([]uint64, 1<<sketch.StoredBits/64)
	}
	if w, b := h/64, uint64(1)<<(h%64); s.bits[w]&b == 0 {
		s.bits[w] |= b
		s.in = append(s.in, h)
	}
}

func (s *hashBits) has(h uint32) bool {
	if h >= 1<<sketch.StoredBits {
		return s.wide[h]
	}
	return s.bits != nil && s.bits[h/64]&(1<<(h%64)) != 0
}

// clear empties s.
func (s *hashBits) clear() {
	for _, h := range s.in {
		s.bits[h/64] = 0
	}
	s.in = s.in[:0]
	clear(s.wide)
}
