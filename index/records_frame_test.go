package index

import (
	"bytes"
	"testing"
)

// TestFrameFeatures: a features record carries its keys record and gives
// back both exactly; features alone stay as given unless they start with
// the frame's mark; a frame cut short is reported, never read past.
func TestFrameFeatures(t *testing.T) {
	cases := []struct {
		name        string
		feat, keys  []byte
		wantFramed  bool
		wantSameVal bool
	}{
		{"features and keys", []byte{5, 1, 2, 3}, []byte{4, 7, 22, 9}, true, false},
		{"keys alone", nil, []byte{4, 12, 22}, true, false},
		{"features alone", []byte{5, 1, 2}, nil, false, true},
		{"none", []byte{}, nil, false, true},
		{"features that start with the mark", []byte{featKeys, 1}, nil, true, false},
	}
	for _, c := range cases {
		v := frameFeatures(c.feat, c.keys)
		if framed := len(v) > 0 && v[0] == featKeys; framed != c.wantFramed {
			t.Errorf("%s: framed %v, want %v", c.name, framed, c.wantFramed)
		}
		if c.wantSameVal && !bytes.Equal(v, c.feat) {
			t.Errorf("%s: value %q, want the features %q", c.name, v, c.feat)
		}
		f, k, ok := unframeFeatures(v)
		if !ok || !bytes.Equal(f, c.feat) || !bytes.Equal(k, c.keys) || (c.keys == nil) != (k == nil) {
			t.Errorf("%s: unframed %q %q %v, want %q %q", c.name, f, k, ok, c.feat, c.keys)
		}
		if !bytes.Equal(CarriedKeys(v), c.keys) {
			t.Errorf("%s: CarriedKeys %q, want %q", c.name, CarriedKeys(v), c.keys)
		}
	}
	v := frameFeatures([]byte{5, 1, 2}, []byte{4, 7, 22, 9, 9})
	for cut := 1; cut < 7; cut++ {
		if _, _, ok := unframeFeatures(v[:cut]); ok {
			t.Errorf("a frame cut to %d bytes read", cut)
		}
	}
}

// TestDigestRefs: a keys record carried with features that hold its
// digests refers to them and reads back the same record; one whose
// features lack a digest writes them out; a reference outside the
// features is reported.
func TestDigestRefs(t *testing.T) {
	r := &Redis{p: webParams}
	for _, lane := range []bool{false, true} {
		e := full(entry(r.p, "d", nil), 0x0123456789abcdef, key("d", 1), key("d", 2))
		k := r.encodeKeys(&e)
		if lane {
			k = append([]byte{keysGroupsVersion, 4 | laneOnly, maxGroupBits}, e.Content[:]...)
			k = append(k, 0)
		}
		ref := r.refDigests(k, e.Features)
		if ref[1]&(7*digestRefs) == 0 || len(ref) >= len(k) {
			t.Fatalf("lane %v: refDigests = %x for a record of %d bytes", lane, ref, len(k))
		}
		got, ok := r.inlineDigests(ref, e.Features)
		if !ok || !bytes.Equal(got, k) {
			t.Errorf("lane %v: inlineDigests = %x, %v; want %x", lane, got, ok, k)
		}
		if _, ok := r.inlineDigests(ref, e.Features[:5]); ok {
			t.Errorf("lane %v: a reference past the features read", lane)
		}
		if got := r.refDigests(k, []byte("features without digests")); !bytes.Equal(got, k) {
			t.Errorf("lane %v: digests referenced in features that lack them: %x", lane, got)
		}
		// Features that hold only the content digest, as the web
		// profile's do.
		some := r.refDigests(k, append([]byte("header "), e.Content[:]...))
		if some[1]&(7*digestRefs) != 4*digestRefs || len(some) != len(k)-15 {
			t.Errorf("lane %v: only the content digest referenced: flags %x, %d bytes of %d", lane, some[1], len(some), len(k))
		}
		if got, ok := r.inlineDigests(some, append([]byte("header "), e.Content[:]...)); !ok || !bytes.Equal(got, k) {
			t.Errorf("lane %v: inlineDigests of the content reference = %x, %v", lane, got, ok)
		}
		if h, b, d, a, err := KeysRecordSizes(ref, r.p.Bands); err != nil || h+b+d+a != len(ref) {
			t.Errorf("lane %v: KeysRecordSizes = %d %d %d %d, %v; want %d bytes in all", lane, h, b, d, a, err, len(ref))
		}
	}
	// What Remove reads back from a features record.
	e := full(entry(r.p, "d", nil), 7, key("d", 1))
	feat, k, ok := unframeFeatures(r.featuresRecord(&e))
	if !ok || !bytes.Equal(feat, e.Features) {
		t.Fatalf("features record: %q %v", feat, ok)
	}
	if got, ok := r.inlineDigests(k, feat); !ok || !bytes.Equal(got, r.encodeKeys(&e)) {
		t.Errorf("carried keys record %x, want %x", got, r.encodeKeys(&e))
	}
}
