package sketch

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// SentenceConfig configures sentence mode: besides the document, each
// sentence of it is sketched on its own, as Ayhan et al. do for Wikipedia
// (docs/sentence-mode.md): MinHash over character shingles of the
// sentence's normalized text, cut into LSH bands.
type SentenceConfig struct {
	// On turns sentence mode on.
	On bool
	// CharGram is the character shingle length (default 10, the paper's
	// choice when edit distance is the final filter).
	CharGram int
	// Bands and Rows cut each sentence's MinHash signature of Bands·Rows
	// values (default 10 × 8, the paper's recommendation: P(candidate) is
	// 0.84 at shingle Jaccard 0.8, 0.45 at 0.7).
	Bands, Rows int
	// MinChars and MaxChars bound the sentences sketched, in code points
	// of the trimmed sentence (defaults 40 and 1,000): shorter ones
	// ("See also.") match by accident, longer ones are rarely sentences.
	MinChars, MaxChars int
	// MaxSentences bounds the sentences sketched per document (default
	// 256); the rest are counted in [Sentences.Skipped].
	MaxSentences int
}

// WithDefaults returns c with zero fields set to their defaults.
func (c SentenceConfig) WithDefaults() SentenceConfig {
	if c.CharGram == 0 {
		c.CharGram = 10
	}
	if c.Bands == 0 {
		c.Bands = 10
	}
	if c.Rows == 0 {
		c.Rows = 8
	}
	if c.MinChars == 0 {
		c.MinChars = 40
	}
	if c.MaxChars == 0 {
		c.MaxChars = 1000
	}
	if c.MaxSentences == 0 {
		c.MaxSentences = 256
	}
	return c
}

// MaxSentenceKeys bounds Bands × MaxSentences: every key is one bucket of
// the index's passage table, which takes at most 4,096 per document with
// the passage anchors (at most [MaxAnchors]).
const MaxSentenceKeys = 3072

// Validate reports the first invalid field.
func (c SentenceConfig) Validate() error {
	switch {
	case !c.On:
		return nil
	case c.CharGram < 1 || c.CharGram > 64:
		return fmt.Errorf("sketch: sentence char gram %d: want 1..64", c.CharGram)
	case c.Bands < 1 || c.Rows < 1 || c.Bands*c.Rows > 4096:
		return fmt.Errorf("sketch: sentence bands %d × rows %d: want ≥ 1 each and at most 4096 values", c.Bands, c.Rows)
	case c.MinChars < 1 || c.MaxChars < c.MinChars:
		return fmt.Errorf("sketch: sentence chars %d..%d: want 1 ≤ min ≤ max", c.MinChars, c.MaxChars)
	case c.MaxSentences < 1 || c.Bands*c.MaxSentences > MaxSentenceKeys:
		return fmt.Errorf("sketch: %d sentences × %d bands: want 1..%d keys per document", c.MaxSentences, c.Bands, MaxSentenceKeys)
	}
	return nil
}

// Sentences are a document's sketched sentences (sentence mode).
type Sentences struct {
	// Bands is the number of band keys per sentence, Rows the MinHash
	// values per band.
	Bands, Rows int
	// Items are the sketched sentences in text order.
	Items []SentenceItem
	// Skipped counts the sentences not sketched: shorter than MinChars,
	// longer than MaxChars, without words, or beyond MaxSentences.
	Skipped int
}

// SentenceItem is one sketched sentence.
type SentenceItem struct {
	// Offset and Length place the sentence in the text as received, in
	// Unicode code points (for html input, of the extracted text).
	Offset, Length int
	// Keys are its LSH band keys, key i of band i (decoded: their top 32
	// bits).
	Keys []uint64
	// Sig holds the low 8 bits of each of its Bands·Rows MinHash values
	// (b-bit minwise hashing, Li and König 2010): two sentences agree on a
	// position with probability J + (1 − J)/256 for the Jaccard
	// resemblance J of their shingle sets, which estimates J for every
	// pair of sentences of two documents, not only those sharing a band.
	Sig []byte
	// Text is the sentence as received, trimmed.
	Text []byte
}

func (s *Sentences) reset() {
	s.Bands, s.Rows, s.Skipped = 0, 0, 0
	s.Items = s.Items[:0]
}

// item returns the next item of s for reuse, growing Items by one.
func (s *Sentences) item() *SentenceItem {
	if len(s.Items) < cap(s.Items) {
		s.Items = s.Items[:len(s.Items)+1]
	} else {
		s.Items = append(s.Items, SentenceItem{})
	}
	return &s.Items[len(s.Items)-1]
}

