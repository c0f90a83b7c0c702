package corpus

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Config shapes a real-text corpus. The zero value (with Docs set) gives
// the default: 95% copies in clusters of 20, ~5 KB documents.
type Config struct {
	// Docs is the number of documents of the stream (required).
	Docs int
	// Seed seeds every choice; default 2026.
	Seed uint64
	// Dup is the share of documents that are copies, in [0, 1); default
	// 0.95. Dup < 0 asks for none.
	Dup float64
	// Cluster is the number of documents of each cluster, its original
	// included (the last cluster may be smaller); default
	// max(2, round(1/(1-Dup))), so that at the default density every
	// original has copies. Documents that are neither copies nor the
	// originals of a cluster are unique originals, so Dup can be at most
	// (Cluster-1)/Cluster.
	Cluster int
	// ChunkBytes is an original's mean size; default 5,000.
	ChunkBytes int
	// ExactShare and PartialShare are the shares of copies made exact and
	// partial, the rest near; default 0.1 and 0.3. A negative share asks
	// for none.
	ExactShare, PartialShare float64
	// NearEdits is the share of words a near copy substitutes, deletes or
	// inserts; default 0.03.
	NearEdits float64
	// Window is about the span of stream positions each cluster's
	// documents fall in; 0 (the default) spreads them over the whole
	// stream. With a window, clusters start at an even rate over the stream
	// and their copies follow within about Window documents (a span of time
	// holding Window documents on average), so every slice of the stream has
	// about the same make-up (originals, copies, copies already seen per
	// copy): a stationary stream, as a crawl that keeps finding new texts
	// is. Without one, a cluster's original is the earliest of its positions
	// over the whole stream, so originals crowd the stream's start and a
	// copy's earlier copies grow along it.
	Window int
	// Texts, when > 0, lays the stream out in rounds instead (Dup,
	// Cluster and Window are then ignored): the first round is Texts
	// originals, and every later round one copy of each of them, in an
	// order of its own, until Docs; the last round may be cut short. Every
	// text thus gains a copy per round, and clusters grow along the stream
	// to Docs/Texts documents: popular texts (syndicated news, licences,
	// mirrored pages) copied again and again, where the cost of a text's
	// hundredth copy is what is measured.
	Texts int
}

