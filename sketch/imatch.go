package sketch

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha1"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Digest is an I-Match digest: SHA1 over a document's retained terms.
type Digest [sha1.Size]byte

// String returns the digest in hex.
func (d Digest) String() string { return fmt.Sprintf("%x", d[:]) }

// Lexicon holds collection document frequencies for I-Match term filtering
// and idf-weighted SimHash. A Lexicon is read-only after construction and
// safe for concurrent use.
//
// Terms absent from the lexicon are treated as the rarest possible terms
// (df = 1, normalized idf 1): a lexicon lists the frequent words, and
// everything it does not know is, by construction, infrequent.
type Lexicon struct {
	docs int                // N, documents in the collection
	idf  map[uint64]float64 // token hash → log(N/df)
	logN float64
}

// ErrLexicon marks a malformed lexicon file.
var ErrLexicon = errors.New("sketch: malformed lexicon")

const lexiconHeader = "# neardup lexicon v1 docs="

// LexiconBuilder counts document frequencies over a corpus.
type LexiconBuilder struct {
	docs  int
	df    map[string]uint32
	seen  map[string]struct{}
	norm  *Normalizer
	token Tokens
}

// NewLexiconBuilder returns a builder that tokenizes with opt.
func NewLexiconBuilder(opt Normalization) *LexiconBuilder {
	return &LexiconBuilder{df: map[string]uint32{}, seen: map[string]struct{}{}, norm: NewNormalizer(opt)}
}

// Add counts one document.
func (lb *LexiconBuilder) Add(text []byte) {
	lb.docs++
	lb.norm.Tokenize(text, &lb.token)
	clear(lb.seen)
	for i := range lb.token.Len() {
		w := lb.token.Word(i)
		if _, ok := lb.seen[string(w)]; ok {
			continue
		}
		s := string(w)
		lb.seen[s] = struct{}{}
		lb.df[s]++
	}
}

// WriteTo writes the lexicon in its text format: a header line with the
// document count, then "term<TAB>df" lines sorted by term, keeping terms
// with df ≥ minDF (rarer terms are implied by their absence).
func (lb *LexiconBuilder) WriteTo(w io.Writer, minDF int) error {
	terms := make([]string, 0, len(lb.df))
	for t, n := range lb.df {
		if int(n) >= minDF {
			terms = append(terms, t)
		}
	}
	slices.Sort(terms)
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s%d\n", lexiconHeader, lb.docs)
	for _, t := range terms {
		fmt.Fprintf(bw, "%s\t%d\n", t, lb.df[t])
	}
	return bw.Flush()
}

// ReadLexicon parses the text format written by [LexiconBuilder.WriteTo]
// (optionally gzip-compressed).
func ReadLexicon(r io.Reader) (*Lexicon, error) {
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrLexicon, err)
		}
		defer zr.Close()
		br = bufio.NewReader(zr)
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), lexiconHeader) {
		return nil, fmt.Errorf("%w: missing header %q", ErrLexicon, lexiconHeader)
	}
	docs, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), lexiconHeader))
	if err != nil || docs < 1 {
		return nil, fmt.Errorf("%w: bad document count in %q", ErrLexicon, sc.Text())
	}
	lex := &Lexicon{docs: docs, idf: map[uint64]float64{}, logN: math.Log(float64(docs))}
	line := 1
	for sc.Scan() {
		line++
		term, dfs, ok := bytes.Cut(sc.Bytes(), []byte{'\t'})
		if !ok {
			return nil, fmt.Errorf("%w: line %d: want term<TAB>df", ErrLexicon, line)
		}
		df, err := strconv.ParseUint(string(dfs), 10, 32)
		if err != nil || df < 1 || int(df) > docs {
			return nil, fmt.Errorf("%w: line %d: df %q not in [1, %d]", ErrLexicon, line, dfs, docs)
		}
		lex.idf[TokenHash(term)] = lex.logN - math.Log(float64(df))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLexicon, err)
	}
	return lex, nil
}

//go:embed lexicon/default.tsv.gz
var defaultLexicon []byte

// DefaultLexicon returns the lexicon compiled into neardup: document
// frequencies of the words of ten public-domain Project Gutenberg books,
// cut into 1,000-word documents (see lexicon/README.md for how to rebuild
// it). It is parsed on each call; keep the result.
func DefaultLexicon() *Lexicon {
	lex, err := ReadLexicon(bytes.NewReader(defaultLexicon))
	if err != nil {
		// The embedded file is checked by TestDefaultLexicon.
		panic(fmt.Sprintf("sketch: embedded lexicon: %v", err))
	}
	return lex
}

// Docs returns N, the number of documents the lexicon was built from.
func (l *Lexicon) Docs() int { return l.docs }

// Len returns the number of terms listed.
func (l *Lexicon) Len() int { return len(l.idf) }

