package pipeline

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/neardup/neardup/verify"
)

// fill sets every field reachable from v to a value that is not zero,
// drawn from rnd: a field added to the record (or to Match, Scores,
// Passage, SentenceMatch) that the binary encoding does not carry makes
// TestRecordBinaryRoundTrip fail.
func fill(v reflect.Value, rnd *rand.Rand) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), rnd)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), rnd)
			}
		}
	case reflect.Slice:
		n := 1 + rnd.IntN(3)
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fill(v.Index(i), rnd)
		}
	case reflect.String:
		words := append([]string{"o002972", "d002972-37", "ünïcode\x00bytes"}, knownWords...)
		v.SetString(words[rnd.IntN(len(words))])
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		vals := []int64{1, -1, 636, 1795652975494, -1 << 40, math.MaxInt64, math.MinInt64}
		v.SetInt(vals[rnd.IntN(len(vals))])
	case reflect.Float64:
		vals := []float64{1, 0.5625, 0.8468708388814914, 1e-300, -2.5, math.SmallestNonzeroFloat64, 0.997, -0.001, math.Copysign(0, -1), 1e12 + 0.5, 1.0 / 3, 636.0 / 751, 1048575.0 / 1048576, math.Pi / 4}
		v.SetFloat(vals[rnd.IntN(len(vals))])
	default:
		panic("fill: unhandled kind " + v.Kind().String())
	}
}

// TestRecordBinaryRoundTrip: every field of a verdict record comes back
// exactly from the binary encoding, for records with every field set,
// with none, and with zero scores present (a pointer score of 0 is shown
// in events, so it must survive).
func TestRecordBinaryRoundTrip(t *testing.T) {
	zero := 0.0
	zi := 0
	no := false
	cases := []*verdictRecord{
		{At: 1700000000000},
		{At: -5, Matches: []Match{{ID: "x", Kind: "exact", Method: "exact"}}},
		{At: 1, Matches: []Match{{ID: "y", Kind: "near", Method: "jaccard", Scores: verify.Scores{Jaccard: &zero, ContainmentAB: &zero, Hamming: &zi, IMatchEqual: &no, LCS: &zi, Aligned: &zi, AlignedBA: &zero}}}},
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		rec := &verdictRecord{}
		fill(reflect.ValueOf(rec).Elem(), rnd)
		cases = append(cases, rec)
	}
	for i, rec := range cases {
		b := marshalRecord(rec)
		got, err := decodeRecord("id", b)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, rec) {
			w, _ := json.Marshal(rec)
			g, _ := json.Marshal(got)
			t.Fatalf("case %d: round trip\n got  %s\n want %s", i, g, w)
		}
	}
}

