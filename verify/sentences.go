package verify

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"

	"github.com/neardup/neardup/sketch"
)

// SentenceCheck configures the sentence check of sentence mode: the
// sentences of a document and of a candidate document whose MinHash
// signatures are close are compared by edit similarity, and each pair at
// or above Threshold is reported with its edit class (Ayhan et al.:
// MinHash LSH finds the candidates, edit distance is the final filter).
type SentenceCheck struct {
	// Threshold is the edit similarity a sentence pair needs (default
	// [DefaultEdit], the paper's normalized edit distance ≤ 0.25).
	Threshold float64 `json:"threshold"`
	// MaxMatches bounds the matches kept per sentence of the document and
	// candidate, the most similar first (default 5).
	MaxMatches int `json:"max_matches"`
}

// WithDefaults fills zero fields.
func (c SentenceCheck) WithDefaults() SentenceCheck {
	if c.Threshold == 0 {
		c.Threshold = DefaultEdit
	}
	if c.MaxMatches == 0 {
		c.MaxMatches = 5
	}
	return c
}

func (c SentenceCheck) validate() error {
	if c.Threshold <= 0 || c.Threshold > 1 || c.MaxMatches < 1 {
		return fmt.Errorf("verify: sentence check: threshold %v, max matches %d: want threshold in (0, 1] and max matches ≥ 1", c.Threshold, c.MaxMatches)
	}
	return nil
}

// SentencePair is a matched pair of sentences: item A of the document's
// [sketch.Sentences] and item B of the candidate's.
type SentencePair struct {
	A, B       int
	Similarity float64
	Edit       EditClass
}

// sigMinJaccard is the estimated shingle resemblance a sentence pair needs
// before its edit similarity is computed. By the bound of Ayhan et al.
// (J ≥ (1 − 2l − e)/(1 + e), l the shingle length over the sentence
// length), a pair at edit distance e = 0.25 of 50-character sentences with
// 10-character shingles has J ≥ 0.28; the estimate from 80 b-bit values
// has a standard deviation of about 0.05, so 0.2 keeps such pairs.
const sigMinJaccard = 0.2

// sentencePairs appends to dst the matched sentence pairs of a and b, both
// stored (or decoded) sentences of the same sketch configuration: of the
// pairs whose lengths allow the threshold, those whose b-bit signatures
// estimate a shingle resemblance of at least sigMinJaccard are compared by
// edit similarity, and those reaching the threshold are kept, at most
// MaxMatches per sentence of a, ordered by a's sentences, then by
// similarity (highest first), then by b's order. The candidate documents
// come from the index, where sentences share LSH band buckets; inside a
// pair of documents every pair of sentences is estimated, which finds the
// lightly edited sentences the bands miss.
func (v *Verifier) sentencePairs(dst []SentencePair, a, b *sketch.Sentences, s *scratch) []SentencePair {
	c := v.sent
	if a.Bands == 0 || a.Bands != b.Bands || a.Rows != b.Rows || len(a.Items) == 0 || len(b.Items) == 0 {
		return dst
	}
	start := len(dst)
	for ia := range a.Items {
		x := &a.Items[ia]
		for ib := range b.Items {
			y := &b.Items[ib]
			if float64(min(x.Length, y.Length)) < c.Threshold*float64(max(x.Length, y.Length)) {
				continue // the length difference alone costs too much
			}
			if len(x.Sig) == 0 || len(x.Sig) != len(y.Sig) || sigJaccard(x.Sig, y.Sig) < sigMinJaccard {
				continue
			}
			sim, ok := s.ed.SimilarityAtLeast(x.Text, y.Text, c.Threshold)
			if !ok {
				continue
			}
			dst = append(dst, SentencePair{A: ia, B: ib, Similarity: sim, Edit: s.ec.Classify(x.Text, y.Text)})
		}
	}
	found := dst[start:]
	slices.SortStableFunc(found, func(x, y SentencePair) int {
		return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(y.Similarity, x.Similarity), cmp.Compare(x.B, y.B))
	})
	// Keep the best MaxMatches of each sentence of a.
	out, run := found[:0], 0
	for i, p := range found {
		if i > 0 && found[i-1].A == p.A {
			run++
		} else {
			run = 0
		}
		if run < c.MaxMatches {
			out = append(out, p)
		}
	}
	return dst[:start+len(out)]
}

// sigJaccard estimates the resemblance of two sentences from their b-bit
// signatures: positions agree with probability J + (1 − J)/256.
func sigJaccard(x, y []byte) float64 {
	eq, i := 0, 0
	for ; i+8 <= len(x); i += 8 {
		eq += zeroBytes(binary.LittleEndian.Uint64(x[i:]) ^ binary.LittleEndian.Uint64(y[i:]))
	}
	for ; i < len(x); i++ {
		if x[i] == y[i] {
			eq++
		}
	}
	const chance = 1.0 / 256
	return (float64(eq)/float64(len(x)) - chance) / (1 - chance)
}

// zeroBytes counts the zero bytes of w.
func zeroBytes(w uint64) int {
	const lo7 = 0x7f7f7f7f7f7f7f7f
	// The high bit of each byte of t is set when the byte of w is nonzero.
	t := (w&lo7 + lo7) | w
	return 8 - bits.OnesCount64(t&^lo7)
}