// IDF returns log(N/df) of a token hash.
func (l *Lexicon) IDF(h uint64) float64 {
	if idf, ok := l.idf[h]; ok {
		return idf
	}
	return l.logN
}

// NIDF returns idf normalized to [0, 1] by the largest possible idf, log N.
func (l *Lexicon) NIDF(h uint64) float64 {
	if l.logN == 0 {
		return 1
	}
	return l.IDF(h) / l.logN
}

// frequent returns, sorted, the hashes of the listed terms whose NIDF is
// below cutoff: the terms the IDF filter drops (unlisted terms have NIDF 1).
func (l *Lexicon) frequent(cutoff float64) []uint64 {
	var out []uint64
	for h := range l.idf {
		if l.NIDF(h) < cutoff {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

// IMatchMode selects the I-Match term filter.
type IMatchMode string

const (
	// IMatchIDF keeps terms with normalized idf ≥ Cutoff ("IDF-L-10" at
	// Cutoff 0.1: the paper's most effective filter, and neardup's default).
	IMatchIDF IMatchMode = "idf"
	// IMatchDoc keeps the Keep fraction of a document's distinct terms
	// with the highest idf ("Doc-L-90" at Keep 0.1).
	IMatchDoc IMatchMode = "doc"
)

// IMatch configures the I-Match digest (Chowdhury et al., TOIS 2002).
type IMatch struct {
	Mode IMatchMode
	// Cutoff is the normalized-idf floor for [IMatchIDF].
	Cutoff float64
	// Keep is the fraction of distinct terms kept by [IMatchDoc].
	Keep float64
	// MinTerms is the fewest retained terms that make a digest; documents
	// with fewer get none, since a digest over two or three words collides
	// across unrelated short texts.
	MinTerms int
}

// DefaultIMatch returns the default I-Match filter: IDF-L-10 with at least
// 8 retained terms.
func DefaultIMatch() IMatch { return IMatch{Mode: IMatchIDF, Cutoff: 0.1, Keep: 0.1, MinTerms: 8} }

// imatchScratch holds reusable buffers for digest computation.
type imatchScratch struct {
	terms  []uint64
	ranked []rankedTerm
	bytes  []byte
	// frequent, when merge is set, are the sorted hashes of the terms the
	// IDF filter drops (see [Lexicon.frequent]): the filter is then a merge
	// of two sorted lists instead of a lexicon lookup per term.
	frequent []uint64
	merge    bool
}

// prepare readies s for digests of c over lex: for the IDF filter it lists
// the terms the filter drops, once.
func (s *imatchScratch) prepare(c IMatch, lex *Lexicon) {
	s.frequent, s.merge = nil, false
	// Unlisted terms have the largest normalized idf, 1: the merge needs
	// them kept.
	if c.Mode != IMatchDoc && c.Cutoff <= 1 {
		s.frequent, s.merge = lex.frequent(c.Cutoff), true
	}
}

type rankedTerm struct {
	nidf float64
	h    uint64
}

// digest computes the I-Match digest of the distinct terms, which must be
// sorted ascending. The paper
// hashes the retained terms as strings in sorted order; neardup hashes their
// frozen 64-bit token hashes (big-endian) in ascending order, which gives
// the same equivalence classes up to a 2^-64 collision and needs no strings.
func (c IMatch) digest(distinct []uint64, lex *Lexicon, s *imatchScratch) (Digest, bool) {
	s.terms = s.terms[:0]
	switch c.Mode {
	case IMatchDoc:
		s.ranked = s.ranked[:0]
		for _, h := range distinct {
			s.ranked = append(s.ranked, rankedTerm{lex.NIDF(h), h})
		}
		// Highest idf first; ties by hash, so the order is total.
		slices.SortFunc(s.ranked, func(a, b rankedTerm) int {
			return cmp.Or(cmp.Compare(b.nidf, a.nidf), cmp.Compare(a.h, b.h))
		})
		keep := int(math.Ceil(c.Keep * float64(len(s.ranked))))
		for _, t := range s.ranked[:keep] {
			s.terms = append(s.terms, t.h)
		}
	default:
		if s.merge {
			fr, j := s.frequent, 0
			for _, h := range distinct {
				for j < len(fr) && fr[j] < h {
					j++
				}
				if j == len(fr) || fr[j] != h {
					s.terms = append(s.terms, h)
				}
			}
			break
		}
		for _, h := range distinct {
			if lex.NIDF(h) >= c.Cutoff {
				s.terms = append(s.terms, h)
			}
		}
	}
	if len(s.terms) < max(c.MinTerms, 1) {
		return Digest{}, false
	}
	if c.Mode == IMatchDoc {
		slices.Sort(s.terms)
	}
	s.bytes = s.bytes[:0]
	for _, h := range s.terms {
		s.bytes = binary.BigEndian.AppendUint64(s.bytes, h)
	}
	return sha1.Sum(s.bytes), true
}
