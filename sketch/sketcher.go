package sketch

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"slices"
	"unicode/utf8"
)

// ErrTooLarge is returned for documents over [Config.MaxBytes].
var ErrTooLarge = errors.New("sketch: document too large")

// Method names a MinHash variant.
type Method string

const (
	// OnePerm is one-permutation MinHash with optimal densification: O(n+K).
	OnePerm Method = "oph"
	// Classic is K-permutation MinHash: O(n·K).
	Classic Method = "classic"
)

// Config holds every parameter that changes the features of a document.
// Stored signatures are only comparable between identical Configs; the index
// records them and refuses to mix.
type Config struct {
	Normalize Normalization
	// Shingle is w, the words per shingle (default 5, as in the CiteSeerX
	// study). Documents with fewer than w tokens get one shingle of all of
	// them.
	Shingle int
	// CharGram, when > 0, shingles by character n-grams of the normalized
	// text (tokens joined by single spaces) instead of word w-grams: the
	// sentence mode of the Wikipedia LSH study.
	CharGram int
	// K is the MinHash signature length (default 128).
	K int
	// Method is the MinHash variant (default OnePerm).
	Method Method
	// Seed seeds every hash family (default 1).
	Seed uint64
	// SimHashIDF weights SimHash tokens by lexicon idf instead of equally.
	SimHashIDF bool
	// SkipSimHash leaves [Features.SimHash] zero, for a caller that
	// neither indexes nor verifies it (the pipeline when the SimHash lane
	// is off and no check reads it): it costs about a tenth of sketching
	// a page. The stored encoding writes the SimHash only when
	// [Limits.SimHash] asks for it.
	SkipSimHash bool
	// SkipShingleSet leaves [Features.Shingles] empty when the passage
	// lane has the document's shingles in order (it is on, and the
	// document has at most [MaxPassageTokens] tokens), for a caller that
	// reads the set only through [Sketcher.Encode] (the pipeline):
	// ShingleCount is counted in a hash table instead of sorting the set,
	// the signature is taken over the shingles in order (a MinHash is a
	// minimum: repeats and order do not change it), and Encode samples
	// the stored set from them. The signature, the count and the encoding
	// are those computed from the set.
	SkipShingleSet bool
	// SkipUnique leaves [Features.Unique] empty, for a caller that
	// neither stores nor verifies the unique-word sequence (the pipeline
	// when its profile has no LCS check, as the web profile): it skips
	// marking which tokens occur once and collecting them. The I-Match
	// digest, which reads the distinct tokens, is computed either way.
	SkipUnique bool
	// IMatch configures the I-Match digest (default [DefaultIMatch]).
	IMatch IMatch
	// UniqueKeepDigits keeps tokens containing digits in the unique-word
	// sequence; DUPNIQ drops them (default false).
	UniqueKeepDigits bool
	// KeepText keeps the normalized text in [Features.Text] for documents
	// whose normalized text is at most this many bytes (default 0: never).
	KeepText int
	// MaxBytes bounds the input size (default 16 MiB); larger documents
	// fail with [ErrTooLarge].
	MaxBytes int
	// PassageWords, when > 0, computes [Features.Passage]: winnowing
	// anchors such that two documents sharing a passage of at least this
	// many words share an anchor, and what aligning the passages needs.
	// Word shingles only (ignored with CharGram). 0: no passage lane.
	PassageWords int
	// Sentence, when On, also sketches each sentence of the document
	// ([Features.Sentences]): sentence mode.
	Sentence SentenceConfig
}