// sentences sketches the sentences of text into f.Sentences.
func (s *Sketcher) sentences(text []byte, f *Features) {
	c := s.cfg.Sentence
	out := &f.Sentences
	out.reset()
	out.Bands, out.Rows = c.Bands, c.Rows
	if s.sentSigner == nil {
		s.sentSigner = NewOnePermutation(c.Bands*c.Rows, s.cfg.Seed)
	}
	s.sents = s.split.Split(text, s.sents[:0])
	for _, sn := range s.sents {
		if sn.Length < c.MinChars || sn.Length > c.MaxChars || len(out.Items) == c.MaxSentences {
			out.Skipped++
			continue
		}
		body := text[sn.Start:sn.End]
		s.norm.Tokenize(body, &s.stok)
		if s.stok.Len() == 0 {
			out.Skipped++
			continue
		}
		s.gram = s.gram[:0]
		for i := range s.stok.Len() {
			if i > 0 {
				s.gram = append(s.gram, ' ')
			}
			s.gram = append(s.gram, s.stok.Word(i)...)
		}
		s.sgrams = appendCharGrams(s.sgrams[:0], s.gram, c.CharGram)
		s.sort.sort(s.sgrams, nil)
		s.sgrams = slices.Compact(s.sgrams)
		s.ssig = s.sentSigner.Sign(s.ssig, s.sgrams)
		it := out.item()
		it.Offset, it.Length = sn.Offset, sn.Length
		it.Keys = BandKeys(it.Keys, s.ssig, c.Bands, c.Rows)
		it.Sig = it.Sig[:0]
		for _, v := range s.ssig {
			it.Sig = append(it.Sig, byte(v))
		}
		it.Text = append(it.Text[:0], body...)
	}
}

// appendSentences appends the sentence section:
//
//	varint bands; varint rows; varint skipped; varint n; per sentence:
//	varint offset delta (from the previous sentence's end), varint length,
//	bands × 4 bytes top 32 bits of the keys (little-endian), bands × rows
//	bytes of b-bit signature, varint text length and the text
func (s *Sentences) appendSentences(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(s.Bands))
	dst = binary.AppendUvarint(dst, uint64(s.Rows))
	dst = binary.AppendUvarint(dst, uint64(s.Skipped))
	dst = binary.AppendUvarint(dst, uint64(len(s.Items)))
	end := 0
	for _, it := range s.Items {
		dst = binary.AppendUvarint(dst, uint64(it.Offset-end))
		dst = binary.AppendUvarint(dst, uint64(it.Length))
		end = it.Offset + it.Length
		for _, k := range it.Keys {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(k>>32))
		}
		dst = append(dst, it.Sig...)
		dst = binary.AppendUvarint(dst, uint64(len(it.Text)))
		dst = append(dst, it.Text...)
	}
	return dst
}

func (s *Sentences) decodeSentences(d *decoder) {
	s.reset()
	s.Bands = int(d.uvarint(4096))
	s.Rows = int(d.uvarint(uint64(4096 / max(s.Bands, 1))))
	s.Skipped = int(d.uvarint(1 << 31))
	n := int(d.uvarint(uint64(d.remaining()/(3+4*s.Bands+s.Bands*s.Rows) + 1)))
	s.Items = slices.Grow(s.Items, n) // n is bounded by the bytes left
	end := uint64(0)
	for range n {
		if d.err != nil {
			return
		}
		it := s.item()
		off := end + d.uvarint(1<<31)
		length := d.uvarint(1 << 31)
		end = off + length
		if end >= 1<<31 {
			d.fail("sentence offset overflows")
			return
		}
		it.Offset, it.Length = int(off), int(length)
		it.Keys = slices.Grow(it.Keys[:0], s.Bands)
		for range s.Bands {
			it.Keys = append(it.Keys, uint64(d.uint32()))
		}
		it.Sig = append(it.Sig[:0], d.bytes(s.Bands*s.Rows)...)
		it.Text = append(it.Text[:0], d.bytes(int(d.uvarint(uint64(d.remaining()))))...)
	}
}

// stored copies s into dst as decoding its encoding would give: keys cut
// to their top 32 bits.
func (s *Sentences) stored(dst *Sentences) {
	dst.reset()
	dst.Bands, dst.Rows, dst.Skipped = s.Bands, s.Rows, s.Skipped
	for _, it := range s.Items {
		o := dst.item()
		o.Offset, o.Length = it.Offset, it.Length
		o.Keys = o.Keys[:0]
		for _, k := range it.Keys {
			o.Keys = append(o.Keys, k>>32)
		}
		o.Sig = append(o.Sig[:0], it.Sig...)
		o.Text = append(o.Text[:0], it.Text...)
	}
}

// clone returns a deep copy of s.
func (s *Sentences) clone() Sentences {
	c := Sentences{Bands: s.Bands, Rows: s.Rows, Skipped: s.Skipped, Items: make([]SentenceItem, len(s.Items))}
	for i, it := range s.Items {
		c.Items[i] = SentenceItem{Offset: it.Offset, Length: it.Length, Keys: slices.Clone(it.Keys), Sig: slices.Clone(it.Sig), Text: slices.Clone(it.Text)}
	}
	return c
}
