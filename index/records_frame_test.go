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
