package pipeline

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/neardup/neardup/verify"
)

// The binary encoding of a verdict record: what the index stores for a
// verdict (RecordVerdicts), about half the bytes of its JSON (on real
// text, 392 → ~200 bytes for a duplicate with three matches), read back
// exactly. A record is the version byte recordBinary, then fields in the
// manner of protocol buffers: a tag (uvarint: field number · 8 + wire
// type) and a value, wire type 0 a uvarint, 2 a uvarint length and that
// many bytes. Zero values are left out. Integers are zigzag varints;
// floats are their IEEE 754 bits with the bytes reversed, as a uvarint,
// so that a round value (1, 0.5) takes two or three bytes; strings that
// are kinds, methods or sentence edits are one small number (knownWords,
// wire type 0), other strings their bytes (wire type 2). A field number
// the reader does not know is skipped, so a record of a newer version
// still reads. Records written as JSON (before this encoding, and by the
// correction path) start with '{' and are read as JSON.
//
// Two shorter forms carry the same values (issue 40; older records, which
// have neither, still read): a cluster that is one of the matches' ids is
// written as that match's place (recClusterMatch, its index + 1), not
// again as a string; a float that is a whole number of thousandths (the
// shares, sentence similarities, and any score that happens to be one) is
// written as that number, a zigzag varint, under its field number +
// milliField, when the number read back has exactly the float's bits; a
// float in [0, 1] that is p/q for counts p ≤ q ≤ 2^20 (the Jaccard and
// containment of sampled shingles, the aligned shares) as q(q+1)/2 + p,
// a varint, under its field number + ratioField, under the same rule.
// On real text this cuts a duplicate's record by about a third.
const recordBinary = 1

// milliField is added to a float field's number when it is written as
// thousandths, ratioField when it is written as a ratio of counts.
const (
	milliField = 32
	ratioField = 64
)

// Field numbers. Record:
const (
	recCluster = iota + 1
	recMatch
	recAbridged
	recTruncated
	recUnverified
	recSettled
	recCommonKeys
	recCommonShare
	recAt
	recSentence
	recSentencesSkipped
	recSentencesDropped
	recSentencesBoilerplate
	// recClusterMatch: the cluster is the id of match value − 1.
	recClusterMatch
	// recListed: how many matches the event listed, when more than the
	// record keeps (a revision needs to know whether it has them all).
	recListed
)

// Match:
const (
	mID = iota + 1
	mKind
	mMethod
	mShare
	mMatchShare
	mJaccard
	mContainmentAB
	mContainmentBA
	mHamming
	mIMatchEqual
	mLCS
	mCS
	mITS
	mEdit
	mAligned
	mAlignedAB
	mAlignedBA
	mPassage
)

// Sentence match and passage:
const (
	sOffset = iota + 1
	sLength
	sMatchID
	sMatchOffset
	sMatchLength
	sSimilarity
	sEdit
)

// knownWords are the strings stored as their index (+1).
var knownWords = []string{
	string(verify.Exact), string(verify.Near), string(verify.Partial),
	string(verify.MethodExact), string(verify.MethodIMatch), string(verify.MethodSimHash), string(verify.MethodJaccard),
	string(verify.MethodContainment), string(verify.MethodLCS), string(verify.MethodEdit), string(verify.MethodPassage),
	"identical", "copy_edit", "number_or_date_changed", "reworded",
}

type recWriter []byte

func (w *recWriter) tag(f, wire int) { *w = binary.AppendUvarint(*w, uint64(f<<3|wire)) }
func (w *recWriter) uint(f int, v uint64) {
	if v != 0 {
		w.tag(f, 0)
		*w = binary.AppendUvarint(*w, v)
	}
}
func (w *recWriter) int(f int, v int64) { w.uint(f, uint64(v<<1^v>>63)) }
func (w *recWriter) float(f int, v float64) {
	if v == 0 && !math.Signbit(v) {
		return // a zero value is left out
	}
	w.floatAlways(f, v)
}

// floatAlways writes v even when it is zero: as thousandths under f +
// milliField when that reads back to the same bits, else its bits.
func (w *recWriter) floatAlways(f int, v float64) {
	if k, ok := milli(v); ok {
		w.tag(f+milliField, 0)
		*w = binary.AppendUvarint(*w, uint64(k<<1^k>>63))
		return
	}
	if p, q, ok := ratio(v); ok {
		w.tag(f+ratioField, 0)
		*w = binary.AppendUvarint(*w, q*(q+1)/2+p)
		return
	}
	w.tag(f, 0)
	*w = binary.AppendUvarint(*w, bits.ReverseBytes64(math.Float64bits(v)))
}

