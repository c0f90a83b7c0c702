package stream

import (
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// agree checks the fast path against encoding/json on one input: when the
// fast path accepts, the full decoder accepts with the same document.
func agree(t *testing.T, d *Decoder, b []byte, key string) (fast bool) {
	t.Helper()
	got, ok := d.decodeFast(b, key)
	want, err := d.decodeFull(b, key)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("fast path accepted %q (key %q) as %+v; encoding/json: %v", b, key, got, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fast path decoded %q (key %q) as\n %+v\nencoding/json as\n %+v", b, key, got, want)
	}
	return true
}

// commonShapes are inputs the fast path must take: the shapes producers
// send.
var commonShapes = []struct{ name, in, key string }{
	{"text", `{"id":"a","text":"hello world"}`, ""},
	{"html", `{"id":"a","html":"<p>hi</p>","url":"https://example.org/x?y=1"}`, ""},
	{"all fields", `{"id":"a","url":"http://x/","text":"t","ts":"2026-01-02T03:04:05.5+02:00","meta":{"k":[1,2.5e3,{"z":null}],"s":"\u00e9"}}`, ""},
	{"epoch ms", `{"id":"a","text":"t","ts":1700000000000}`, ""},
	{"epoch ms string", `{"id":"a","text":"t","ts":"1700000000000"}`, ""},
	{"key fallback", `{"text":"t"}`, "key-7"},
	{"whitespace", " \t{ \"id\" : \"a\" ,\r\n \"text\" : \"t\" }\n", ""},
	{"escapes", `{"id":"a\"b","text":"line\none\ttab \\ \/ \b\f\r \u00e9\u4e16 \ud83d\ude00 \u0000"}`, ""},
	{"raw UTF-8", `{"id":"ünï","text":"Grüße, 世界 😀"}`, ""},
	{"unknown fields", `{"lang":"en","id":"a","extra":{"a":[true,false,null,-0.5e-3,"x\\y"]},"n":-12,"text":"t","empty":[],"o":{}}`, ""},
	{"empty text", `{"id":"a","text":""}`, ""},
	{"empty meta", `{"id":"a","text":"t","meta":{}}`, ""},
}

func TestDecodeFastTakesCommonShapes(t *testing.T) {
	d := NewDecoder(1 << 20)
	for _, tc := range commonShapes {
		t.Run(tc.name, func(t *testing.T) {
			if !agree(t, d, []byte(tc.in), tc.key) {
				_, err := d.decodeFull([]byte(tc.in), tc.key)
				t.Errorf("fast path declined %s (encoding/json: %v)", tc.in, err)
			}
		})
	}
}

// TestDecodeFastAgrees runs the fast path on inputs at the edges of what it
// handles. Those it declines must be the full decoder's (decline is always
// safe); those it accepts must decode as encoding/json does.
func TestDecodeFastAgrees(t *testing.T) {
	d := NewDecoder(1000)
	tests := []struct {
		name, in, key string
		fast          bool // the fast path takes it
	}{
		{"duplicate id", `{"id":"a","id":"b","text":"t"}`, "", false},
		{"case variant key", `{"ID":"a","text":"t"}`, "", false},
		{"case variant after exact", `{"id":"a","Text":"t","text":"u"}`, "", false},
		{"unicode fold of ts", `{"id":"a","text":"t","tſ":"1"}`, "", false},
		{"kelvin is not a field", `{"id":"a","text":"t","\u212a":"1"}`, "", false}, // escaped key: declined
		{"escaped key", `{"\u0069d":"a","text":"t"}`, "", false},
		{"null id", `{"id":null,"text":"t"}`, "k", false},
		{"null meta", `{"id":"a","text":"t","meta":null}`, "", false},
		{"numeric text", `{"id":"a","text":5}`, "", false},
		{"invalid UTF-8 in text", "{\"id\":\"a\",\"text\":\"x\xff\"}", "", false},
		{"invalid UTF-8 in meta", "{\"id\":\"a\",\"text\":\"t\",\"meta\":{\"k\":\"\xff\"}}", "", true},
		{"invalid UTF-8 in unknown", "{\"id\":\"a\",\"text\":\"t\",\"u\":\"\xff\"}", "", true},
		{"lone high surrogate", `{"id":"a","text":"x\ud800y"}`, "", false},
		{"lone low surrogate", `{"id":"a","text":"x\udc00"}`, "", false},
		{"high then non-low", `{"id":"a","text":"\ud800\u0041"}`, "", false},
		{"raw control char", "{\"id\":\"a\",\"text\":\"x\ty\"}", "", false},
		{"bad escape", `{"id":"a","text":"\x"}`, "", false},
		{"short unicode escape", `{"id":"a","text":"\u12"}`, "", false},
		{"trailing object", `{"id":"a","text":"t"} {}`, "", false},
		{"trailing brace", `{"id":"a","text":"t"}}`, "", false},
		{"leading zero", `{"id":"a","text":"t","n":01}`, "", false},
		{"bare minus", `{"id":"a","text":"t","n":-}`, "", false},
		{"dot without digits", `{"id":"a","text":"t","n":1.}`, "", false},
		{"exponent without digits", `{"id":"a","text":"t","n":1e+}`, "", false},
		{"truex", `{"id":"a","text":"t","b":truex}`, "", false},
		{"trailing comma", `{"id":"a","text":"t",}`, "", false},
		{"unclosed", `{"id":"a","text":"t"`, "", false},
		{"deep", `{"id":"a","text":"t","d":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, "", false},
		{"meta array", `{"id":"a","text":"t","meta":[1]}`, "", false},
		{"ts float", `{"id":"a","text":"t","ts":1.5}`, "", false},
		{"ts escaped", `{"id":"a","text":"t","ts":"\u0031"}`, "", false},
		{"ts year 10000", `{"id":"a","text":"t","ts":253402300800000}`, "", false},
		{"both bodies", `{"id":"a","text":"t","html":"h"}`, "", false},
		{"no body", `{"id":"a","url":"u"}`, "", false},
		{"empty object", `{}`, "k", false},
		{"empty id", `{"id":"","text":"t"}`, "k", false},
		{"bad key fallback", `{"text":"t"}`, "\xff", false},
		{"too large", `{"id":"a","text":"` + strings.Repeat("x", 1001) + `"}`, "", false},
		{"at the limit", `{"id":"a","text":"` + strings.Repeat("x", 1000) + `"}`, "", true},
		{"BOM", "\ufeff{\"id\":\"a\",\"text\":\"t\"}", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := agree(t, d, []byte(tc.in), tc.key); got != tc.fast {
				t.Errorf("fast path taken = %v, want %v", got, tc.fast)
			}
		})
	}
}

// TestDecodeFastAgreesOnContractCases runs the differential check on every
// case of TestDecodeJSON's contract.
func TestDecodeFastAgreesOnContractCases(t *testing.T) {
	d := NewDecoder(1000)
	for _, in := range []string{
		`{"id":"a","text":"hello world","url":"http://x/","ts":"2026-01-02T03:04:05Z","meta":{"k":1}}`,
		`{"id":"c","text":"x","ts":1700000000000}`,
		`{"id":"b","ts":9223372036854775807,"text":"x"}`,
		`{"id":"b","ts":-62167219200001,"text":"x"}`,
		`{"id":"b","ts":"0000-01-01T00:30:00+01:00","text":"x"}`,
		`{"id":"b","ts":253402300799999,"text":"x"}`,
		`{"id":"b","ts":"0001-01-01T00:00:00Z","text":"x"}`,
		`{"id":"x\\ud800","text":"x"}`,
		`{"id":"x\ufffd","text":"x"}`,
		`{"id":"` + strings.Repeat("x", 1025) + `","text":"x"}`,
		`["a"]`, ``, `{"id":"a","text":`,
	} {
		for _, key := range []string{"", "k"} {
			agree(t, d, []byte(in), key)
		}
	}
}

func FuzzDecodeFast(f *testing.F) {
	for _, tc := range commonShapes {
		f.Add([]byte(tc.in), tc.key)
	}
	f.Add([]byte(`{"id":"a","id":"b","text":"t"}`), "")
	f.Add([]byte(`{"Id":"a","text":"t","meta":{"a":[1,{"b":"\u00e9"}]}}`), "k")
	f.Add([]byte(`{"id":"a","text":"\ud800\udc00\ud800","ts":"1"}`), "")
	f.Add([]byte("{\"id\":\"a\",\"html\":\"x\xed\xa0\x80\"}"), "")
	d := NewDecoder(1 << 16)
	f.Fuzz(func(t *testing.T, b []byte, key string) {
		agree(t, d, b, key)
	})
}

// benchDoc is a ~5 KB document of the common shape, with escapes and
// non-ASCII letters in its text.
func benchDoc() []byte {
	var text strings.Builder
	for text.Len() < 5000 {
		text.WriteString("The quick brown fox jumps over the lazy dog; «naïve» café.\n\"Quoted\" words\tand tabs. ")
	}
	b, err := json.Marshal(map[string]any{
		"id": "https://example.org/papers/12345", "url": "https://example.org/papers/12345",
		"text": text.String(), "ts": 1700000000000, "meta": map[string]any{"crawl": "2026-11", "depth": 3},
	})
	if err != nil {
		panic(err)
	}
	return b
}

func BenchmarkDecodeJSON(b *testing.B) {
	d := NewDecoder(1 << 20)
	doc := benchDoc()
	for _, bc := range []struct {
		name   string
		decode func([]byte, string) (Document, error)
	}{
		{"fast", d.DecodeJSON},
		{"full", d.decodeFull},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.decode(doc, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSpecialWord checks the eight-bytes-at-a-time test of scanString
// against the byte table: never "none" when a byte is special, for every
// byte value at every position among random ordinary and high bytes.
func TestSpecialWord(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ordinary := func() byte {
		for {
			if c := byte(rng.UintN(256)); !special[c] {
				return c
			}
		}
	}
	misses := 0
	for c := range 256 {
		for pos := range 8 {
			for range 50 {
				var w [8]byte
				for i := range w {
					w[i] = ordinary()
				}
				w[pos] = byte(c)
				got := specialWord(binary.LittleEndian.Uint64(w[:]))
				if special[c] && !got {
					t.Fatalf("% x: byte %#x at %d is special, specialWord says none", w, c, pos)
				}
				if !special[c] && got {
					misses++ // a false alarm only costs the byte loop
				}
			}
		}
	}
	if misses > 256*8*50/10 {
		t.Errorf("%d false alarms in %d words: the word test saves little", misses, 256*8*50)
	}
}
