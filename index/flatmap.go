package index

// flatMap is the uint32 → uint32 map of a stripe's single-member buckets
// (memGenStripe.one): open addressing with linear probing over one slice
// of 8-byte slots, key in the high half and value+1 in the low half (0 is
// an empty slot). A lookup reads one cache line where a Go map reads a
// directory, a table and a group: the memory index's bucket lookups are
// cache misses, and on real text this halves their cost. Values must be
// below 2^32−1 (handles and bigTag are). The zero flatMap is empty and
// ready to use; it is not safe for concurrent use (its stripe lock guards
// it).
type flatMap struct {
	slots []uint64
	n     int
	shift uint8 // 32 − log2(len(slots))
}

// flatMapMinSlots is the size of a flatMap's first table.
const flatMapMinSlots = 16

// home returns the slot a key probes first: Fibonacci hashing of the key
// (keys are hash bits already, but tests and callers may pass small ones).
func (m *flatMap) home(k uint32) uint32 { return (k * 0x9E3779B9) >> m.shift }

// get returns the value of key k.
func (m *flatMap) get(k uint32) (uint32, bool) {
	if m.n == 0 {
		return 0, false
	}
	mask := uint32(len(m.slots) - 1)
	for i := m.home(k); ; i = (i + 1) & mask {
		s := m.slots[i]
		if s == 0 {
			return 0, false
		}
		if uint32(s>>32) == k {
			return uint32(s) - 1, true
		}
	}
}

// peek returns the slot key k probes first (0 for an empty map): reading
// it brings the line a get will read into the cache.
func (m *flatMap) peek(k uint32) uint64 {
	if m.n == 0 {
		return 0
	}
	return m.slots[m.home(k)&uint32(len(m.slots)-1)]
}

// set sets key k to v.
func (m *flatMap) set(k, v uint32) {
	if (m.n+1)*4 > len(m.slots)*3 {
		m.grow()
	}
	mask := uint32(len(m.slots) - 1)
	slot := uint64(k)<<32 | uint64(v+1)
	for i := m.home(k); ; i = (i + 1) & mask {
		s := m.slots[i]
		if s == 0 {
			m.slots[i] = slot
			m.n++
			return
		}
		if uint32(s>>32) == k {
			m.slots[i] = slot
			return
		}
	}
}

// del removes key k, shifting the later members of its probe run back so
// that no tombstones are needed.
func (m *flatMap) del(k uint32) {
	if m.n == 0 {
		return
	}
	mask := uint32(len(m.slots) - 1)
	i := m.home(k)
	for ; ; i = (i + 1) & mask {
		s := m.slots[i]
		if s == 0 {
			return
		}
		if uint32(s>>32) == k {
			break
		}
	}
	// Backward-shift deletion: move each later slot of the run into the
	// hole when its home is not cyclically within (hole, slot].
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := m.slots[j]
		if s == 0 {
			break
		}
		h := m.home(uint32(s >> 32))
		if (j-h)&mask >= (j-i)&mask {
			m.slots[i] = s
			i = j
		}
	}
	m.slots[i] = 0
	m.n--
}

func (m *flatMap) grow() {
	old := m.slots
	size := max(flatMapMinSlots, 2*len(old))
	bits := uint8(0)
	for 1<<bits < size {
		bits++
	}
	m.slots, m.n, m.shift = make([]uint64, size), 0, 32-bits
	mask := uint32(size - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := m.home(uint32(s >> 32))
		for m.slots[i] != 0 {
			i = (i + 1) & mask
		}
		m.slots[i] = s
		m.n++
	}
}

// bigMap is the map of a stripe's larger buckets (memGenStripe.big): a
// flatMap from the bucket's key to its index in a slice of buckets, whose
// freed indices are reused. The zero bigMap is empty and ready to use; its
// stripe lock guards it.
type bigMap struct {
	idx  flatMap
	b    []*memBucket
	free []uint32
}

// get returns bucket f.
func (m *bigMap) get(f uint32) (*memBucket, bool) {
	i, ok := m.idx.get(f)
	if !ok {
		return nil, false
	}
	return m.b[i], true
}

// set sets bucket f to b.
func (m *bigMap) set(f uint32, b *memBucket) {
	if i, ok := m.idx.get(f); ok {
		m.b[i] = b
		return
	}
	var i uint32
	if n := len(m.free); n > 0 {
		i, m.free = m.free[n-1], m.free[:n-1]
		m.b[i] = b
	} else {
		i = uint32(len(m.b))
		m.b = append(m.b, b)
	}
	m.idx.set(f, i)
}

// del removes bucket f.
func (m *bigMap) del(f uint32) {
	i, ok := m.idx.get(f)
	if !ok {
		return
	}
	m.b[i] = nil
	m.free = append(m.free, i)
	m.idx.del(f)
}
