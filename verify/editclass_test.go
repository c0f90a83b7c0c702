package verify

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestClassifyEdit(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want EditClass
	}{
		// Identical.
		{"identical", "Einstein was born in Ulm in 1879.", "Einstein was born in Ulm in 1879.", EditIdentical},
		{"identical empty", "", "", EditIdentical},
		{"identical non-ASCII", "Der Bär kam um 3 Uhr.", "Der Bär kam um 3 Uhr.", EditIdentical},

		// Copy edits: case, punctuation, white space.
		{"case", "The colour of the sea.", "the colour of the sea.", EditCopy},
		{"punctuation", "Bush, in 2008, left office.", "Bush in 2008 left office", EditCopy},
		{"white space", "A  sentence\twith   spaces .", "A sentence with spaces.", EditCopy},
		{"quotes and apostrophes", "He said “don’t” twice.", "He said \"dont\" twice.", EditCopy},
		// U+02BC is a letter to Unicode; alone it once stalled the
		// tokenizer (found by FuzzClassifyEdit).
		{"modifier letter apostrophe", "ʼ donʼt ʼtis", "' don't 'tis", EditCopy},
		{"only punctuation differs", "...", "!?", EditCopy},
		{"hyphenation", "an e-mail address", "an email address", EditCopy},
		{"word joined", "any one of them", "anyone of them", EditCopy},
		// Copy edits: spelling.
		{"spelling british american", "The colour of the centre.", "The color of the center.", EditCopy},
		{"spelling and case", "The colour", "the color", EditCopy},
		{"spelling transposition", "They recieve letters.", "They receive letters.", EditCopy},
		{"spelling same length short", "a grey cat", "a gray cat", EditCopy},
		{"spelling -ise", "to organise it", "to organize it", EditCopy},
		// Copy edits: non-ASCII.
		{"accents", "Il est allé au café.", "Il est alle au cafe.", EditCopy},
		// Three letters allow no spelling edit: only folding makes these
		// equal.
		{"accents short words", "Ça a été là.", "Ca a ete la.", EditCopy},
		{"ligature", "the ﬁrst ﬂoor", "the first floor", EditCopy},
		{"sharp s", "Die Straße ist lang.", "Die Strasse ist lang.", EditCopy},
		{"umlaut spelled out", "Herr Müller kam.", "Herr Mueller kam.", EditCopy},
		{"cyrillic case", "Он родился в Ульме.", "он родился в ульме.", EditCopy},
		{"fullwidth digits", "価格は１００円", "価格は100円", EditCopy},
		{"month abbreviation spelled out", "On 5 Jan. 1879 he came.", "On 5 January 1879 he came.", EditCopy},
		{"thousands separator", "It cost 1,000 dollars.", "It cost 1000 dollars.", EditCopy},

		// Numbers changed (the study's factual drift).
		{"number", "Obama had an approval rating of 56% by the end of his term in 2012.",
			"Obama had an approval rating of 46% by the end of his term in 2012.", EditNumberOrDate},
		{"year", "He was born in 1879.", "He was born in 1880.", EditNumberOrDate},
		{"year one digit", "He was born in 1879.", "He was born in 1878.", EditNumberOrDate},
		{"decimal", "It grew 1.5 million times.", "It grew 2.5 million times.", EditNumberOrDate},
		{"sign", "It was -5 degrees.", "It was 5 degrees.", EditNumberOrDate},
		{"number word", "He had two sons.", "He had three sons.", EditNumberOrDate},
		{"number word to digits", "He had two sons.", "He had 2 sons.", EditNumberOrDate},
		{"number removed", "In 1879 he was born in Ulm.", "In he was born in Ulm.", EditNumberOrDate},
		{"references", "Neotropical Ichthyology 11 (1): 73-80.", "Neotropical Ichthyology 10 (2): 245-253.", EditNumberOrDate},
		{"number inside a name", "It plays MP3 files.", "It plays MP4 files.", EditNumberOrDate},
		{"number non-ASCII", "Он родился в 1879 году.", "Он родился в 1880 году.", EditNumberOrDate},
		{"number chinese", "他出生于1879年。", "他出生于1880年。", EditNumberOrDate},
		{"number arabic-indic", "ولد عام ١٨٧٩", "ولد عام ١٨٨٠", EditNumberOrDate},
		// Dates changed.
		{"month", "He died on 5 March 1879.", "He died on 5 April 1879.", EditNumberOrDate},
		{"day and month", "He died on March 5, 1879.", "He died on April 6, 1879.", EditNumberOrDate},
		{"ordinal", "It opened on the 5th of May.", "It opened on the 6th of May.", EditNumberOrDate},
		{"ordinal word", "It was his first book.", "It was his second book.", EditNumberOrDate},
		{"weekday", "It opened on Monday.", "It opened on Tuesday.", EditNumberOrDate},
		{"decade", "It was popular in the 1880s.", "It was popular in the 1890s.", EditNumberOrDate},
		{"era", "Rome was founded in 753 BC.", "Rome was founded in 753 AD.", EditNumberOrDate},
		{"month non-ASCII text", "Né le 5 March 1879 à Ulm.", "Né le 5 April 1879 à Ulm.", EditNumberOrDate},
		// Units changed.
		{"unit word", "The road is 5 km long.", "The road is 5 miles long.", EditNumberOrDate},
		{"unit attached", "The road is 5km long.", "The road is 8mi long.", EditNumberOrDate},
		{"currency", "It cost $5.", "It cost €5.", EditNumberOrDate},
		{"percent", "It rose by 5%.", "It rose by 5 percent.", EditNumberOrDate},
		{"temperature", "Water boils at 100 °C.", "Water boils at 212 °F.", EditNumberOrDate},
		{"time span", "It took two days.", "It took three weeks.", EditNumberOrDate},
		// Precedence: a number change with copy edits is a number change.
		{"number and case", "He was born in 1879.", "he was Born in 1880", EditNumberOrDate},
		{"number and spelling apart", "The colour was chosen in 1879.", "The color was chosen in 1880.", EditNumberOrDate},
		{"number and spelling in one hunk", "The colour 1879 was chosen.", "The color 1880 was chosen.", EditNumberOrDate},

		// Reworded.
		{"word substituted", "the cat sat", "the dog sat", EditReworded},
		{"one letter in a short word", "the cat sat", "the bat sat", EditReworded},
		{"short word grows", "He had one of them.", "He had none of them.", EditReworded},
		{"plural", "the dog barked", "the dogs barked", EditReworded},
		{"word added", "Bush had an approval rating of 22% by the end of his term in 2008.",
			"Bush, a US President, had an approval rating of 22% by the end of his term in 2008.", EditReworded},
		{"word removed", "It was a very big house.", "It was a big house.", EditReworded},
		{"template", "Bush had an approval rating of 22% by the end of his term in 2008.",
			"Obama had an approval rating of 56% by the end of his term in 2012.", EditReworded},
		{"reordered", "In 1879, Einstein was born.", "Einstein was born in 1879.", EditReworded},
		{"number and word", "He was born in 1879 in Ulm.", "He was born in 1880 in Munich.", EditReworded},
		{"number replaced by a word", "He had 2 sons.", "He had many sons.", EditReworded},
		{"lower-case may is a verb", "He may leave.", "He leave.", EditReworded},
		{"empty and not", "", "Hello.", EditReworded},
		{"reworded non-ASCII", "Der Hund schlief.", "Die Katze schlief.", EditReworded},
		{"reworded chinese", "东京是大城市。", "东京是小城市。", EditReworded},
		{"reworded cyrillic", "Он родился в Ульме.", "Она жила в Ульме.", EditReworded},
		{"long insertion", "He left.", "He left after a long and bitter argument with everyone he had ever known there.", EditReworded},
	}
	var c EditClassifier // reused across cases: no state leaks between calls
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Classify([]byte(tt.a), []byte(tt.b)); got != tt.want {
				t.Errorf("Classify(%q, %q) = %s, want %s", tt.a, tt.b, got, tt.want)
			}
			if got := ClassifyEdit([]byte(tt.b), []byte(tt.a)); got != tt.want {
				t.Errorf("ClassifyEdit(%q, %q) = %s, want %s (swapped)", tt.b, tt.a, got, tt.want)
			}
		})
	}
}