// ratio returns p ≤ q ≤ 2^20, q ≥ 1, such that p/q has the bits of v (a
// score in [0, 1] that is a ratio of counts: shingles in common over
// shingles, aligned tokens over tokens), from the convergents of v's
// continued fraction, or false.
func ratio(v float64) (p, q uint64, ok bool) {
	if !(v >= 0 && v <= 1) || math.Signbit(v) {
		return 0, 0, false
	}
	p0, q0, p1, q1 := uint64(0), uint64(1), uint64(1), uint64(0)
	x := v
	for range 48 {
		a := math.Floor(x)
		if a > 1<<20 {
			break
		}
		p2, q2 := uint64(a)*p1+p0, uint64(a)*q1+q0
		if q2 > 1<<20 {
			break
		}
		if q2 > 0 && math.Float64bits(float64(p2)/float64(q2)) == math.Float64bits(v) {
			return p2, q2, true
		}
		p0, q0, p1, q1 = p1, q1, p2, q2
		if x -= a; x == 0 {
			break
		}
		x = 1 / x
	}
	return 0, 0, false
}

// unratio is ratio's inverse for t = q(q+1)/2 + p, 0 ≤ p ≤ q, 1 ≤ q ≤
// 2^20 (how a ratio is written), or false.
func unratio(t uint64) (float64, bool) {
	if t == 0 || t > (1<<20)*(1<<20+1)/2+1<<20 {
		return 0, false
	}
	q := uint64((math.Sqrt(8*float64(t)+1) - 1) / 2)
	for q*(q+1)/2 > t {
		q--
	}
	for (q+1)*(q+2)/2 <= t {
		q++
	}
	p := t - q*(q+1)/2
	if q == 0 || p > q {
		return 0, false
	}
	return float64(p) / float64(q), true
}

// milli returns k when v is exactly k/1000 (the same bits once read back),
// for |k| < 2^40.
func milli(v float64) (int64, bool) {
	if !(math.Abs(v) < 1<<30) {
		return 0, false
	}
	k := int64(math.Round(v * 1000))
	return k, math.Float64bits(float64(k)/1000) == math.Float64bits(v)
}
func (w *recWriter) bool(f int, v bool) {
	if v {
		w.uint(f, 1)
	}
}
func (w *recWriter) bytes(f int, b []byte) {
	w.tag(f, 2)
	*w = binary.AppendUvarint(*w, uint64(len(b)))
	*w = append(*w, b...)
}
func (w *recWriter) str(f int, s string) {
	if s == "" {
		return
	}
	for i, k := range knownWords {
		if s == k {
			w.tag(f, 0)
			*w = binary.AppendUvarint(*w, uint64(i+1))
			return
		}
	}
	w.bytes(f, []byte(s))
}
func (w *recWriter) floatp(f int, v *float64) {
	if v != nil {
		// Present, even when zero: a pointer score is shown when set.
		w.floatAlways(f, *v)
	}
}
func (w *recWriter) intp(f int, v *int) {
	if v != nil {
		w.tag(f, 0)
		*w = binary.AppendUvarint(*w, uint64(int64(*v)<<1^int64(*v)>>63))
	}
}
func (w *recWriter) boolp(f int, v *bool) {
	if v != nil {
		w.tag(f, 0)
		b := uint64(0)
		if *v {
			b = 1
		}
		*w = binary.AppendUvarint(*w, b)
	}
}

