// Package synth generates corpora with planted duplicates for tests and
// benchmarks: original documents of Zipf-distributed pseudo-words, and
// exact copies, near duplicates (light word edits and a changed header and
// footer) and partial duplicates (a span replaced by unrelated text plus
// character noise, as in the DUPNIQ paper's synthetic experiments) of
// some of them. Everything is generated from a seed; no real text is used.
package synth

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Kind of a planted document.
type Kind string

// Kinds.
const (
	Original Kind = "original"
	Exact    Kind = "exact"
	Near     Kind = "near"
	Partial  Kind = "partial"
)

// Doc is one generated document.
type Doc struct {
	ID   string
	Text string
	Kind Kind
	// Source is the id of the original a duplicate was made from.
	Source string
}

// Config shapes a corpus.
type Config struct {
	Docs int    // total documents
	Seed uint64 // everything derives from it
	// MinWords and MaxWords bound an original's length (default 300..900).
	MinWords, MaxWords int
	// ExactRate, NearRate and PartialRate are the fractions of documents
	// planted as each kind of duplicate (default 0.1 each).
	ExactRate, NearRate, PartialRate float64
	// NearEdits is the fraction of words a near duplicate changes
	// (default 0.03).
	NearEdits float64
	// PartialReplace is the fraction of a partial duplicate replaced by
	// unrelated text (default 0.3); PartialNoise the per-character noise
	// rate added to it (default 0.01).
	PartialReplace, PartialNoise float64
	// Vocabulary is the number of distinct words (default 50,000).
	Vocabulary int
	// Contain makes partial duplicates web-style instead: the original
	// carried whole inside a longer page, with unrelated text before and
	// after adding ContainExtra (default 0.1..0.4) of its length.
	Contain      bool
	ContainExtra [2]float64
	// Embed, when set, makes partial duplicates passage copies instead: a
	// new text of about the original's length with one contiguous span of
	// the original inserted at a random word, the span making up a
	// fraction in [Embed[0], Embed[1]] of the new text (a source quoted in
	// an essay, an article syndicated inside a larger page).
	Embed [2]float64
}

func (c Config) withDefaults() Config {
	if c.MinWords == 0 {
		c.MinWords = 300
	}
	if c.MaxWords == 0 {
		c.MaxWords = 900
	}
	if c.ExactRate == 0 && c.NearRate == 0 && c.PartialRate == 0 {
		c.ExactRate, c.NearRate, c.PartialRate = 0.1, 0.1, 0.1
	}
	if c.NearEdits == 0 {
		c.NearEdits = 0.03
	}
	if c.PartialReplace == 0 {
		c.PartialReplace = 0.3
	}
	if c.PartialNoise == 0 {
		c.PartialNoise = 0.01
	}
	if c.Vocabulary == 0 {
		c.Vocabulary = 50000
	}
	if c.ContainExtra == [2]float64{} {
		c.ContainExtra = [2]float64{0.1, 0.4}
	}
	return c
}

// Generator produces text.
type Generator struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

// NewGenerator returns a generator of Zipf-distributed pseudo-words.
func NewGenerator(seed uint64, vocabulary int) *Generator {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	g := &Generator{r: r, zipf: rand.NewZipf(r, 1.07, 2, uint64(vocabulary-1))}
	seen := map[string]bool{}
	const consonants, vowels = "bcdfghjklmnprstvwz", "aeiou"
	for len(g.vocab) < vocabulary {
		// Frequent words are short, like real ones: the first thousand
		// have one syllable (about 1,700 exist), later ones up to four.
		syll := 1 + r.IntN(min(1+len(g.vocab)/1000, 4))
		var b strings.Builder
		for range syll {
			b.WriteByte(consonants[r.IntN(len(consonants))])
			b.WriteByte(vowels[r.IntN(len(vowels))])
			if r.IntN(3) == 0 {
				b.WriteByte(consonants[r.IntN(len(consonants))])
			}
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			g.vocab = append(g.vocab, w)
		}
	}
	return g
}

// Words returns n words of running text.
func (g *Generator) Words(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = g.vocab[g.zipf.Uint64()]
	}
	return out
}

