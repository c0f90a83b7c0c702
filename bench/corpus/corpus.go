package corpus

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Kind says how a document was made.
type Kind string

// Kinds of documents.
const (
	Original Kind = "original" // text found nowhere earlier in the stream
	Exact    Kind = "exact"    // a source's text, byte for byte
	Near     Kind = "near"     // a source's text with word edits and case and punctuation noise
	Partial  Kind = "partial"  // a passage of a source inside other text
)

// Doc is one document of the stream, in the input format of neardup scan.
type Doc struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// Truth is what the corpus knows about one document.
type Truth struct {
	ID   string `json:"id"`
	Kind Kind   `json:"kind"`
	// Sources are the earlier documents a copy was made from (none for an
	// original).
	Sources []string `json:"sources,omitempty"`
	// Groups are the originals whose text the document holds: its own id
	// for an original, its sources' groups for a copy (and its own id too
	// when it also holds text of its own, as a partial copy does). Two
	// documents are duplicates of each other when their groups meet.
	Groups []string `json:"groups"`
	// Enciphered marks an original cut from the texts under a vocabulary
	// cipher (see the package documentation).
	Enciphered bool `json:"enciphered,omitempty"`
}

// Stats describe a corpus.
type Stats struct {
	Docs, Bytes int
	Kinds       map[Kind]int
	// Clusters is the number of originals that have copies; Largest the
	// documents of the largest cluster (its original included).
	Clusters, Largest int
	// Enciphered is how many originals are enciphered chunks (see the
	// package documentation).
	Enciphered int
}

// Corpus is a stream of documents and its ground truth.
type Corpus struct {
	// Name says what the corpus is, for the benchmarks' tables.
	Name  string
	Docs  []Doc
	Truth []Truth // Truth[i] is Docs[i]'s
}

// Stats counts the corpus's documents by kind and its clusters.
func (c *Corpus) Stats() Stats {
	s := Stats{Docs: len(c.Docs), Kinds: map[Kind]int{}}
	size := map[string]int{}
	for i, d := range c.Docs {
		s.Bytes += len(d.Text)
		t := c.Truth[i]
		s.Kinds[t.Kind]++
		if t.Enciphered {
			s.Enciphered++
		}
		for _, g := range t.Groups {
			size[g]++
		}
	}
	for _, n := range size {
		if n > 1 {
			s.Clusters++
		}
		s.Largest = max(s.Largest, n)
	}
	return s
}

// String is the one-line summary the benchmarks print.
func (s Stats) String() string {
	dup := s.Docs - s.Kinds[Original]
	return fmt.Sprintf("%d documents, mean %.0f bytes, %.0f%% copies (exact %d, near %d, partial %d), %d clusters, largest %d, %d enciphered originals",
		s.Docs, float64(s.Bytes)/float64(max(s.Docs, 1)), 100*float64(dup)/float64(max(s.Docs, 1)),
		s.Kinds[Exact], s.Kinds[Near], s.Kinds[Partial], s.Clusters, s.Largest, s.Enciphered)
}

// TruthPath is where the ground truth of the corpus at path is written:
// path with its .jsonl extension replaced by .truth.jsonl.
func TruthPath(path string) string {
	return strings.TrimSuffix(path, ".jsonl") + ".truth.jsonl"
}

// Write writes the documents to path as JSON lines and the ground truth
// to TruthPath(path), one JSON object per document in the same order.
func (c *Corpus) Write(path string) error {
	if len(c.Docs) != len(c.Truth) {
		return fmt.Errorf("corpus: %d documents but %d truth records", len(c.Docs), len(c.Truth))
	}
	if err := writeLines(path, len(c.Docs), func(i int) any { return c.Docs[i] }); err != nil {
		return err
	}
	return writeLines(TruthPath(path), len(c.Truth), func(i int) any { return c.Truth[i] })
}

func writeLines(path string, n int, at func(int) any) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("corpus: %w", err)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range n {
		if err := enc.Encode(at(i)); err != nil {
			f.Close()
			return fmt.Errorf("corpus: write %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("corpus: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("corpus: write %s: %w", path, err)
	}
	return nil
}

// Read reads a corpus written by Write: the documents at path and the
// ground truth beside it. A missing truth file, a truth record that does
// not match its document, or a line that is not JSON is an error.
func Read(path string) (*Corpus, error) {
	c := &Corpus{Name: filepath.Base(path)}
	if err := readLines(path, func(line []byte) error {
		var d Doc
		if err := json.Unmarshal(line, &d); err != nil {
			return err
		}
		if d.ID == "" {
			return errors.New("document without an id")
		}
		c.Docs = append(c.Docs, d)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := readLines(TruthPath(path), func(line []byte) error {
		var t Truth
		if err := json.Unmarshal(line, &t); err != nil {
			return err
		}
		c.Truth = append(c.Truth, t)
		return nil
	}); err != nil {
		return nil, err
	}
	if len(c.Truth) != len(c.Docs) {
		return nil, fmt.Errorf("corpus: %s has %d documents, %s %d truth records", path, len(c.Docs), TruthPath(path), len(c.Truth))
	}
	for i, t := range c.Truth {
		if t.ID != c.Docs[i].ID || len(t.Groups) == 0 {
			return nil, fmt.Errorf("corpus: truth record %d (%q) does not match document %q or has no group", i+1, t.ID, c.Docs[i].ID)
		}
	}
	return c, nil
}

func readLines(path string, each func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			if perr := each(line); perr != nil {
				return fmt.Errorf("corpus: %s line %d: %w", path, n, perr)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("corpus: %s: %w", path, err)
		}
	}
}

// Score is precision and recall of reported pairs.
type Score struct {
	// Pairs is the number of distinct reported (later, earlier) pairs
	// between documents of the corpus; Correct how many of them join
	// documents whose groups meet.
	Pairs, Correct int
	// Found is the number of copies with at least one correct pair, out
	// of Copies.
	Found, Copies int
	// Precision is Correct/Pairs (1 with no pair); Recall Found/Copies.
	Precision, Recall float64
}

// Score scores reported pairs, each a (later, earlier) pair of ids: a pair
// is correct when the two documents' groups meet (a copy reported against
// its source or any other copy of it), and a copy is found when at least
// one of its pairs is correct. Pairs naming an id the corpus does not have
// count as wrong.
func (c *Corpus) Score(pairs map[[2]string]bool) Score {
	groups := make(map[string][]string, len(c.Truth))
	for _, t := range c.Truth {
		groups[t.ID] = t.Groups
	}
	found := map[string]bool{}
	s := Score{}
	for p := range pairs {
		s.Pairs++
		a, b := groups[p[0]], groups[p[1]]
		if a != nil && b != nil && slices.ContainsFunc(a, func(g string) bool { return slices.Contains(b, g) }) {
			s.Correct++
			found[p[0]] = true
		}
	}
	for _, t := range c.Truth {
		if t.Kind != Original {
			s.Copies++
			if found[t.ID] {
				s.Found++
			}
		}
	}
	s.Precision = 1
	if s.Pairs > 0 {
		s.Precision = float64(s.Correct) / float64(s.Pairs)
	}
	s.Recall = float64(s.Found) / math.Max(float64(s.Copies), 1)
	return s
}