// DefaultMaxBytes is the default document size limit.
const DefaultMaxBytes = 16 << 20

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Shingle == 0 {
		c.Shingle = 5
	}
	if c.K == 0 {
		c.K = 128
	}
	if c.Method == "" {
		c.Method = OnePerm
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.IMatch == (IMatch{}) {
		c.IMatch = DefaultIMatch()
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.Sentence.On {
		c.Sentence = c.Sentence.WithDefaults()
	}
	return c
}

// DefaultConfig returns the default sketch configuration.
func DefaultConfig() Config { return Config{Normalize: DefaultNormalization()}.WithDefaults() }

// Validate reports the first invalid field.
func (c Config) Validate() error {
	switch {
	case c.Shingle < 1 || c.Shingle > 64:
		return fmt.Errorf("sketch: shingle %d: want 1..64", c.Shingle)
	case c.CharGram < 0 || c.CharGram > 64:
		return fmt.Errorf("sketch: char gram %d: want 0..64", c.CharGram)
	case c.K < 1 || c.K > 4096:
		return fmt.Errorf("sketch: K %d: want 1..4096", c.K)
	case c.Method != OnePerm && c.Method != Classic:
		return fmt.Errorf("sketch: method %q: want %q or %q", c.Method, OnePerm, Classic)
	case c.KeepText < 0:
		return fmt.Errorf("sketch: keep text %d: want >= 0", c.KeepText)
	case c.PassageWords != 0 && (c.PassageWords < c.Shingle || c.PassageWords > 10000):
		return fmt.Errorf("sketch: passage words %d: want 0 or %d..10000", c.PassageWords, c.Shingle)
	case c.MaxBytes < 1:
		return fmt.Errorf("sketch: max bytes %d: want > 0", c.MaxBytes)
	case c.IMatch.Mode != IMatchIDF && c.IMatch.Mode != IMatchDoc:
		return fmt.Errorf("sketch: imatch mode %q: want %q or %q", c.IMatch.Mode, IMatchIDF, IMatchDoc)
	case c.IMatch.Cutoff < 0 || c.IMatch.Cutoff > 1 || c.IMatch.Keep <= 0 || c.IMatch.Keep > 1:
		return fmt.Errorf("sketch: imatch cutoff %v / keep %v: want cutoff in [0,1], keep in (0,1]", c.IMatch.Cutoff, c.IMatch.Keep)
	}
	return c.Sentence.Validate()
}

// UniqueWord is one entry of a DUPNIQ sequence: a word that occurs exactly
// once in its document, and its position in the document's token sequence.
type UniqueWord struct {
	Hash uint64
	Pos  uint32
}

// ContentDigest identifies a document's whole normalized token stream:
// the first 16 bytes of the SHA-256 of its tokens' bytes, concatenated,
// followed by each token's length in bytes (uvarint):
// the information of the tokens joined by single spaces (the text
// [Features].Text would hold), without building that text. Two documents have equal digests
// exactly when their normalized texts are equal, up to a 2^-64 birthday
// bound: the only test neardup uses to call a document an exact copy.
type ContentDigest [16]byte

// Features is everything neardup derives from one document.
type Features struct {
	// Host identifies the web site the document came from (the caller's
	// hash of its url's host; 0: none). Sketching does not set it; it is
	// stored with the features, so that a later document knows which of
	// its candidates are pages of its own site (pipeline/template.go).
	Host uint64
	// Tokens is the number of tokens after normalization, of the part
	// sketched (the first [MaxSketchBytes]).
	Tokens int
	// Content is the digest of the whole normalized token stream (not of a
	// sample): equal digests mean equal normalized texts.
	Content ContentDigest
	// Shingles is the sorted set of distinct shingle hashes.
	Shingles []uint64
	// ShingleCount is the number of distinct shingles of the whole
	// document; decoded features may hold only a sample of them in
	// Shingles (see [Limits]).
	ShingleCount int
	// Signature is the MinHash signature of Shingles.
	Signature Signature
	// SimHash is the 64-bit SimHash of the token sequence.
	SimHash uint64
	// IMatch is the I-Match digest; HasIMatch is false when too few terms
	// survived the filter.
	IMatch    Digest
	HasIMatch bool
	// Unique is the DUPNIQ sequence: words occurring exactly once, in
	// document order.
	Unique []UniqueWord
	// Text is the normalized text (tokens joined by single spaces), kept
	// only when it is at most [Config.KeepText] bytes; nil otherwise. The
	// sentence profile verifies short texts by edit similarity on it.
	Text []byte
	// ShingleShift and UniqueShift are the sampling shifts of decoded
	// features (see [Limits]): Shingles and Unique hold only the entries
	// whose hash has that many low zero bits. Zero for fresh features.
	ShingleShift, UniqueShift byte
	// Passage is what passage alignment reads; empty unless
	// [Config.PassageWords] is set (and, decoded, unless stored).
	Passage Passage
	// Sentences are the sketched sentences; empty unless
	// [Config.Sentence] is on (and, decoded, unless stored).
	Sentences Sentences
}

// Clone returns a deep copy of f that does not share buffers with it.
func (f *Features) Clone() *Features {
	c := *f
	c.Shingles = slices.Clone(f.Shingles)
	c.Signature = slices.Clone(f.Signature)
	c.Unique = slices.Clone(f.Unique)
	c.Text = slices.Clone(f.Text)
	c.Passage = Passage{
		Fp: slices.Clone(f.Passage.Fp), Anchors: slices.Clone(f.Passage.Anchors),
		Starts: slices.Clone(f.Passage.Starts), Ends: slices.Clone(f.Passage.Ends),
	}
	c.Sentences = f.Sentences.clone()
	return &c
}

// Sketcher computes [Features]. It owns reusable buffers: after the first
// few documents, Sketch allocates nothing when the caller reuses the
// Features value. Not safe for concurrent use.
type Sketcher struct {
	cfg    Config
	norm   *Normalizer
	signer Signer
	lex    *Lexicon
	powW   uint64 // P^w for the rolling shingle hash

	tok Tokens
	// keys and pos are countTokens' table (hashes, counts), or the token
	// hashes sorted with their positions (countTokensSorted).
	keys  []uint64
	pos   []uint32
	sort  hashSorter
	once  []bool   // once[i]: token i occurs exactly once
	slots []uint32 // slots[i]: token i's entry in countTokens' table
	dist  []uint64
	im    imatchScratch
	gram  []byte
	sha   hash.Hash // the content digest's SHA-256
	ends  []byte    // the tokens' lengths, for the content digest
	sum   []byte
	seq   []uint64 // shingle hashes in document order (passage lane)
	// seqSet: the last document's Shingles were left empty
	// (Config.SkipShingleSet); Encode samples them from seq.
	seqSet bool
	set    []uint64 // countDistinct's table

	// Sentence mode.
	split      SentenceSplitter
	sents      []Sentence
	stok       Tokens
	sgrams     []uint64
	ssig       Signature
	sentSigner Signer
}

// New returns a Sketcher for cfg (defaults applied). lex may be nil, in
// which case [DefaultLexicon] is used.
func New(cfg Config, lex *Lexicon) (*Sketcher, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if lex == nil {
		lex = DefaultLexicon()
	}
	s := &Sketcher{cfg: cfg, norm: NewNormalizer(cfg.Normalize), lex: lex}
	s.im.prepare(cfg.IMatch, lex)
	if cfg.Method == Classic {
		s.signer = NewMinHash(cfg.K, cfg.Seed)
	} else {
		s.signer = NewOnePermutation(cfg.K, cfg.Seed)
	}
	s.powW = 1
	for range cfg.Shingle {
		s.powW *= shinglePrime
	}
	return s, nil
}

// Config returns the configuration in effect, defaults applied.
func (s *Sketcher) Config() Config { return s.cfg }

// Signer returns the MinHash signer in use.
func (s *Sketcher) Signer() Signer { return s.signer }

// Lexicon returns the lexicon in use.
func (s *Sketcher) Lexicon() *Lexicon { return s.lex }

// Tokens returns the tokens of the last document sketched. They are
// overwritten by the next call.
func (s *Sketcher) Tokens() *Tokens { return &s.tok }

// ShingleSeq returns the shingle hashes of the last document sketched in
// document order, one per position of its passage section: valid only
// when that section is not empty, overwritten by the next call.
func (s *Sketcher) ShingleSeq() []uint64 { return s.seq }

// Sketch computes the features of text into f, reusing f's slices.
func (s *Sketcher) Sketch(text []byte, f *Features) error {
	if len(text) > s.cfg.MaxBytes {
		return fmt.Errorf("%w: %d bytes > limit %d", ErrTooLarge, len(text), s.cfg.MaxBytes)
	}
	text, rest := sketchedPart(text)
	s.norm.Tokenize(text, &s.tok)
	f.Tokens = s.tok.Len()
	f.Content = s.contentDigest(rest)
	f.Passage.reset()
	if s.cfg.PassageWords > 0 && s.cfg.CharGram == 0 && f.Tokens > 0 {
		s.passage(text, f)
	}
	s.seqSet = false
	switch {
	case len(f.Passage.Fp) > 0 && f.Tokens <= MaxPassageTokens && s.cfg.SkipShingleSet:
		f.Shingles = f.Shingles[:0]
		f.ShingleCount = s.countDistinct(s.seq)
		f.Signature = s.signer.Sign(f.Signature, s.seq)
		s.seqSet = true
	case len(f.Passage.Fp) > 0 && f.Tokens <= MaxPassageTokens:
		// The passage lane has the shingles in document order already.
		f.Shingles = append(f.Shingles[:0], s.seq...)
		s.sort.sort(f.Shingles, nil)
		f.Shingles = slices.Compact(f.Shingles)
	default:
		f.Shingles = s.ShingleSet(f.Shingles[:0])
	}
	if !s.seqSet {
		f.ShingleCount = len(f.Shingles)
		f.Signature = s.signer.Sign(f.Signature, f.Shingles)
	}

	switch {
	case s.cfg.SkipSimHash:
		f.SimHash = 0
	case s.cfg.SimHashIDF:
		f.SimHash = SimHashWeighted(s.tok.Hash, s.lex.IDF)
	default:
		f.SimHash = SimHash(s.tok.Hash)
	}
	s.countTokens(!s.cfg.SkipUnique)
	f.IMatch, f.HasIMatch = s.cfg.IMatch.digest(s.dist, s.lex, &s.im)
	f.Unique = f.Unique[:0]
	if !s.cfg.SkipUnique {
		for i, h := range s.tok.Hash {
			if s.once[i] && (s.cfg.UniqueKeepDigits || !s.tok.HasDigit[i]) {
				f.Unique = append(f.Unique, UniqueWord{Hash: h, Pos: uint32(i)})
			}
		}
	}
	f.Sentences.reset()
	if s.cfg.Sentence.On {
		s.sentences(text, f)
	}
	f.Text = f.Text[:0]
	if s.cfg.KeepText > 0 {
		// The joined text is one byte per token longer than the tokens.
		if n := len(s.tok.Text) + max(s.tok.Len()-1, 0); n <= s.cfg.KeepText {
			f.Text = s.joinedText(f.Text)
		}
	}
	if len(f.Text) == 0 {
		f.Text = nil
	}
	return nil
}

// Encode appends the storage encoding of f to dst ([Features.AppendBinary])
// and writes into stored what that encoding decodes to
// ([Features.Stored]): the same bytes and the same stored features as the
// two calls, with the shingles sampled and sorted once, by a radix pass in
// the sketcher's scratch. f is usually the features Sketch just computed.
//
// With [Config.SkipShingleSet], f must be the features Sketch just
// computed when their Shingles were left empty: the stored sample is then
// taken from the shingles in document order.
func (s *Sketcher) Encode(dst []byte, f, stored *Features, lim Limits) []byte {
	var seq []uint64
	if s.seqSet && len(f.Shingles) == 0 && f.ShingleCount > 0 {
		seq = s.seq
	}
	f.stored(stored, lim, &s.sort, seq)
	return f.appendBinary(dst, lim, stored)
}

// countDistinct returns how many distinct values hs holds, counting them
// in an open-addressing table (s.set, at most half full, 0 marking an
// empty slot and a zero value counted apart). Shingle hashes are uniform,
// so probes are short; should they not be (inputs made to collide), it
// counts by sorting once the probes exceed a bound linear in len(hs).
func (s *Sketcher) countDistinct(hs []uint64) int {
	size := 16
	for size < 2*len(hs) {
		size <<= 1
	}
	s.set = slices.Grow(s.set[:0], size)[:size]
	clear(s.set)
	mask := uint64(size - 1)
	n, zero := 0, 0
	probes, bound := 0, 8*len(hs)+64
	for _, h := range hs {
		if h == 0 {
			zero = 1
			continue
		}
		k := h & mask
		for s.set[k] != 0 && s.set[k] != h {
			k = (k + 1) & mask
			if probes++; probes > bound {
				s.set = append(s.set[:0], hs...)
				s.sort.sort(s.set, nil)
				return len(slices.Compact(s.set))
			}
		}
		if s.set[k] == 0 {
			s.set[k] = h
			n++
		}
	}
	return n + zero
}

// countTokens fills s.dist with the distinct token hashes in ascending
// order and, when once is set, s.once with the positions of tokens that
// occur exactly once.
// It counts the tokens in an open-addressing table (s.keys, with the
// counts in s.pos, at most half full) and sorts only the distinct hashes:
// about half the work of sorting every token with its position. Token
// hashes are uniform, so probes are short; should they not be (inputs
// made to collide), it falls back to the sort once the probes exceed a
// bound linear in the tokens.
func (s *Sketcher) countTokens(once bool) {
	n := s.tok.Len()
	size := 16
	for size < 2*n {
		size <<= 1
	}
	s.keys = slices.Grow(s.keys[:0], size)[:size]
	s.pos = slices.Grow(s.pos[:0], size)[:size]
	clear(s.pos)
	s.slots = slices.Grow(s.slots[:0], n)[:n]
	s.dist = s.dist[:0]
	mask := uint64(size - 1)
	probes, bound := 0, 8*n+64
	for i, h := range s.tok.Hash {
		k := h & mask
		for s.pos[k] != 0 && s.keys[k] != h {
			k = (k + 1) & mask
			if probes++; probes > bound {
				s.countTokensSorted()
				return
			}
		}
		if s.pos[k] == 0 {
			s.keys[k] = h
			s.dist = append(s.dist, h)
		}
		s.pos[k]++
		s.slots[i] = uint32(k)
	}
	if once {
		s.once = slices.Grow(s.once[:0], n)[:n]
		for i, k := range s.slots {
			s.once[i] = s.pos[k] == 1
		}
	}
	s.sort.sort(s.dist, nil)
}

// countTokensSorted is countTokens by sorting the token hashes with their
// positions: the same result, in O(n log n) whatever the hashes.
func (s *Sketcher) countTokensSorted() {
	n := s.tok.Len()
	s.keys = append(s.keys[:0], s.tok.Hash...)
	s.pos = s.pos[:0]
	for i := range n {
		s.pos = append(s.pos, uint32(i))
	}
	s.sort.sort(s.keys, s.pos)
	s.once = slices.Grow(s.once[:0], n)[:n]
	clear(s.once)
	s.dist = s.dist[:0]
	for i := 0; i < n; {
		j := i + 1
		for j < n && s.keys[j] == s.keys[i] {
			j++
		}
		s.dist = append(s.dist, s.keys[i])
		if j == i+1 {
			s.once[s.pos[i]] = true
		}
		i = j
	}
}

// MaxSketchBytes bounds the text a document's features are computed from:
// a longer document is sketched from its first MaxSketchBytes bytes (cut
// after a space or line break when there is one in the last 4 KiB, else
// between two UTF-8 sequences), and only its content digest covers the
// rest, byte for byte. This bounds a document's working memory (tokens,
// shingles, sort scratch: up to about 60 bytes per byte sketched, see
// docs/operations.md, "Memory budget") whatever the input size. Two
// documents that differ only after the cut are near duplicates of
// resemblance 1, not exact copies, unless the rest is the same bytes.
const MaxSketchBytes = 4 << 20

// sketchedPart splits text into the part sketched and the rest (see
// [MaxSketchBytes]).
func sketchedPart(text []byte) (head, rest []byte) {
	if len(text) <= MaxSketchBytes {
		return text, nil
	}
	cut := MaxSketchBytes
	if i := bytes.LastIndexAny(text[cut-4096:cut], " \t\r\n"); i >= 0 {
		cut = cut - 4096 + i + 1
	} else {
		for cut > MaxSketchBytes-utf8.UTFMax && !utf8.RuneStart(text[cut]) {
			cut--
		}
	}
	return text[:cut], text[cut:]
}

// contentDigest returns the [ContentDigest] of the last tokenized
// document, followed by rest, the bytes after the part sketched (none for
// a document of at most [MaxSketchBytes]: the digest is then that of its
// tokens alone).
func (s *Sketcher) contentDigest(rest []byte) ContentDigest {
	if s.sha == nil {
		s.sha = sha256.New()
	}
	s.sha.Reset()
	s.sha.Write(s.tok.Text)
	// A token's length is one uvarint byte (under 128 bytes) but for
	// the rare long token: that byte is written inline.
	ends := slices.Grow(s.ends[:0], len(s.tok.End))
	start := uint32(0)
	for _, e := range s.tok.End {
		if n := e - start; n < 0x80 {
			ends = append(ends, byte(n))
		} else {
			ends = binary.AppendUvarint(ends, uint64(n))
		}
		start = e
	}
	s.ends = ends
	s.sha.Write(s.ends)
	if len(rest) > 0 {
		// The uvarint 0 is no token length: no document of at most
		// MaxSketchBytes has this digest input.
		s.sha.Write([]byte{0})
		s.sha.Write(rest)
	}
	s.sum = s.sha.Sum(s.sum[:0])
	return ContentDigest(s.sum[:len(ContentDigest{})])
}

// joinedText appends the normalized tokens joined by single spaces.
func (s *Sketcher) joinedText(dst []byte) []byte {
	for i := range s.tok.Len() {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, s.tok.Word(i)...)
	}
	return dst
}