// Text joins words into sentences.
func (g *Generator) Text(words []string) string {
	var b strings.Builder
	start := true
	for i, w := range words {
		if start {
			w = strings.ToUpper(w[:1]) + w[1:]
			start = false
		}
		b.WriteString(w)
		switch {
		case i == len(words)-1:
			b.WriteString(".")
		case g.r.IntN(14) == 0:
			b.WriteString(". ")
			start = true
		case g.r.IntN(10) == 0:
			b.WriteString(", ")
		default:
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// Noise changes each letter with probability p: substituted, deleted or
// doubled, like OCR errors.
func (g *Generator) Noise(s string, p float64) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 'a' || c > 'z' || g.r.Float64() >= p {
			b.WriteByte(c)
			continue
		}
		switch g.r.IntN(3) {
		case 0:
			b.WriteByte(byte('a' + g.r.IntN(26)))
		case 1: // deleted
		default:
			b.WriteByte(c)
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Corpus generates cfg.Docs documents. Each duplicate comes after its
// original and each original has at most one duplicate, so every planted
// pair is unambiguous.
func Corpus(cfg Config) []Doc {
	docs := make([]Doc, 0, cfg.Docs)
	Stream(cfg, 0, func(d Doc) { docs = append(docs, d) })
	return docs
}

// Stream generates the documents of Corpus one at a time, for corpora too
// large to hold: duplicates are planted only from the window most recent
// originals without one (0: all of them, which gives exactly Corpus).
func Stream(cfg Config, window int, emit func(Doc)) {
	cfg = cfg.withDefaults()
	g := NewGenerator(cfg.Seed, cfg.Vocabulary)
	r := g.r
	words := map[string][]string{}
	texts := map[string]string{}
	var free []string // originals without a duplicate yet
	for n := 0; n < cfg.Docs; n++ {
		x := r.Float64()
		kind := Original
		switch {
		case len(free) == 0:
		case x < cfg.ExactRate:
			kind = Exact
		case x < cfg.ExactRate+cfg.NearRate:
			kind = Near
		case x < cfg.ExactRate+cfg.NearRate+cfg.PartialRate:
			kind = Partial
		}
		id := fmt.Sprintf("doc-%06d", n)
		if kind == Original {
			w := g.Words(cfg.MinWords + r.IntN(cfg.MaxWords-cfg.MinWords+1))
			words[id] = w
			texts[id] = g.Text(w)
			free = append(free, id)
			emit(Doc{ID: id, Text: texts[id], Kind: Original})
			if window > 0 && len(free) > window {
				delete(words, free[0])
				delete(texts, free[0])
				free = free[1:]
			}
			continue
		}
		k := r.IntN(len(free))
		src := free[k]
		free[k] = free[len(free)-1]
		free = free[:len(free)-1]
		orig := words[src]
		var text string
		switch kind {
		case Exact:
			text = texts[src]
		case Near:
			text = g.Text(g.edit(orig, cfg.NearEdits))
		case Partial:
			if cfg.Embed != [2]float64{} {
				f := cfg.Embed[0] + r.Float64()*(cfg.Embed[1]-cfg.Embed[0])
				total := len(orig)
				span := min(max(int(f*float64(total)), 1), len(orig))
				from := r.IntN(len(orig) - span + 1)
				rest := g.Words(total - span)
				at := r.IntN(len(rest) + 1)
				w := slices.Concat(rest[:at], orig[from:from+span], rest[at:])
				text = g.Text(w)
				break
			}
			if cfg.Contain {
				extra := cfg.ContainExtra[0] + r.Float64()*(cfg.ContainExtra[1]-cfg.ContainExtra[0])
				n := int(extra * float64(len(orig)))
				before := r.IntN(n + 1)
				text = g.Text(g.Words(before)) + "\n\n" + texts[src] + "\n\n" + g.Text(g.Words(n-before+1))
				break
			}
			w := append([]string(nil), orig...)
			span := int(cfg.PartialReplace * float64(len(w)))
			at := r.IntN(len(w) - span + 1)
			copy(w[at:at+span], g.Words(span))
			text = g.Noise(g.Text(w), cfg.PartialNoise)
		}
		if window > 0 {
			delete(words, src)
			delete(texts, src)
		}
		emit(Doc{ID: id, Text: text, Kind: kind, Source: src})
	}
}

// edit replaces, deletes or inserts a fraction rate of the words, and adds
// a short header and footer, like a syndicated copy of a page.
func (g *Generator) edit(words []string, rate float64) []string {
	out := append([]string(nil), g.Words(3+g.r.IntN(5))...)
	for _, w := range words {
		if g.r.Float64() >= rate {
			out = append(out, w)
			continue
		}
		switch g.r.IntN(3) {
		case 0:
			out = append(out, g.Words(1)[0])
		case 1: // deleted
		default:
			out = append(out, w, g.Words(1)[0])
		}
	}
	return append(out, g.Words(3+g.r.IntN(5))...)
}

// Words returns a source of uniformly drawn words from seed ("w" and a
// number under 50,000), each call the next n of them: the pages of a test
// that decides their shared text word for word.
func Words(seed uint64) func(n int) []string {
	r := rand.New(rand.NewPCG(seed, 1))
	return func(n int) []string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = fmt.Sprintf("w%d", r.IntN(50000))
		}
		return ws
	}
}
