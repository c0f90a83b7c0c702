package sketch

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// benchDoc is a 5 KB English-like ASCII document, the size the performance
// targets are stated for.
func benchDoc() []byte { return syntheticDoc(rand.New(rand.NewPCG(7, 7)), 5000) }

// BenchmarkTokenizeShingle measures the ASCII fast path: normalize,
// tokenize and hash word 5-shingles, as the raw stream ("stream") and as
// the sorted distinct set that exact verification stores ("set").
func BenchmarkTokenizeShingle(b *testing.B) {
	doc := benchDoc()
	s, err := New(DefaultConfig(), nil)
	if err != nil {
		b.Fatal(err)
	}
	var set []uint64
	b.Run("stream", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			s.norm.Tokenize(doc, &s.tok)
			set = AppendShingles(set[:0], s.tok.Hash, 5)
		}
	})
	b.Run("set", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			set = s.Shingles(set[:0], doc)
		}
	})
}

// BenchmarkTokenize is the tokenizer alone, on the ASCII fast path and on
// the Unicode path (one non-ASCII character forces NFKC and folding) and
// on the quoted-ASCII path (typographic quotes as the only non-ASCII).
func BenchmarkTokenize(b *testing.B) {
	for _, tt := range []struct {
		name string
		doc  []byte
	}{
		{"ascii", benchDoc()},
		{"unicode", append(benchDoc(), "caf\u00e9"...)},
		// Typographic quotes only: the quoted-ASCII path.
		{"quoted", append(benchDoc(), "\u201cdon\u2019t\u201d"...)},
		// Words hyphenated at line ends with U+2010, as man renders
		// them: the quoted-ASCII path, joining.
		{"hyphenated", hyphenatedDoc(benchDoc())},
	} {
		b.Run(tt.name, func(b *testing.B) {
			n := NewNormalizer(DefaultNormalization())
			var tok Tokens
			b.SetBytes(int64(len(tt.doc)))
			b.ReportAllocs()
			for b.Loop() {
				n.Tokenize(tt.doc, &tok)
			}
		})
	}
}

// BenchmarkMinHash signs the shingle set of a 5 KB document with K = 128.
func BenchmarkMinHash(b *testing.B) {
	s, _ := New(DefaultConfig(), nil)
	var f Features
	_ = s.Sketch(benchDoc(), &f)
	for _, tt := range []struct {
		name string
		s    Signer
	}{
		{"classic/128", NewMinHash(128, 1)},
		{"oph/128", NewOnePermutation(128, 1)},
	} {
		b.Run(tt.name, func(b *testing.B) {
			var sig Signature
			b.ReportAllocs()
			for b.Loop() {
				sig = tt.s.Sign(sig, f.Shingles)
			}
		})
	}
}

// BenchmarkSketch is the whole per-document hot path: every feature.
func BenchmarkSketch(b *testing.B) {
	doc := benchDoc()
	for _, m := range []Method{OnePerm, Classic} {
		b.Run(string(m), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Method = m
			s, _ := New(cfg, nil)
			var f Features
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				_ = s.Sketch(doc, &f)
			}
		})
	}
}

func BenchmarkSimHash(b *testing.B) {
	s, _ := New(DefaultConfig(), nil)
	var f Features
	_ = s.Sketch(benchDoc(), &f)
	toks := s.tok.Hash
	b.ReportAllocs()
	for b.Loop() {
		_ = SimHash(toks)
	}
}

func BenchmarkEncode(b *testing.B) {
	s, _ := New(DefaultConfig(), nil)
	var f Features
	_ = s.Sketch(benchDoc(), &f)
	var buf []byte
	var g Features
	b.ReportAllocs()
	for b.Loop() {
		buf = f.AppendBinary(buf[:0], DefaultLimits())
		_ = g.UnmarshalBinary(buf)
	}
}

// webPage sketches a 5 KB page with the web profile's passage lane;
// webLimits are that profile's caps.
func webPage(b *testing.B) (*Sketcher, *Features) {
	cfg := DefaultConfig()
	cfg.PassageWords = 40
	s, err := New(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	var f Features
	if err := s.Sketch(benchDoc(), &f); err != nil {
		b.Fatal(err)
	}
	return s, &f
}

var webLimits = Limits{MaxShingles: 256, MaxUnique: 8192, IMatch: true, Passages: true}

// BenchmarkEncodeWeb measures what the pipeline's prepare stage does after
// sketching a 5 KB page with the web profile's passage lane and caps: its
// storage encoding and its stored features (Sketcher.Encode).
func BenchmarkEncodeWeb(b *testing.B) {
	s, f := webPage(b)
	var st Features
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = s.Encode(buf[:0], f, &st, webLimits)
	}
}

// BenchmarkDecode measures what a candidate's first look-up costs the
// pipeline (its featCache misses): decoding a 5 KB page's stored features,
// web profile, into fresh Features.
func BenchmarkDecode(b *testing.B) {
	s, f := webPage(b)
	var st Features
	buf := s.Encode(nil, f, &st, webLimits)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		var g Features
		if err := g.UnmarshalBinary(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// hyphenatedDoc breaks every fourth word of doc of three letters or more
// at a line end, as groff hyphenates: its first half, U+2010, a line
// break and an indent, its second half.
func hyphenatedDoc(doc []byte) []byte {
	var out []byte
	long := 0
	for i, w := range bytes.Fields(doc) {
		if i > 0 {
			out = append(out, ' ')
		}
		if len(w) >= 3 && w[1] >= 'a' && w[len(w)/2] >= 'a' {
			long++
		}
		if long%4 == 1 && len(w) >= 3 && w[1] >= 'a' && w[len(w)/2] >= 'a' {
			long++
			out = append(out, w[:len(w)/2]...)
			out = append(out, "\u2010\n       "...)
			w = w[len(w)/2:]
		}
		out = append(out, w...)
	}
	return out
}