// TestRecordBinarySize: a duplicate's record on real text (three matches
// with their scores, as the index keeps it) takes well under its JSON.
func TestRecordBinarySize(t *testing.T) {
	const js = `{"c":"o002972","m":[{"id":"o002972","kind":"near","method":"jaccard","scores":{"jaccard":0.735,"aligned":636,"aligned_ab":0.8468708388814914,"aligned_ba":0.8468708388814914},"share":1,"match_share":1},{"id":"d002972-37","kind":"near","method":"jaccard","scores":{"jaccard":0.5625,"aligned":543,"aligned_ab":0.7230359520639148,"aligned_ba":0.7259358288770054},"share":1,"match_share":1},{"id":"d002972-10","kind":"partial","method":"passage","scores":{"jaccard":0.5614035087719298,"containment_ab":0.7068965517241379,"aligned":542,"aligned_ab":0.7217043941411452,"aligned_ba":0.7207446808510638},"share":0.997,"match_share":0.996}],"b":true,"k":40,"h":956,"a":1795652975494}`
	rec, err := decodeRecord("id", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	b := marshalRecord(rec)
	if again, err := decodeRecord("id", b); err != nil || !reflect.DeepEqual(again, rec) {
		t.Fatalf("round trip: %+v, %v", again, err)
	}
	if 2*len(b) > len(js)+len(js)/4 {
		t.Errorf("binary record %d bytes, JSON %d: want at most 5/8 of it", len(b), len(js))
	}
	t.Logf("JSON %d bytes, binary %d", len(js), len(b))
}

// TestRecordBinaryCompact: a cluster that is a match's id is written as
// the match's place and shares as thousandths, and a record written in
// the longer form (before them) still reads the same.
func TestRecordBinaryCompact(t *testing.T) {
	j := 0.735
	rec := &verdictRecord{Cluster: "d2", At: 7, Matches: []Match{
		{ID: "d1", Kind: "near", Method: "jaccard", Share: 0.997, MatchShare: 1, Scores: verify.Scores{Jaccard: &j}},
		{ID: "d2", Kind: "partial", Method: "passage", Share: 0.25, MatchShare: 0.8468708388814914},
	}}
	b := marshalRecord(rec)
	err := recFields(b[1:], func(f recField) error {
		if f.num == recCluster {
			t.Errorf("cluster written as a string: %q", f.b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	long := recWriter{recordBinary}
	long.bytes(recCluster, []byte("d2"))
	for _, m := range rec.Matches {
		var mw recWriter
		mw.bytes(mID, []byte(m.ID))
		mw.str(mKind, m.Kind)
		mw.str(mMethod, m.Method)
		for f, v := range map[int]float64{mShare: m.Share, mMatchShare: m.MatchShare} {
			mw.uint(f, bits.ReverseBytes64(math.Float64bits(v)))
		}
		if m.Scores.Jaccard != nil {
			mw.uint(mJaccard, bits.ReverseBytes64(math.Float64bits(*m.Scores.Jaccard)))
		}
		long.bytes(recMatch, mw)
	}
	long.tag(recAt, 0)
	long = binary.AppendUvarint(long, 14)
	for name, enc := range map[string][]byte{"compact": b, "long": long} {
		got, err := decodeRecord("id", enc)
		if err != nil || !reflect.DeepEqual(got, rec) {
			t.Errorf("%s form: %+v, %v", name, got, err)
		}
	}
	if len(b) >= len(long)-15 {
		t.Errorf("compact record %d bytes, long form %d", len(b), len(long))
	}
	t.Logf("compact %d bytes, long form %d", len(b), len(long))
	// A cluster naming a match the record does not have is an error.
	bad := append(recWriter{recordBinary}, b[1:]...)
	bad.uint(recClusterMatch, 9)
	if _, err := decodeRecord("id", bad); err == nil {
		t.Error("cluster naming match 9 of 2 decoded")
	}
}

// TestRecordRatio: a score that is a ratio of counts is found as one and
// reads back with the same bits; other floats are not taken for one.
func TestRecordRatio(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		q := 1 + rnd.Uint64N(1<<20)
		p := rnd.Uint64N(q + 1)
		v := float64(p) / float64(q)
		a, b, ok := ratio(v)
		if !ok {
			t.Fatalf("%d/%d = %v: not found as a ratio", p, q, v)
		}
		got, ok := unratio(b*(b+1)/2 + a)
		if !ok || math.Float64bits(got) != math.Float64bits(v) {
			t.Fatalf("%d/%d: read back %v (%d/%d), want %v", p, q, got, a, b, v)
		}
	}
	for _, v := range []float64{math.Pi / 4, 1.5, -0.25, math.Copysign(0, -1), math.NaN(), math.Inf(1), 0x1p-40} {
		if p, q, ok := ratio(v); ok && math.Float64bits(float64(p)/float64(q)) != math.Float64bits(v) {
			t.Errorf("ratio(%v) = %d/%d", v, p, q)
		}
	}
	for _, tv := range []uint64{0, math.MaxUint64, 1 << 62} {
		if v, ok := unratio(tv); ok {
			t.Errorf("unratio(%d) = %v", tv, v)
		}
	}
}

// TestRecordBinaryDamaged: cut or damaged binary records are errors
// wrapping errBadVerdict or records, never panics; fields of a newer
// version are skipped.
func TestRecordBinaryDamaged(t *testing.T) {
	rec := &verdictRecord{}
	fill(reflect.ValueOf(rec).Elem(), rand.New(rand.NewPCG(3, 4)))
	b := marshalRecord(rec)
	for cut := 1; cut < len(b); cut++ {
		decodeRecord("id", b[:cut]) // no panic; a cut may still parse
	}
	if _, err := decodeRecord("id", b[:1]); err == nil {
		t.Error("version byte alone decoded")
	}
	rnd := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		d := append([]byte(nil), b...)
		for range 1 + rnd.IntN(4) {
			d[1+rnd.IntN(len(d)-1)] = byte(rnd.Uint32())
		}
		decodeRecord("id", d)
	}
	// A field number this version does not know (99, both wire types).
	newer := binary.AppendUvarint(append([]byte(nil), b...), 99<<3) // wire type 0
	newer = append(newer, 7)
	newer = binary.AppendUvarint(newer, 99<<3|2)
	newer = append(newer, 2, 'h', 'i')
	got, err := decodeRecord("id", newer)
	if err != nil || !reflect.DeepEqual(got, rec) {
		t.Errorf("record with newer fields: %v", err)
	}
	for _, bad := range [][]byte{{recordBinary}, {recordBinary, 0}, {recordBinary, recAt<<3 | 2, 5}} {
		if _, err := decodeRecord("id", bad); err == nil {
			t.Errorf("decodeRecord(%q) succeeded", bad)
		}
	}
}