// Shingles tokenizes text and appends its sorted distinct shingle hashes
// to dst: the exact set without the other features.
func (s *Sketcher) Shingles(dst []uint64, text []byte) []uint64 {
	s.norm.Tokenize(text, &s.tok)
	return s.ShingleSet(dst)
}

// ShingleSet appends the sorted distinct shingle hashes of the last
// tokenized document to dst.
func (s *Sketcher) ShingleSet(dst []uint64) []uint64 {
	start := len(dst)
	if s.cfg.CharGram > 0 {
		dst = s.charGrams(dst)
	} else {
		dst = wordShingles(dst, s.tok.Hash, s.cfg.Shingle, s.powW)
	}
	set := dst[start:]
	s.sort.sort(set, nil)
	return dst[:start+len(slices.Compact(set))]
}

// AppendShingles appends the [ShingleHash] of every window of w
// consecutive tokens, in document order and with repeats (one hash when
// there are fewer than w tokens), rolling the polynomial in O(1) per window.
func AppendShingles(dst, toks []uint64, w int) []uint64 {
	powW := uint64(1)
	for range w {
		powW *= shinglePrime
	}
	return wordShingles(dst, toks, w, powW)
}

func wordShingles(dst, toks []uint64, w int, powW uint64) []uint64 {
	if len(toks) == 0 {
		return dst
	}
	if len(toks) < w {
		return append(dst, ShingleHash(toks))
	}
	// Prime the first window, then roll: one branch-free step per shingle
	// written by index into space grown once.
	var s uint64
	for _, t := range toks[:w] {
		s = s*shinglePrime + t
	}
	n := len(toks) - w + 1
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	out := dst[start:]
	out[0] = Mix64(s)
	old, next := toks[:n-1], toks[w:]
	for i := range next[:len(old)] {
		s = s*shinglePrime + next[i] - old[i]*powW
		out[i+1] = Mix64(s)
	}
	return dst
}

// charGrams appends the [TokenHash] of every window of n characters of the
// normalized tokens joined by single spaces.
func (s *Sketcher) charGrams(dst []uint64) []uint64 {
	s.gram = s.joinedText(s.gram[:0])
	return appendCharGrams(dst, s.gram, s.cfg.CharGram)
}

func appendCharGrams(dst []uint64, text []byte, n int) []uint64 {
	// starts holds the byte offsets of the last n+1 rune starts, as a ring.
	var ring [65]int
	count := 0
	for i := range text {
		if text[i]&0xC0 == 0x80 { // continuation byte
			continue
		}
		ring[count%(n+1)] = i
		count++
		if count > n {
			dst = append(dst, TokenHash(text[ring[(count-n-1)%(n+1)]:i]))
		}
	}
	if count >= n && count > 0 {
		dst = append(dst, TokenHash(text[ring[(count-n)%(n+1)]:]))
	} else if count > 0 {
		dst = append(dst, TokenHash(text))
	}
	return dst
}