func (c Config) withDefaults() (Config, error) {
	if c.Docs <= 0 {
		return c, fmt.Errorf("corpus: want Docs > 0, got %d", c.Docs)
	}
	if c.Seed == 0 {
		c.Seed = 2026
	}
	switch {
	case c.Dup == 0:
		c.Dup = 0.95
	case c.Dup < 0:
		c.Dup = 0
	case c.Dup >= 1:
		return c, fmt.Errorf("corpus: want 0 <= Dup < 1, got %g", c.Dup)
	}
	if c.Cluster == 0 {
		c.Cluster = max(2, int(math.Round(1/(1-c.Dup))))
	}
	if c.Cluster < 2 {
		return c, fmt.Errorf("corpus: want Cluster >= 2, got %d", c.Cluster)
	}
	if c.Dup > float64(c.Cluster-1)/float64(c.Cluster)+1e-9 {
		return c, fmt.Errorf("corpus: %.0f%% copies need clusters of at least %d documents, got %d",
			100*c.Dup, int(math.Ceil(1/(1-c.Dup))), c.Cluster)
	}
	if c.ChunkBytes == 0 {
		c.ChunkBytes = 5000
	}
	if c.ChunkBytes < 500 {
		return c, fmt.Errorf("corpus: want ChunkBytes >= 500, got %d", c.ChunkBytes)
	}
	share := func(v, def float64) float64 {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	c.ExactShare, c.PartialShare = share(c.ExactShare, 0.1), share(c.PartialShare, 0.3)
	if c.ExactShare+c.PartialShare > 1 {
		return c, fmt.Errorf("corpus: ExactShare + PartialShare = %g > 1", c.ExactShare+c.PartialShare)
	}
	c.NearEdits = share(c.NearEdits, 0.03)
	if c.NearEdits >= 0.5 {
		return c, fmt.Errorf("corpus: want NearEdits < 0.5, got %g", c.NearEdits)
	}
	if c.Texts < 0 || c.Texts > c.Docs {
		return c, fmt.Errorf("corpus: want 0 <= Texts <= Docs (%d), got %d", c.Docs, c.Texts)
	}
	if c.Texts > 0 {
		c.Dup = 1 - float64(c.Texts)/float64(c.Docs)
		c.Cluster, c.Window = (c.Docs+c.Texts-1)/c.Texts, 0
	}
	if c.Window < 0 || (c.Window > 0 && c.Window < c.Cluster) {
		return c, fmt.Errorf("corpus: want Window 0 or at least Cluster (%d), got %d", c.Cluster, c.Window)
	}
	return c, nil
}

// Folders of the shared data folder the texts come from.
const (
	GutenbergFolder = "gutenberg-editions"
	PANFolder       = "pan13-text-alignment-no-obfuscation"
)

// gutenbergTexts are one edition of each of the five works: two editions
// of one work are near copies of each other, which the corpus would not
// know.
var gutenbergTexts = []string{"pg1342.txt", "pg2701.txt", "pg84.txt", "pg1661.txt", "pg11.txt"}

// Build makes a real-text corpus from the data folder dataDir (the folder
// holding gutenberg-editions and pan13-text-alignment-no-obfuscation).
func Build(dataDir string, cfg Config) (*Corpus, error) {
	if _, err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	t, err := LoadTexts(dataDir)
	if err != nil {
		return nil, err
	}
	return t.Build(cfg)
}

// Texts are the real texts a corpus is cut from, read once for several
// corpora.
type Texts struct {
	pars  [][]string
	ciph  *cipher
	sizes map[int][][][]string // chunks by ChunkBytes
}

// LoadTexts reads the texts of the data folder dataDir.
func LoadTexts(dataDir string) (*Texts, error) {
	pars, err := readTexts(dataDir)
	if err != nil {
		return nil, err
	}
	return &Texts{pars: pars, ciph: newCipher(pars), sizes: map[int][][][]string{}}, nil
}

func (t *Texts) chunks(size int) [][][]string {
	c, ok := t.sizes[size]
	if !ok {
		c = cutChunks(t.pars, size, rand.New(rand.NewPCG(uint64(size), 0xc0125)))
		t.sizes[size] = c
	}
	return c
}

// Build makes a real-text corpus of the texts. It is not safe for
// concurrent use.
func (t *Texts) Build(cfg Config) (*Corpus, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 0xc0125))
	chunks := slices.Clone(t.chunks(cfg.ChunkBytes))
	r.Shuffle(len(chunks), func(i, j int) { chunks[i], chunks[j] = chunks[j], chunks[i] })
	ciph := t.ciph
	// Originals come first from the plain chunks; the other text of
	// partial copies only from enciphered ones, under generations of
	// their own, so that it never repeats an original's.
	origs := &textStream{chunks: chunks, ciph: ciph, seed: cfg.Seed}
	fill := &textStream{chunks: chunks, ciph: ciph, seed: cfg.Seed ^ 0xf111, gen: 1 << 20}

	n := cfg.Docs
	copies := int(math.Round(cfg.Dup * float64(n)))
	clusters := (copies + cfg.Cluster - 2) / (cfg.Cluster - 1)
	if copies+clusters > n {
		clusters = n - copies
	}
	// Each cluster takes random stream positions (within Window of its
	// first, with a window); its first is the original, so that every copy
	// follows its source. Unique originals take the positions left.
	var source []int // stream position of each copy's source; -1 for originals
	switch {
	case cfg.Texts > 0:
		source = rounds(r, n, cfg.Texts)
	case cfg.Window > 0:
		source = windowed(r, n, clusters, copies, cfg.Cluster, cfg.Window)
	default:
		source = spread(r, n, clusters, copies, cfg.Cluster)
	}

	name := fmt.Sprintf("real text, %.0f%% copies, clusters of %d", 100*cfg.Dup, cfg.Cluster)
	switch {
	case cfg.Texts > 0:
		name = fmt.Sprintf("real text, %d texts each copied once per round, %d rounds", cfg.Texts, cfg.Cluster)
	case cfg.Window > 0:
		name += fmt.Sprintf(" within %d documents", cfg.Window)
	}
	c := &Corpus{Name: name,
		Docs: make([]Doc, n), Truth: make([]Truth, n)}
	words := make([][][]string, n) // paragraphs of words, per position
	for i := range n {
		id := fmt.Sprintf("rt%07d", i)
		c.Docs[i].ID = id
		t := &c.Truth[i]
		t.ID = id
		if source[i] < 0 {
			words[i], t.Enciphered = origs.chunk()
			t.Kind, t.Groups = Original, []string{id}
			c.Docs[i].Text = render(words[i])
			continue
		}
		src := c.Truth[source[i]]
		t.Sources, t.Groups = []string{src.ID}, slices.Clone(src.Groups)
		switch k := r.Float64(); {
		case k < cfg.ExactShare:
			t.Kind = Exact
			c.Docs[i].Text = c.Docs[source[i]].Text
		case k < cfg.ExactShare+cfg.PartialShare:
			t.Kind = Partial
			t.Groups = append(t.Groups, id)
			c.Docs[i].Text = render(partialCopy(r, words[source[i]], fill))
		default:
			t.Kind = Near
			c.Docs[i].Text = nearCopy(r, words[source[i]], cfg.NearEdits)
		}
	}
	return c, nil
}