// marshalRecord encodes rec (the binary encoding above).
func marshalRecord(rec *verdictRecord) []byte {
	w := recWriter{recordBinary}
	if rec.Cluster != "" {
		if i := clusterMatch(rec); i >= 0 {
			w.uint(recClusterMatch, uint64(i+1))
		} else {
			w.bytes(recCluster, []byte(rec.Cluster))
		}
	}
	for i := range rec.Matches {
		m := &rec.Matches[i]
		var mw recWriter
		if m.ID != "" {
			mw.bytes(mID, []byte(m.ID))
		}
		mw.str(mKind, m.Kind)
		mw.str(mMethod, m.Method)
		mw.float(mShare, m.Share)
		mw.float(mMatchShare, m.MatchShare)
		sc := &m.Scores
		mw.floatp(mJaccard, sc.Jaccard)
		mw.floatp(mContainmentAB, sc.ContainmentAB)
		mw.floatp(mContainmentBA, sc.ContainmentBA)
		mw.intp(mHamming, sc.Hamming)
		mw.boolp(mIMatchEqual, sc.IMatchEqual)
		mw.intp(mLCS, sc.LCS)
		mw.floatp(mCS, sc.CS)
		mw.floatp(mITS, sc.ITS)
		mw.floatp(mEdit, sc.Edit)
		mw.intp(mAligned, sc.Aligned)
		mw.floatp(mAlignedAB, sc.AlignedAB)
		mw.floatp(mAlignedBA, sc.AlignedBA)
		for _, p := range m.Passages {
			var pw recWriter
			pw.int(sOffset, int64(p.Offset))
			pw.int(sLength, int64(p.Length))
			pw.int(sMatchOffset, int64(p.MatchOffset))
			pw.int(sMatchLength, int64(p.MatchLength))
			mw.bytes(mPassage, pw)
		}
		w.bytes(recMatch, mw)
	}
	w.bool(recAbridged, rec.Abridged)
	w.int(recListed, int64(rec.Listed))
	w.int(recTruncated, int64(rec.Truncated))
	w.int(recUnverified, int64(rec.Unverified))
	w.int(recSettled, int64(rec.Settled))
	w.int(recCommonKeys, int64(rec.CommonKeys))
	w.int(recCommonShare, int64(rec.CommonShare))
	// The decision time is always written: a record without it is not one.
	w.tag(recAt, 0)
	w = binary.AppendUvarint(w, uint64(rec.At<<1^rec.At>>63))
	for _, s := range rec.Sentences {
		var sw recWriter
		sw.int(sOffset, int64(s.Offset))
		sw.int(sLength, int64(s.Length))
		if s.MatchID != "" {
			sw.bytes(sMatchID, []byte(s.MatchID))
		}
		sw.int(sMatchOffset, int64(s.MatchOffset))
		sw.int(sMatchLength, int64(s.MatchLength))
		sw.float(sSimilarity, s.Similarity)
		sw.str(sEdit, s.Edit)
		w.bytes(recSentence, sw)
	}
	w.int(recSentencesSkipped, int64(rec.SentencesSkipped))
	w.int(recSentencesDropped, int64(rec.SentencesDropped))
	w.int(recSentencesBoilerplate, int64(rec.SentencesBoilerplate))
	return w
}

// clusterMatch returns the index of the first match whose id is rec's
// cluster, or −1.
func clusterMatch(rec *verdictRecord) int {
	for i := range rec.Matches {
		if rec.Matches[i].ID == rec.Cluster {
			return i
		}
	}
	return -1
}

// recField is one decoded field: its number, and its value (v for wire
// type 0, b for wire type 2).
type recField struct {
	num  int
	wire int
	v    uint64
	b    []byte
}

var errRecordSyntax = errors.New("malformed binary record")