// TestClassifyEditLong checks the bound on alignment: a middle too large to
// align is reworded, and a long text with one changed number is still a
// number change (common first and last words are not aligned by the table).
func TestClassifyEditLong(t *testing.T) {
	var a, b bytes.Buffer
	for i := range 3000 {
		a.WriteString("word ")
		if i == 1500 {
			a.WriteString("1879 ")
			b.WriteString("word 1880 ")
			continue
		}
		b.WriteString("word ")
	}
	if got := ClassifyEdit(a.Bytes(), b.Bytes()); got != EditNumberOrDate {
		t.Errorf("long text with one number changed: %s, want %s", got, EditNumberOrDate)
	}
	x := bytes.Repeat([]byte("alpha beta "), 1100)
	y := bytes.Repeat([]byte("beta alpha "), 1100)
	if got := ClassifyEdit(x, y); got != EditReworded {
		t.Errorf("long reordered text: %s, want %s", got, EditReworded)
	}
}

// osaDP is the textbook optimal string alignment distance, the reference
// for osaAtMost's early exit.
func osaDP(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

func TestOSAAtMost(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"recieve", "receive", 1}, {"ca", "abc", 3},
		{"theatre", "theater", 1}, {"colour", "color", 1}, {"kitten", "sitting", 3},
	} {
		if got := osaDP([]rune(tt.a), []rune(tt.b)); got != tt.want {
			t.Errorf("osaDP(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
	var c EditClassifier
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		a := randomRunes(rng, rng.IntN(12), "abcé")
		b := randomRunes(rng, rng.IntN(12), "abcé")
		k := rng.IntN(6)
		want := min(osaDP(a, b), k+1)
		if got := c.osaAtMost(a, b, k); got != want {
			t.Fatalf("osaAtMost(%q, %q, %d) = %d, want %d", string(a), string(b), k, got, want)
		}
	}
}

func randomRunes(rng *rand.Rand, n int, alphabet string) []rune {
	al := []rune(alphabet)
	out := make([]rune, n)
	for i := range out {
		out[i] = al[rng.IntN(len(al))]
	}
	return out
}

func TestClassifyEditAllocs(t *testing.T) {
	pairs := [][2]string{
		{"The colour of the centre was chosen in 1879 by Dr. Müller.", "the color of the center was chosen in 1880 by Dr. Mueller"},
		{"Obama had an approval rating of 56% in 2012.", "Bush, a US President, had an approval rating of 22% in 2008."},
		{"他出生于1879年。", "他出生于1880年。"},
	}
	var c EditClassifier
	for _, p := range pairs {
		c.Classify([]byte(p[0]), []byte(p[1]))
	}
	for _, p := range pairs {
		a, b := []byte(p[0]), []byte(p[1])
		if n := testing.AllocsPerRun(20, func() { c.Classify(a, b) }); n != 0 {
			t.Errorf("Classify(%q, %q) allocates %v times after warm-up, want 0", p[0], p[1], n)
		}
	}
}

// asciiUpper upper-cases the ASCII letters of s and leaves every other
// byte alone, so the words of s and their boundaries do not change.
func asciiUpper(s []byte) []byte {
	out := bytes.Clone(s)
	for i, c := range out {
		if 'a' <= c && c <= 'z' {
			out[i] = c - 'a' + 'A'
		}
	}
	return out
}

func FuzzClassifyEdit(f *testing.F) {
	for _, seed := range [][2]string{
		{"He was born in 1879.", "He was born in 1880."},
		{"The colour", "the color"},
		{"the cat sat", "the dog sat"},
		{"On 5 Jan. 1879 he came.", "On 5 January 1879 he came."},
		{"It cost $1,000.50 or −5 °C", "It cost €1000.5 or +5 °F"},
		{"他出生于1879年。", "Он родился в 1880 году."},
		{"caf\xe9 \xff's 1,2,3", "Caf\xc3\xa9 \xffs 1.2.3"},
		{"", "x"},
		{"ʼ", "ʼʼ"},
	} {
		f.Add(seed[0], seed[1])
	}
	valid := map[EditClass]bool{EditIdentical: true, EditCopy: true, EditNumberOrDate: true, EditReworded: true}
	f.Fuzz(func(t *testing.T, a, b string) {
		var c EditClassifier
		got := c.Classify([]byte(a), []byte(b))
		if !valid[got] {
			t.Fatalf("Classify(%q, %q) = %q, not a class", a, b, got)
		}
		if (got == EditIdentical) != (a == b) {
			t.Fatalf("Classify(%q, %q) = %s", a, b, got)
		}
		if sym := c.Classify([]byte(b), []byte(a)); sym != got {
			t.Fatalf("Classify(%q, %q) = %s but swapped %s", a, b, got, sym)
		}
		if self := c.Classify([]byte(a), []byte(a)); self != EditIdentical {
			t.Fatalf("Classify(%q, itself) = %s", a, self)
		}
		// Case alone is a copy edit.
		if up := asciiUpper([]byte(a)); string(up) != a {
			if e := c.Classify([]byte(a), up); e != EditCopy {
				t.Fatalf("Classify(%q, %q) = %s, want %s (ASCII case only)", a, up, e, EditCopy)
			}
		}
		// Doubling spaces is a copy edit.
		if sp := bytes.ReplaceAll([]byte(a), []byte(" "), []byte("  ")); string(sp) != a {
			if e := c.Classify([]byte(a), sp); e != EditCopy {
				t.Fatalf("Classify(%q, %q) = %s, want %s (white space only)", a, sp, e, EditCopy)
			}
		}
	})
}

// BenchmarkClassifyEdit compares the edit class with its peer, the edit
// similarity that verifies every sentence pair before it is classified.
func BenchmarkClassifyEdit(b *testing.B) {
	a := []byte("Obama had an approval rating of 56% by the end of his term in 2012, the colour of the centre.")
	c2 := []byte("Obama had an approval rating of 46% by the end of his term in 2012, the color of the center.")
	b.Run("classify", func(b *testing.B) {
		b.ReportAllocs()
		var c EditClassifier
		for b.Loop() {
			c.Classify(a, c2)
		}
	})
	b.Run("edit-similarity", func(b *testing.B) {
		b.ReportAllocs()
		var e Editor
		for b.Loop() {
			e.Similarity(a, c2)
		}
	})
}
