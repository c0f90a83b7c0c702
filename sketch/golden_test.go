package sketch

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
)

// update rewrites the golden files of this package:
//
//	go test ./sketch -run Golden -update
var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// goldenFile compares got with testdata/name, or writes it with -update.
func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	path := "testdata/" + name
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./sketch -run Golden -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs from what this build writes, first at line %d:\nwrites: %s\ngolden: %s\n(a format change needs a new encoding version; -update only once it has one)", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs from what this build writes: %d lines, golden %d", path, len(gl), len(wl))
	}
}

// TestFeaturesGolden pins the storage encoding of features (version 5)
// byte for byte: fixed documents are sketched and encoded under the
// profiles' storage limits, and the bytes must be those of
// testdata/features-v5.golden, which in turn decode to what this build
// stores. A change of the encoding that keeps the version fails here.
func TestFeaturesGolden(t *testing.T) {
	web := DefaultConfig()
	web.PassageWords = 40
	sent := web
	sent.KeepText = 1 << 20
	sent.Sentence = SentenceConfig{On: true}.WithDefaults()
	texts := []struct{ name, text string }{
		{"short", "The city council voted on Tuesday to fund the repair of the old harbour bridge, " +
			"closed since the storm of 1998; work starts in May and costs €4.2 million."},
		{"unicode", "Ça n’a pas d’importance: «naïve» façades — Ørsted, Łódź, Straße; 東京 and ΑΘΗΝΑ. " +
			"Numbers 3,14159 and dates 2026-11-23 stay as words."},
		{"long", string(syntheticDoc(rand.New(rand.NewPCG(37, 5)), 6000))},
	}
	profiles := []struct {
		name string
		cfg  Config
		lim  Limits
	}{
		{"web", web, Limits{MaxShingles: 256, Passages: true}},
		{"books", web, Limits{MaxShingles: 4096, MaxUnique: 16384, IMatch: true, SimHash: true, Passages: true}},
		{"sentence", sent, Limits{Sentences: true}},
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "# features encoding version %d: profile/document, then the bytes in hex\n", encodingVersion)
	for _, p := range profiles {
		s, err := New(p.cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tx := range texts {
			var f, stored Features
			if err := s.Sketch([]byte(tx.text), &f); err != nil {
				t.Fatal(err)
			}
			b := s.Encode(nil, &f, &stored, p.lim)
			if b[0] != encodingVersion {
				t.Fatalf("%s/%s: version %d", p.name, tx.name, b[0])
			}
			// The bytes decode to the stored features Encode reports.
			var dec Features
			if err := dec.UnmarshalBinary(b); err != nil {
				t.Fatalf("%s/%s: %v", p.name, tx.name, err)
			}
			if !reflect.DeepEqual(normalized(dec), normalized(stored)) {
				t.Errorf("%s/%s: the record decodes to other features than Encode stores", p.name, tx.name)
			}
			fmt.Fprintf(&out, "== %s/%s %d bytes\n", p.name, tx.name, len(b))
			h := hex.EncodeToString(b)
			for len(h) > 0 {
				n := min(len(h), 96)
				out.WriteString(h[:n] + "\n")
				h = h[n:]
			}
		}
	}
	goldenFile(t, "features-v5.golden", out.Bytes())
}

// normalized makes empty slices nil, so that features compare by content.
func normalized(f Features) Features {
	v := reflect.ValueOf(&f).Elem()
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Slice:
			if v.Len() == 0 && v.CanSet() {
				v.Set(reflect.Zero(v.Type()))
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Field(i).CanSet() {
					walk(v.Field(i))
				}
			}
		}
	}
	walk(v)
	return f
}