// recFields calls fn for each field of b.
func recFields(b []byte, fn func(recField) error) error {
	for len(b) > 0 {
		t, n := binary.Uvarint(b)
		if n <= 0 || t>>3 == 0 || t>>3 > math.MaxInt32 {
			return errRecordSyntax
		}
		b = b[n:]
		f := recField{num: int(t >> 3), wire: int(t & 7)}
		switch f.wire {
		case 0:
			f.v, n = binary.Uvarint(b)
			if n <= 0 {
				return errRecordSyntax
			}
			b = b[n:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return errRecordSyntax
			}
			f.b, b = b[n:n+int(l)], b[n+int(l):]
		default:
			return errRecordSyntax
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

func (f recField) int() int { return int(int64(f.v>>1) ^ -int64(f.v&1)) }
func (f recField) float() float64 {
	return math.Float64frombits(bits.ReverseBytes64(f.v))
}

// unmilli turns a field written as thousandths (number − milliField)
// or as a ratio (number − ratioField) into the float field it stands for
// when that is one of floats, and reports whether it did.
func (f *recField) unmilli(floats ...int) bool {
	if f.wire != 0 {
		return false
	}
	switch {
	case f.num > ratioField && slices.Contains(floats, f.num-ratioField):
		v, ok := unratio(f.v)
		if !ok {
			return false
		}
		f.num -= ratioField
		f.v = bits.ReverseBytes64(math.Float64bits(v))
	case f.num > milliField && f.num <= ratioField && slices.Contains(floats, f.num-milliField):
		f.num -= milliField
		f.v = bits.ReverseBytes64(math.Float64bits(float64(f.int()) / 1000))
	default:
		return false
	}
	return true
}
func (f recField) floatp() *float64 { v := f.float(); return &v }
func (f recField) intp() *int       { v := f.int(); return &v }
func (f recField) boolp() *bool     { v := f.v != 0; return &v }
func (f recField) str() (string, error) {
	if f.wire == 2 {
		return string(f.b), nil
	}
	if f.v == 0 || f.v > uint64(len(knownWords)) {
		return "", errRecordSyntax
	}
	return knownWords[f.v-1], nil
}

// want checks a field's wire type.
func (f recField) want(wire int) error {
	if f.wire != wire {
		return errRecordSyntax
	}
	return nil
}

// unmarshalRecord decodes a binary record (after its version byte).
func unmarshalRecord(b []byte) (*verdictRecord, error) {
	rec := &verdictRecord{}
	hasAt := false
	clusterMatch := 0
	err := recFields(b, func(f recField) error {
		var err error
		switch f.num {
		case recClusterMatch:
			clusterMatch = int(min(f.v, math.MaxInt32))
		case recCluster:
			if err = f.want(2); err == nil {
				rec.Cluster = string(f.b)
			}
		case recMatch:
			if err = f.want(2); err == nil {
				var m Match
				err = recFields(f.b, func(g recField) error { return decodeMatchField(&m, g) })
				rec.Matches = append(rec.Matches, m)
			}
		case recAbridged:
			rec.Abridged = f.v != 0
		case recListed:
			rec.Listed = f.int()
		case recTruncated:
			rec.Truncated = f.int()
		case recUnverified:
			rec.Unverified = f.int()
		case recSettled:
			rec.Settled = f.int()
		case recCommonKeys:
			rec.CommonKeys = f.int()
		case recCommonShare:
			rec.CommonShare = f.int()
		case recAt:
			if err = f.want(0); err == nil {
				rec.At, hasAt = int64(f.v>>1)^-int64(f.v&1), true
			}
		case recSentence:
			if err = f.want(2); err == nil {
				var s SentenceMatch
				err = recFields(f.b, func(g recField) error { return decodeSentenceField(&s, g) })
				rec.Sentences = append(rec.Sentences, s)
			}
		case recSentencesSkipped:
			rec.SentencesSkipped = f.int()
		case recSentencesDropped:
			rec.SentencesDropped = f.int()
		case recSentencesBoilerplate:
			rec.SentencesBoilerplate = f.int()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if !hasAt {
		return nil, fmt.Errorf("%w: no decision time", errRecordSyntax)
	}
	if clusterMatch > 0 {
		if clusterMatch > len(rec.Matches) {
			return nil, fmt.Errorf("%w: cluster names match %d of %d", errRecordSyntax, clusterMatch, len(rec.Matches))
		}
		rec.Cluster = rec.Matches[clusterMatch-1].ID
	}
	return rec, nil
}

func decodeMatchField(m *Match, g recField) error {
	var err error
	g.unmilli(mShare, mMatchShare, mJaccard, mContainmentAB, mContainmentBA, mCS, mITS, mEdit, mAlignedAB, mAlignedBA)
	switch g.num {
	case mID:
		if err = g.want(2); err == nil {
			m.ID = string(g.b)
		}
	case mKind:
		m.Kind, err = g.str()
	case mMethod:
		m.Method, err = g.str()
	case mShare:
		m.Share = g.float()
	case mMatchShare:
		m.MatchShare = g.float()
	case mJaccard:
		m.Scores.Jaccard = g.floatp()
	case mContainmentAB:
		m.Scores.ContainmentAB = g.floatp()
	case mContainmentBA:
		m.Scores.ContainmentBA = g.floatp()
	case mHamming:
		m.Scores.Hamming = g.intp()
	case mIMatchEqual:
		m.Scores.IMatchEqual = g.boolp()
	case mLCS:
		m.Scores.LCS = g.intp()
	case mCS:
		m.Scores.CS = g.floatp()
	case mITS:
		m.Scores.ITS = g.floatp()
	case mEdit:
		m.Scores.Edit = g.floatp()
	case mAligned:
		m.Scores.Aligned = g.intp()
	case mAlignedAB:
		m.Scores.AlignedAB = g.floatp()
	case mAlignedBA:
		m.Scores.AlignedBA = g.floatp()
	case mPassage:
		if err = g.want(2); err == nil {
			var p Passage
			err = recFields(g.b, func(h recField) error {
				switch h.num {
				case sOffset:
					p.Offset = h.int()
				case sLength:
					p.Length = h.int()
				case sMatchOffset:
					p.MatchOffset = h.int()
				case sMatchLength:
					p.MatchLength = h.int()
				}
				return nil
			})
			m.Passages = append(m.Passages, p)
		}
	}
	return err
}

func decodeSentenceField(s *SentenceMatch, g recField) error {
	var err error
	g.unmilli(sSimilarity)
	switch g.num {
	case sOffset:
		s.Offset = g.int()
	case sLength:
		s.Length = g.int()
	case sMatchID:
		if err = g.want(2); err == nil {
			s.MatchID = string(g.b)
		}
	case sMatchOffset:
		s.MatchOffset = g.int()
	case sMatchLength:
		s.MatchLength = g.int()
	case sSimilarity:
		s.Similarity = g.float()
	case sEdit:
		s.Edit, err = g.str()
	}
	return err
}
