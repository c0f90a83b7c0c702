package sketch

import (
	"bytes"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/dataset"
)

// setJaccard is the reference: |A∩B| / |A∪B| by map arithmetic.
func setJaccard(a, b []uint64) float64 {
	in := map[uint64]bool{}
	for _, x := range a {
		in[x] = true
	}
	inter := 0
	union := len(in)
	seen := map[uint64]bool{}
	for _, x := range b {
		if seen[x] {
			continue
		}
		seen[x] = true
		if in[x] {
			inter++
		} else {
			union++
		}
	}
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

func mustSketch(t testing.TB, cfg Config, text []byte) *Features {
	t.Helper()
	_, f := mustSketcher(t, cfg, text)
	return f
}

// mustSketcher is mustSketch that also returns the Sketcher, whose scratch
// is left as the text made it.
func mustSketcher(t testing.TB, cfg Config, text []byte) (*Sketcher, *Features) {
	t.Helper()
	s, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var f Features
	if err := s.Sketch(text, &f); err != nil {
		t.Fatal(err)
	}
	return s, &f
}

func readGutenberg(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(dataset.Gutenberg(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The two Alice editions differ in quote style (curly vs straight): with
// quote folding their word 5-shingle resemblance is about 0.9, without it
// about 0.7 (the data set's README reports the same effect).
func TestQuoteFoldingOnAlice(t *testing.T) {
	a, b := readGutenberg(t, "pg11.txt"), readGutenberg(t, "pg28885.txt")
	folded := DefaultConfig()
	raw := DefaultConfig()
	raw.Normalize.FoldQuotes = false
	jf := setJaccard(mustSketch(t, folded, a).Shingles, mustSketch(t, folded, b).Shingles)
	jr := setJaccard(mustSketch(t, raw, a).Shingles, mustSketch(t, raw, b).Shingles)
	t.Logf("Alice pg11 vs pg28885: J = %.4f folded, %.4f unfolded", jf, jr)
	if jf < 0.85 {
		t.Errorf("folded J = %.4f, want ≥ 0.85", jf)
	}
	if jr > 0.8 {
		t.Errorf("unfolded J = %.4f, want < 0.8 (fold should matter)", jr)
	}
}

func TestGutenbergSketches(t *testing.T) {
	cfg := DefaultConfig()
	frank1 := mustSketch(t, cfg, readGutenberg(t, "pg84.txt"))
	frank2 := mustSketch(t, cfg, readGutenberg(t, "pg42324.txt"))
	moby := mustSketch(t, cfg, readGutenberg(t, "pg2701.txt"))
	same := setJaccard(frank1.Shingles, frank2.Shingles)
	diff := setJaccard(frank1.Shingles, moby.Shingles)
	t.Logf("Frankenstein editions J = %.4f (Ĵ %.3f), Frankenstein/Moby-Dick J = %.4f (Ĵ %.3f); hamming %d vs %d",
		same, frank1.Signature.Jaccard(frank2.Signature), diff, frank1.Signature.Jaccard(moby.Signature),
		Hamming(frank1.SimHash, frank2.SimHash), Hamming(frank1.SimHash, moby.SimHash))
	if same < 0.85 || diff > 0.01 {
		t.Errorf("J same = %.4f (want ≥ 0.85), J different = %.4f (want ≤ 0.01)", same, diff)
	}
	if Hamming(frank1.SimHash, frank2.SimHash) > 3 {
		t.Errorf("editions' SimHash %d bits apart, want ≤ 3", Hamming(frank1.SimHash, frank2.SimHash))
	}
	if len(frank1.Unique) < 1000 || len(frank1.Unique) > 6000 {
		t.Errorf("Frankenstein has %d unique words; DUPNIQ reports 2–3K for a 100K-word book", len(frank1.Unique))
	}
}

func TestUniqueWords(t *testing.T) {
	f := mustSketch(t, DefaultConfig(), []byte("the cat saw the dog and 42 cats saw a bird"))
	var got []string
	n := NewNormalizer(DefaultNormalization())
	var tok Tokens
	n.Tokenize([]byte("the cat saw the dog and 42 cats saw a bird"), &tok)
	for _, u := range f.Unique {
		got = append(got, string(tok.Word(int(u.Pos))))
		if tok.Hash[u.Pos] != u.Hash {
			t.Errorf("unique word at %d: hash mismatch", u.Pos)
		}
	}
	if want := "cat dog and cats a bird"; strings.Join(got, " ") != want {
		t.Errorf("unique words %q, want %q", got, want)
	}
}

func TestIMatch(t *testing.T) {
	base := "The committee reviewed the proposal for the new observatory and approved funding for the telescope mirror, the dome and the instrument workshop next spring."
	a := mustSketch(t, DefaultConfig(), []byte(base))
	// Reordering, case and very frequent words do not change the digest.
	b := mustSketch(t, DefaultConfig(), []byte(strings.ToUpper(base)+" the the and"))
	c := mustSketch(t, DefaultConfig(), []byte(strings.Replace(base, "telescope", "microscope", 1)))
	if !a.HasIMatch {
		t.Fatal("no digest for a 25-word document")
	}
	if a.IMatch != b.IMatch {
		t.Error("case and frequent-word changes altered the digest")
	}
	if a.IMatch == c.IMatch {
		t.Error("replacing a rare word did not alter the digest")
	}
	if short := mustSketch(t, DefaultConfig(), []byte("hello world")); short.HasIMatch {
		t.Error("two-word document got a digest")
	}
	doc := DefaultConfig()
	doc.IMatch = IMatch{Mode: IMatchDoc, Keep: 0.5, Cutoff: 0.1, MinTerms: 3}
	if d := mustSketch(t, doc, []byte(base)); !d.HasIMatch || d.IMatch == a.IMatch {
		t.Error("Doc-L filter should give a digest different from IDF-L")
	}
}

// TestIMatchMerge checks that the IDF filter's merge with the sorted list
// of frequent terms keeps exactly the terms a lexicon lookup per term
// keeps, for cutoffs from none to all of the listed terms.
func TestIMatchMerge(t *testing.T) {
	lex := DefaultLexicon()
	r := rand.New(rand.NewPCG(5, 6))
	var listed []uint64
	for h := range lex.idf {
		listed = append(listed, h)
	}
	slices.Sort(listed) // map order is random; the draws below must not be
	for _, cutoff := range []float64{0, 0.05, 0.1, 0.3, 0.7, 1} {
		c := IMatch{Mode: IMatchIDF, Cutoff: cutoff, MinTerms: 1}
		var fast, slow imatchScratch
		fast.prepare(c, lex)
		if !fast.merge {
			t.Fatalf("cutoff %v: no merge", cutoff)
		}
		kept := 0
		for range 200 {
			var terms []uint64
			for range r.IntN(400) {
				if r.IntN(2) == 0 {
					terms = append(terms, listed[r.IntN(len(listed))])
				} else {
					terms = append(terms, r.Uint64()) // unlisted
				}
			}
			slices.Sort(terms)
			terms = slices.Compact(terms)
			df, okf := c.digest(terms, lex, &fast)
			ds, oks := c.digest(terms, lex, &slow)
			if df != ds || okf != oks || !slices.Equal(fast.terms, slow.terms) {
				t.Fatalf("cutoff %v: merge kept %d terms, lookups %d", cutoff, len(fast.terms), len(slow.terms))
			}
			kept += len(fast.terms)
		}
		if kept == 0 {
			t.Errorf("cutoff %v: no term kept in 200 documents", cutoff)
		}
	}
}

func TestDefaultLexicon(t *testing.T) {
	lex := DefaultLexicon()
	if lex.Docs() < 100 || lex.Len() < 5000 {
		t.Fatalf("default lexicon: %d docs, %d terms", lex.Docs(), lex.Len())
	}
	the, rare := lex.NIDF(TokenHash([]byte("the"))), lex.NIDF(TokenHash([]byte("xylophonist")))
	if the > 0.05 || rare != 1 {
		t.Errorf("nidf(the) = %v (want ≈ 0), nidf(unknown) = %v (want 1)", the, rare)
	}
	var buf bytes.Buffer
	lb := NewLexiconBuilder(DefaultNormalization())
	lb.Add([]byte("a b c"))
	lb.Add([]byte("a b"))
	lb.Add([]byte("a"))
	if err := lb.WriteTo(&buf, 1); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLexicon(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got.Docs() != 3 || got.Len() != 3 || got.NIDF(TokenHash([]byte("a"))) != 0 {
		t.Errorf("round trip: docs %d, terms %d", got.Docs(), got.Len())
	}
	for _, bad := range []string{"", "junk\n", "# neardup lexicon v1 docs=2\nword\n", "# neardup lexicon v1 docs=2\nword\t9\n"} {
		if _, err := ReadLexicon(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadLexicon(%q) accepted malformed input", bad)
		}
	}
}

func TestCharGrams(t *testing.T) {
	cfg := DefaultConfig()
	cfg.CharGram = 3
	f := mustSketch(t, cfg, []byte("abcd"))
	want := []uint64{TokenHash([]byte("abc")), TokenHash([]byte("bcd"))}
	slices.Sort(want)
	if !slices.Equal(f.Shingles, want) {
		t.Errorf("char 3-grams of abcd = %x, want %x", f.Shingles, want)
	}
	if f := mustSketch(t, cfg, []byte("ab")); len(f.Shingles) != 1 {
		t.Errorf("text shorter than n: %d grams, want 1", len(f.Shingles))
	}
	if f := mustSketch(t, cfg, []byte("東京タ")); len(f.Shingles) != 3 { // "東 京 タ" has 5 runes
		t.Errorf("CJK 3-grams: %d", len(f.Shingles))
	}
}

func TestShortDocumentShingle(t *testing.T) {
	f := mustSketch(t, DefaultConfig(), []byte("three word doc"))
	if len(f.Shingles) != 1 {
		t.Errorf("%d shingles for a 3-token document, want 1", len(f.Shingles))
	}
	if f := mustSketch(t, DefaultConfig(), nil); len(f.Shingles) != 0 || f.Tokens != 0 || f.HasIMatch {
		t.Errorf("empty document: %+v", f)
	}
}

func TestTooLarge(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxBytes = 10
	s, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var f Features
	if err := s.Sketch(make([]byte, 11), &f); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("11 bytes over a 10-byte cap: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []func(*Config){
		func(c *Config) { c.Shingle = -1 },
		func(c *Config) { c.K = 5000 },
		func(c *Config) { c.Method = "other" },
		func(c *Config) { c.IMatch.Mode = "x" },
	}
	for i, mut := range bad {
		c := DefaultConfig()
		mut(&c)
		if _, err := New(c, nil); err == nil {
			t.Errorf("case %d: invalid config accepted", i)
		}
	}
}

// After warm-up, sketching a document allocates nothing when the caller
// reuses its Features.
func TestSketchZeroAllocs(t *testing.T) {
	doc := syntheticDoc(rand.New(rand.NewPCG(1, 1)), 5000)
	for _, m := range []Method{OnePerm, Classic} {
		cfg := DefaultConfig()
		cfg.Method = m
		s, err := New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		var f Features
		for range 3 {
			if err := s.Sketch(doc, &f); err != nil {
				t.Fatal(err)
			}
		}
		if n := testing.AllocsPerRun(20, func() { _ = s.Sketch(doc, &f) }); n != 0 {
			t.Errorf("%s: %v allocations per document", m, n)
		}
	}
}

// syntheticDoc returns about size bytes of English-like ASCII text drawn
// from a Zipf distribution over a generated vocabulary.
func syntheticDoc(r *rand.Rand, size int) []byte {
	z := rand.NewZipf(r, 1.1, 2, 20000)
	var b []byte
	for len(b) < size {
		w := z.Uint64()
		word := []byte{}
		for w > 0 || len(word) == 0 {
			word = append(word, byte('a'+w%26))
			w /= 26
		}
		if r.IntN(12) == 0 {
			word = append(word, ',')
		}
		b = append(b, word...)
		b = append(b, ' ')
	}
	return b[:size]
}

// TestCountTokens: the counting table gives the distinct hashes and the
// tokens occurring once exactly as sorting does (countTokensSorted), for
// uniform hashes and for hashes made to collide in the table (which
// takes the fallback to sorting).
func TestCountTokens(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tt := range []struct {
		name     string
		n, vocab int
		collide  bool
	}{
		{"empty", 0, 1, false},
		{"one", 1, 1, false},
		{"page", 900, 400, false},
		{"all distinct", 5000, 1 << 40, false},
		{"one word repeated", 3000, 1, false},
		{"colliding low bits", 4000, 2000, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var a, b Sketcher
			for range tt.n {
				h := Mix64(uint64(r.IntN(tt.vocab)) + 1)
				if tt.collide {
					h <<= 20 // the same low bits: one table slot for all
				}
				a.tok.Hash = append(a.tok.Hash, h)
			}
			b.tok.Hash = a.tok.Hash
			a.countTokens(true)
			b.countTokensSorted()
			if !slices.Equal(a.dist, b.dist) || !slices.Equal(a.once[:tt.n], b.once[:tt.n]) {
				t.Errorf("table: %d distinct, sort: %d distinct; once equal %v", len(a.dist), len(b.dist), slices.Equal(a.once[:tt.n], b.once[:tt.n]))
			}
			if !slices.IsSorted(a.dist) {
				t.Error("distinct hashes not sorted")
			}
		})
	}
}

// TestSkipSimHash: skipping the SimHash leaves it zero and every other
// feature, and the stored encoding without the SimHash, as they were.
func TestSkipSimHash(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PassageWords = 40
	skip := cfg
	skip.SkipSimHash = true
	text := []byte(strings.Repeat("The quick brown fox jumps over the lazy dog near the riverbank. ", 40))
	_, pa := mustSketcher(t, cfg, text)
	_, pb := mustSketcher(t, skip, text)
	fa, fb := *pa, *pb
	if fa.SimHash == 0 || fb.SimHash != 0 {
		t.Fatalf("SimHash %#x computed, %#x skipped", fa.SimHash, fb.SimHash)
	}
	lim := DefaultLimits()
	lim.SimHash, lim.Passages = false, true
	ea, eb := fa.AppendBinary(nil, lim), fb.AppendBinary(nil, lim)
	if !bytes.Equal(ea, eb) {
		t.Error("stored features differ")
	}
	fb.SimHash = fa.SimHash
	if !reflect.DeepEqual(fa, fb) {
		t.Error("features other than the SimHash differ")
	}
}

// TestSkipUnique: skipping the unique words leaves them empty, and every
// other feature, and the stored encoding of a profile that stores no
// unique words, as they were; on ASCII and on Unicode text.
func TestSkipUnique(t *testing.T) {
	for _, tt := range []struct{ name, text string }{
		{"ascii", strings.Repeat("The quick brown fox jumps over the lazy dog near the riverbank 42 times. ", 40) + "and then a unique ending"},
		{"unicode", strings.Repeat("“Don’t,” said Zoë — the café’s owner, 3 times. ", 40) + "a unique ending"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.PassageWords = 40
			skip := cfg
			skip.SkipUnique = true
			_, pa := mustSketcher(t, cfg, []byte(tt.text))
			_, pb := mustSketcher(t, skip, []byte(tt.text))
			fa, fb := *pa, *pb
			if len(fa.Unique) == 0 || len(fb.Unique) != 0 {
				t.Fatalf("%d unique words computed, %d skipped", len(fa.Unique), len(fb.Unique))
			}
			lim := DefaultLimits()
			lim.MaxUnique = 0
			ea, eb := fa.AppendBinary(nil, lim), fb.AppendBinary(nil, lim)
			if !bytes.Equal(ea, eb) {
				t.Error("stored features differ")
			}
			fb.Unique = fa.Unique
			if !reflect.DeepEqual(fa, fb) {
				t.Error("features other than the unique words differ")
			}
		})
	}
}

// TestSkipShingleSet: leaving the shingle set out gives the same shingle
// count, signature, stored features and encoding, for the web and the
// books limits, on ASCII and Unicode text, a text shorter than a shingle,
// one with repeated passages, and (passage lane off or too long a text)
// where the set is computed anyway.
func TestSkipShingleSet(t *testing.T) {
	book, err := os.ReadFile(dataset.Gutenberg(t, "pg1342.txt"))
	if err != nil {
		t.Fatal(err)
	}
	long := bytes.Repeat([]byte("word "), MaxPassageTokens+10)
	for _, tt := range []struct {
		name    string
		text    []byte
		passage int
		seq     bool // the set is left out
	}{
		{"page", book[20000:25000], 40, true},
		{"book", book[:300000], 40, true},
		{"unicode", []byte(strings.Repeat("“Don’t,” said Zoë — the café’s owner. ", 60)), 40, true},
		{"repeats", bytes.Repeat(book[30000:31000], 5), 40, true},
		{"short", []byte("two words"), 40, true},
		{"no passage lane", book[20000:25000], 0, false},
		{"too long for the lane", long, 40, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.PassageWords = tt.passage
			skip := cfg
			skip.SkipShingleSet = true
			sa, fa := mustSketcher(t, cfg, tt.text)
			sb, fb := mustSketcher(t, skip, tt.text)
			if tt.seq != (len(fb.Shingles) == 0) {
				t.Fatalf("%d shingles kept with the set skipped, want them left out: %v", len(fb.Shingles), tt.seq)
			}
			if fa.ShingleCount != fb.ShingleCount || !slices.Equal(fa.Signature, fb.Signature) {
				t.Fatalf("count %d and %d, signatures equal %v", fa.ShingleCount, fb.ShingleCount, slices.Equal(fa.Signature, fb.Signature))
			}
			for _, lim := range []Limits{{MaxShingles: 256, Passages: true, IMatch: true}, DefaultLimits()} {
				var sta, stb Features
				ea, eb := sa.Encode(nil, fa, &sta, lim), sb.Encode(nil, fb, &stb, lim)
				if !bytes.Equal(ea, eb) {
					t.Errorf("limits %+v: encodings differ", lim)
				}
				if !reflect.DeepEqual(sta, stb) {
					t.Errorf("limits %+v: stored features differ", lim)
				}
			}
		})
	}
}

// TestCountDistinct: the hash-table count is the sorted count, with
// repeats, a zero hash, and hashes that collide in the table's bits (the
// fallback).
func TestCountDistinct(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 1))
	for _, tt := range []struct {
		name     string
		n, vocab int
		collide  bool
		zero     bool
	}{
		{"empty", 0, 1, false, false},
		{"page", 900, 700, false, false},
		{"zero hash", 500, 300, false, true},
		{"one repeated", 3000, 1, false, false},
		{"colliding low bits", 4000, 2000, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var s Sketcher
			hs := make([]uint64, tt.n)
			for i := range hs {
				hs[i] = Mix64(uint64(r.IntN(tt.vocab)) + 1)
				if tt.collide {
					hs[i] <<= 20
				}
				if tt.zero && i%7 == 0 {
					hs[i] = 0
				}
			}
			sorted := slices.Clone(hs)
			slices.Sort(sorted)
			want := len(slices.Compact(sorted))
			if got := s.countDistinct(hs); got != want {
				t.Errorf("%d distinct, want %d", got, want)
			}
		})
	}
}