// spread places clusters of up to size documents (copies copies in all)
// at random positions of the whole stream of n and returns each position's
// source (-1 for an original): a cluster's original is its earliest
// position.
func spread(r *rand.Rand, n, clusters, copies, size int) []int {
	perm := r.Perm(n)
	source := make([]int, n)
	for i := range source {
		source[i] = -1
	}
	next, left := 0, copies
	for range clusters {
		k := min(size-1, left) + 1
		left -= k - 1
		pos := slices.Clone(perm[next : next+k])
		next += k
		slices.Sort(pos)
		for _, p := range pos[1:] {
			source[p] = pos[0]
		}
	}
	return source
}

// rounds lays out n positions in rounds of texts: round 0 holds the
// originals, each later round one copy of every text (the last round as
// many as are left), each round in an order of its own. It returns each
// position's source (-1 for an original): the text's original.
func rounds(r *rand.Rand, n, texts int) []int {
	source := make([]int, n)
	first := make([]int, texts)
	for p := 0; p < n; p += texts {
		order := r.Perm(texts)
		for i, t := range order[:min(texts, n-p)] {
			if p == 0 {
				source[i], first[t] = -1, i
			} else {
				source[p+i] = first[t]
			}
		}
	}
	return source
}

// windowed places clusters as spread does, but each within window
// positions: every document gets a time, a cluster's members a start
// uniform over [0, n) plus a uniform offset in [0, window) (squeezed into
// what is left of the stream for a cluster starting in its last window, so
// that clusters start at the same rate to the end), a unique original a
// time uniform over [0, n); the stream is the documents in time order, and
// a cluster's earliest member is its original.
func windowed(r *rand.Rand, n, clusters, copies, size, window int) []int {
	type item struct {
		t       float64
		cluster int // -1: a unique original
	}
	items := make([]item, 0, n)
	left := copies
	for c := range clusters {
		k := min(size-1, left) + 1
		left -= k - 1
		start := r.Float64() * float64(n)
		span := min(float64(window), float64(n)-start)
		for range k {
			items = append(items, item{start + r.Float64()*span, c})
		}
	}
	for len(items) < n {
		items = append(items, item{r.Float64() * float64(n), -1})
	}
	slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(a.t, b.t) })
	source := make([]int, n)
	first := make([]int, clusters)
	for i := range first {
		first[i] = -1
	}
	for p, it := range items {
		source[p] = -1
		if it.cluster < 0 {
			continue
		}
		if f := first[it.cluster]; f >= 0 {
			source[p] = f
		} else {
			first[it.cluster] = p
		}
	}
	return source
}

