package index

import (
	"encoding/binary"
	"fmt"
)

// Lookup records.
//
// A document's verdict is computed after LookupInsert returns, from what
// the lookup found: its candidates, lane hits, common keys and how many
// documents hold them. A member that crashes after the insert and before
// recording the verdict leaves the document stored without one; its
// replay cannot look the document up again as a new document would, since
// the index has moved on: later documents may have made its keys common,
// raised their counts or filled its buckets, and a verdict computed from
// that would not be the one the first attempt, or one uninterrupted run,
// gives. So the lookup is recorded with the document, in the same atomic
// step as its insertion (Redis: the 'l' record beside 'm', 'f', 'v', 'k'
// and 's'; memory: memRecall), and a replay without a verdict is answered
// from it (Result.Recalled): the same candidates (less those removed
// since), lane hits, common anchors and counts. Recording the verdict
// drops it, so it costs memory only while a document is in flight, and a
// few dozen bytes then.
//
// The record (Redis), big-endian:
//
//	byte      lookupVersion (1)
//	copy seq u48 · imatch seq u48 · withheld u32 · common u16 ·
//	dropped u32 · ncand u16 · ncand × (seq u48 · via u8 · hits u16) ·
//	nhot u16 · nhot × (anchor index u16 · documents u8)
//
// where an anchor index is the anchor's place among the document's
// distinct anchors in increasing order (Result.CommonAnchors).

// lookupVersion is the first byte of a lookup record.
const lookupVersion = 1

// memRecall is the memory store's lookup record.
type memRecall struct {
	copy, imatch               uint32 // handles, bigTag for none
	copySeq, imatchSeq         uint64
	cands                      []memRecallCand
	truncated, common, dropped int
	hotIdx, hotDocs            []int
}

type memRecallCand struct {
	h    uint32
	seq  uint64
	via  string
	hits int
}

// keepRecall records a new document's lookup, r, with the document.
func (m *Memory) keepRecall(r *Result, st *entryState) {
	rc := &memRecall{copy: st.copy, copySeq: r.CopySeq, imatch: st.imatch, imatchSeq: r.IMatchSeq,
		truncated: r.Truncated, common: r.Common, dropped: r.Dropped}
	for i, c := range r.Candidates {
		rc.cands = append(rc.cands, memRecallCand{h: st.candH[i], seq: c.Seq, via: c.Via, hits: c.Hits})
	}
	if len(st.hotIdx) > 0 {
		rc.hotIdx = append([]int(nil), st.hotIdx...)
		for _, i := range st.hotIdx {
			rc.hotDocs = append(rc.hotDocs, st.commonHK[m.passage+i])
		}
	}
	l := m.docs.lock(st.self)
	l.Lock()
	if d := m.docs.get(st.self); !d.hasVerdict {
		d.recall = rc
	}
	l.Unlock()
}

// recalled answers a replay from its first attempt's lookup: the
// documents it names that are still alive, with their stored records.
// The entry's stripes are locked.
func (m *Memory) recalled(rc *memRecall, st *entryState) {
	r := st.res
	r.Recalled = true
	st.recalled = rc
	live := func(h uint32, seq uint64) bool {
		return h != bigTag && m.alive(h, st.now) && m.docs.get(h).seq == seq
	}
	if live(rc.copy, rc.copySeq) {
		r.Copy, r.CopySeq = m.docs.get(rc.copy).id, rc.copySeq
	}
	if live(rc.imatch, rc.imatchSeq) {
		r.IMatch, r.IMatchSeq = m.docs.get(rc.imatch).id, rc.imatchSeq
		r.IMatchFeatures, r.IMatchSource, r.IMatchVerdict = m.stored(rc.imatch)
	}
	for _, c := range rc.cands {
		if !live(c.h, c.seq) {
			continue
		}
		cand := Candidate{ID: m.docs.get(c.h).id, Seq: c.seq, Via: c.via, Hits: c.hits}
		cand.Features, cand.Source, cand.Verdict = m.stored(c.h)
		r.Candidates = append(r.Candidates, cand)
	}
	r.Truncated, r.Common, r.Dropped = rc.truncated, rc.common, rc.dropped
}

// lookupRec is a lookup record as the Redis store reads and writes it in
// cluster mode (the single-node script reads and writes it itself).
type lookupRec struct {
	copySeq, imatchSeq         uint64
	truncated, common, dropped int
	cands                      []Candidate // Seq, Via and Hits
	hotIdx, hotDocs            []int       // anchor indices, documents holding each
}

// viaCode is a Via's code in records and replies (see via).
func viaCode(v string) byte {
	switch v {
	case ViaSimHash:
		return 2
	case ViaPassage:
		return 3
	}
	return 1
}

// appendTo appends the record's encoding to dst.
func (l *lookupRec) appendTo(dst []byte) []byte {
	be := binary.BigEndian
	u48 := func(b []byte, v uint64) []byte {
		return append(b, byte(v>>40), byte(v>>32), byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	dst = append(dst, lookupVersion)
	dst = u48(dst, l.copySeq)
	dst = u48(dst, l.imatchSeq)
	dst = be.AppendUint32(dst, uint32(l.truncated))
	dst = be.AppendUint16(dst, uint16(min(l.common, 1<<16-1)))
	dst = be.AppendUint32(dst, uint32(l.dropped))
	dst = be.AppendUint16(dst, uint16(len(l.cands)))
	for _, c := range l.cands {
		dst = u48(dst, c.Seq)
		dst = append(dst, viaCode(c.Via))
		dst = be.AppendUint16(dst, uint16(min(c.Hits, 1<<16-1)))
	}
	dst = be.AppendUint16(dst, uint16(len(l.hotIdx)))
	for k, i := range l.hotIdx {
		dst = be.AppendUint16(dst, uint16(i))
		dst = append(dst, byte(min(l.hotDocs[k], 255)))
	}
	return dst
}

// decodeLookup reads a lookup record.
func decodeLookup(b []byte) (*lookupRec, error) {
	d := decoder{s: string(b)}
	if d.u8() != lookupVersion {
		return nil, fmt.Errorf("index: lookup record: unknown version")
	}
	l := &lookupRec{copySeq: d.u48(), imatchSeq: d.u48(), truncated: int(d.u32()), common: int(d.u16()), dropped: int(d.u32())}
	for range d.u16() {
		l.cands = append(l.cands, Candidate{Seq: d.u48(), Via: via(d.u8()), Hits: int(d.u16())})
	}
	for range d.u16() {
		l.hotIdx = append(l.hotIdx, int(d.u16()))
		l.hotDocs = append(l.hotDocs, int(d.u8()))
	}
	if d.bad || d.p != len(d.s) {
		return nil, fmt.Errorf("index: lookup record of %d bytes: malformed", len(b))
	}
	return l, nil
}