// readTexts returns the paragraphs (as words) of the Gutenberg e-texts,
// without their Project Gutenberg header and footer, and of the PAN13
// source documents.
func readTexts(dir string) ([][]string, error) {
	var pars [][]string
	for _, name := range gutenbergTexts {
		b, err := os.ReadFile(filepath.Join(dir, GutenbergFolder, "texts", name))
		if err != nil {
			return nil, fmt.Errorf("corpus: real text: %w", err)
		}
		text := string(b)
		if i := strings.Index(text, "*** START OF"); i >= 0 {
			if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
				text = text[i+j:]
			}
		}
		if i := strings.Index(text, "*** END OF"); i >= 0 {
			text = text[:i]
		}
		pars = append(pars, paragraphs(text)...)
	}
	srcs, err := filepath.Glob(filepath.Join(dir, PANFolder, "src", "source-document*.txt"))
	if err != nil {
		return nil, fmt.Errorf("corpus: real text: %w", err)
	}
	if len(srcs) == 0 {
		return nil, fmt.Errorf("corpus: real text: no PAN13 source documents in %s", filepath.Join(dir, PANFolder, "src"))
	}
	slices.Sort(srcs)
	for _, p := range srcs {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("corpus: real text: %w", err)
		}
		pars = append(pars, paragraphs(string(b))...)
	}
	return pars, nil
}

// paragraphs splits text at blank lines into paragraphs of words,
// dropping illustrations and paragraphs of fewer than six words
// (headings, tables of contents).
func paragraphs(text string) [][]string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	var out [][]string
	for par := range strings.SplitSeq(text, "\n\n") {
		par = strings.TrimSpace(par)
		if strings.HasPrefix(par, "[Illustration") || !utf8.ValidString(par) {
			continue
		}
		if ws := strings.Fields(par); len(ws) >= 6 {
			out = append(out, ws)
		}
	}
	return out
}

// cutChunks cuts the paragraphs into chunks of whole paragraphs of 80% to
// 120% of size bytes (a longer paragraph is split into pieces of about 100
// words) and keeps the distinct ones.
func cutChunks(pars [][]string, size int, r *rand.Rand) [][][]string {
	var chunks [][][]string
	var cur [][]string
	bytes, want := 0, 0
	target := func() int { return size*4/5 + r.IntN(size*2/5+1) }
	want = target()
	for _, par := range pars {
		for len(par) > 0 {
			n := min(len(par), 100)
			if len(par)-n < 30 {
				n = len(par)
			}
			piece := par[:n]
			par = par[n:]
			cur = append(cur, piece)
			bytes += textLen(piece) + 2
			if bytes >= want {
				chunks = append(chunks, cur)
				cur, bytes, want = nil, 0, target()
			}
		}
	}
	return distinct(chunks)
}

// maxShared is the share of its word 5-shingles a chunk may have in
// common with the chunks before it; distinct drops the others.
const maxShared = 0.02

// distinct drops every chunk that shares more than maxShared of its word
// 5-shingles (lower-cased, punctuation off) with the chunks kept before
// it: the PAN13 source documents repeat one another's web text, and such
// a chunk would be a duplicate the ground truth does not list.
func distinct(chunks [][][]string) [][][]string {
	seen := map[uint64]bool{}
	out := chunks[:0]
	for _, c := range chunks {
		hs := chunkShingles(c)
		shared := 0
		for _, h := range hs {
			if seen[h] {
				shared++
			}
		}
		if float64(shared) > maxShared*float64(len(hs)) {
			continue
		}
		for _, h := range hs {
			seen[h] = true
		}
		out = append(out, c)
	}
	return out
}

// chunkShingles hashes a chunk's word 5-shingles (FNV-1a over the
// lower-cased words without their leading and trailing punctuation).
func chunkShingles(c [][]string) []uint64 {
	var ws []string
	for _, par := range c {
		for _, w := range par {
			if _, core, _ := splitWord(w); core != "" {
				ws = append(ws, strings.ToLower(core))
			}
		}
	}
	var out []uint64
	for i := 0; i+5 <= len(ws); i++ {
		h := uint64(14695981039346656037)
		for _, w := range ws[i : i+5] {
			for j := 0; j < len(w); j++ {
				h = (h ^ uint64(w[j])) * 1099511628211
			}
			h = (h ^ ' ') * 1099511628211
		}
		out = append(out, h)
	}
	return out
}

func textLen(ws []string) int {
	n := len(ws) - 1
	for _, w := range ws {
		n += len(w)
	}
	return n
}

// render joins paragraphs of words: words by spaces, paragraphs by blank
// lines.
func render(pars [][]string) string {
	var b strings.Builder
	for i, par := range pars {
		if i > 0 {
			b.WriteString("\n\n")
		}
		for j, w := range par {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
	}
	return b.String()
}

// textStream hands out chunks: the plain chunks first (generation 0), then
// every chunk again under the cipher of generation 1, 2, ..., each
// generation in an order of its own.
type textStream struct {
	chunks [][][]string
	ciph   *cipher
	seed   uint64
	gen    int
	order  []int
	next   int
	// words left over of the current chunk, for take.
	rest []string
}

// chunk returns the next chunk and whether it is enciphered.
func (s *textStream) chunk() ([][]string, bool) {
	if s.order == nil || s.next == len(s.order) {
		if s.order != nil {
			s.gen++
		}
		s.order = rand.New(rand.NewPCG(s.seed, uint64(s.gen))).Perm(len(s.chunks))
		s.next = 0
	}
	c := s.chunks[s.order[s.next]]
	s.next++
	if s.gen == 0 {
		return c, false
	}
	out := make([][]string, len(c))
	for i, par := range c {
		out[i] = s.ciph.apply(par, s.seed, s.gen)
	}
	return out, true
}

// take returns the next n words of the stream, across chunks.
func (s *textStream) take(n int) []string {
	var out []string
	for len(out) < n {
		if len(s.rest) == 0 {
			pars, _ := s.chunk()
			for _, p := range pars {
				s.rest = append(s.rest, p...)
			}
		}
		k := min(n-len(out), len(s.rest))
		out = append(out, s.rest[:k]...)
		s.rest = s.rest[k:]
	}
	return out
}

// cipher replaces words by others of about the same frequency: the
// vocabulary (words lower-cased, leading and trailing punctuation off)
// sorted by frequency, and permuted within blocks of 64 by a permutation
// of each generation.
type cipher struct {
	vocab []string       // by rank
	rank  map[string]int // word → rank
}

const cipherBlock = 64

func newCipher(pars [][]string) *cipher {
	freq := map[string]int{}
	for _, par := range pars {
		for _, w := range par {
			if _, core, _ := splitWord(w); core != "" {
				freq[strings.ToLower(core)]++
			}
		}
	}
	c := &cipher{rank: make(map[string]int, len(freq))}
	for w := range freq {
		c.vocab = append(c.vocab, w)
	}
	slices.SortFunc(c.vocab, func(a, b string) int {
		if freq[a] != freq[b] {
			return freq[b] - freq[a]
		}
		return strings.Compare(a, b)
	})
	for i, w := range c.vocab {
		c.rank[w] = i
	}
	return c
}

// apply enciphers words under generation gen (> 0).
func (c *cipher) apply(ws []string, seed uint64, gen int) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		pre, core, post := splitWord(w)
		rk, ok := c.rank[strings.ToLower(core)]
		if !ok {
			out[i] = w
			continue
		}
		out[i] = pre + matchCase(core, c.vocab[c.mapRank(rk, seed, gen)]) + post
	}
	return out
}

// mapRank is the permutation of generation gen within rk's block: an
// affine map i → (a·i + b) mod size with a odd, so a bijection on a
// power-of-two block, and on the last, shorter block a rotation.
func (c *cipher) mapRank(rk int, seed uint64, gen int) int {
	base := rk / cipherBlock * cipherBlock
	size := min(cipherBlock, len(c.vocab)-base)
	h := mix(seed ^ uint64(gen)*0x9e3779b97f4a7c15 ^ uint64(base))
	i := rk - base
	if size == cipherBlock {
		a, b := int(h%cipherBlock)|1, int(h>>8%cipherBlock)
		return base + (a*i+b)%cipherBlock
	}
	return base + (i+int(h%uint64(size)))%size
}

func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	return x ^ x>>33
}

// splitWord splits a token into leading punctuation, the word and
// trailing punctuation.
func splitWord(w string) (pre, core, post string) {
	isW := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	i := strings.IndexFunc(w, isW)
	if i < 0 {
		return w, "", ""
	}
	j := strings.LastIndexFunc(w, isW)
	_, sz := utf8.DecodeRuneInString(w[j:])
	return w[:i], w[i : j+sz], w[j+sz:]
}

// matchCase gives w the case pattern of like: all upper, capitalized or
// lower.
func matchCase(like, w string) string {
	first, _ := utf8.DecodeRuneInString(like)
	switch {
	case len(like) > 1 && strings.ToUpper(like) == like && strings.ToLower(like) != like:
		return strings.ToUpper(w)
	case unicode.IsUpper(first):
		r, sz := utf8.DecodeRuneInString(w)
		return string(unicode.ToUpper(r)) + w[sz:]
	}
	return w
}

// editWords are what a near copy substitutes or inserts.
var editWords = []string{"indeed", "quite", "very", "then", "also", "rather", "still", "perhaps", "certainly", "now",
	"the", "a", "much", "just", "so", "even", "truly", "again", "often", "almost"}

// nearCopy is a source's text with a share edits of its words
// substituted, deleted or inserted, and case and punctuation noise: some
// words' case flipped, some trailing punctuation dropped or changed,
// straight quotes made typographic, and at times a paragraph break moved.
func nearCopy(r *rand.Rand, pars [][]string, edits float64) string {
	caseRate, punctRate := 0.005+0.02*r.Float64(), 0.01+0.03*r.Float64()
	curly := r.IntN(2) == 0
	out := make([][]string, 0, len(pars))
	for _, par := range pars {
		var ws []string
		for _, w := range par {
			if r.Float64() < edits {
				switch r.IntN(3) {
				case 0: // substitute
					ws = append(ws, editWords[r.IntN(len(editWords))])
				case 1: // delete
				case 2: // insert
					ws = append(ws, editWords[r.IntN(len(editWords))], w)
				}
				continue
			}
			if r.Float64() < caseRate {
				if strings.ToUpper(w) == w {
					w = strings.ToLower(w)
				} else {
					w = strings.ToUpper(w)
				}
			}
			if r.Float64() < punctRate {
				pre, core, post := splitWord(w)
				switch {
				case post != "":
					post = ""
				case core != "":
					post = [...]string{",", ";", ".", "!", " -"}[r.IntN(5)]
				}
				w = pre + core + post
			}
			if curly {
				w = curlyQuotes(w)
			}
			ws = append(ws, w)
		}
		if len(ws) > 0 {
			out = append(out, ws)
		}
	}
	if len(out) > 1 && r.IntN(3) == 0 { // join two paragraphs
		k := r.IntN(len(out) - 1)
		out[k] = append(slices.Clone(out[k]), out[k+1]...)
		out = slices.Delete(out, k+1, k+2)
	}
	return render(out)
}

// curlyQuotes makes a word's straight quotes typographic.
func curlyQuotes(w string) string {
	if !strings.ContainsAny(w, `'"`) {
		return w
	}
	var b strings.Builder
	for i, c := range w {
		switch {
		case c == '\'':
			b.WriteRune('’')
		case c == '"' && i == 0:
			b.WriteRune('“')
		case c == '"':
			b.WriteRune('”')
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// partialCopy is a passage of 30% to 60% of a source's words (at least 150,
// or the whole source when shorter) inside other text from fill, the
// whole about as long as the source: the passage starts at a random word
// and goes in at a random point of the other text.
func partialCopy(r *rand.Rand, pars [][]string, fill *textStream) [][]string {
	var all []string
	for _, p := range pars {
		all = append(all, p...)
	}
	n := min(len(all), max(150, int(float64(len(all))*(0.3+0.3*r.Float64()))))
	start := r.IntN(len(all) - n + 1)
	passage := all[start : start+n]
	other := fill.take(max(len(all)-n, 50))
	at := r.IntN(len(other) + 1)
	var out [][]string
	out = append(out, splitWords(other[:at])...)
	out = append(out, splitWords(passage)...)
	out = append(out, splitWords(other[at:])...)
	return out
}

// splitWords cuts words into paragraphs of about 100.
func splitWords(ws []string) [][]string {
	var out [][]string
	for len(ws) > 0 {
		n := min(len(ws), 100)
		out = append(out, ws[:n:n])
		ws = ws[n:]
	}
	return out
}
