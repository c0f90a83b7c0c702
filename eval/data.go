package eval

import (
	"bufio"
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// PAN13 is the PAN 2013 text-alignment "no obfuscation" subset: suspicious
// documents, their sources, the labelled (suspicious, source) pairs and the
// copied passages with character offsets.
type PAN13 struct {
	Dir   string
	Pairs [][2]string // (suspicious, source) file names
	Cases []Case
}

// SuspPath and SrcPath locate documents of the set.
func (p *PAN13) SuspPath(name string) string { return filepath.Join(p.Dir, "susp", name) }

// SrcPath locates a source document.
func (p *PAN13) SrcPath(name string) string { return filepath.Join(p.Dir, "src", name) }

// LoadPAN13 reads the set in dir (pairs, truth/*.xml).
func LoadPAN13(dir string) (*PAN13, error) {
	set := &PAN13{Dir: dir}
	f, err := os.Open(filepath.Join(dir, "pairs"))
	if err != nil {
		return nil, fmt.Errorf("eval: pan13: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 2 {
			continue
		}
		set.Pairs = append(set.Pairs, [2]string{fs[0], fs[1]})
		b, err := os.ReadFile(filepath.Join(dir, "truth", strings.TrimSuffix(fs[0], ".txt")+"-"+strings.TrimSuffix(fs[1], ".txt")+".xml"))
		if err != nil {
			return nil, fmt.Errorf("eval: pan13 truth: %w", err)
		}
		var doc struct {
			Features []struct {
				Name      string `xml:"name,attr"`
				ThisOff   int    `xml:"this_offset,attr"`
				ThisLen   int    `xml:"this_length,attr"`
				SourceOff int    `xml:"source_offset,attr"`
				SourceLen int    `xml:"source_length,attr"`
				SourceRef string `xml:"source_reference,attr"`
			} `xml:"feature"`
		}
		if err := xml.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("eval: pan13 truth of %s: %w", fs[0], err)
		}
		for _, ft := range doc.Features {
			if ft.Name != "plagiarism" {
				continue
			}
			set.Cases = append(set.Cases, Case{Susp: fs[0], Src: ft.SourceRef, SuspOff: ft.ThisOff, SuspLn: ft.ThisLen, SrcOff: ft.SourceOff, SrcLn: ft.SourceLen})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(set.Pairs) == 0 {
		return nil, fmt.Errorf("eval: pan13: no pairs in %s", dir)
	}
	return set, nil
}

// CloughAnswer is one file of the Clough & Stevenson corpus.
type CloughAnswer struct {
	File     string // e.g. g0pA_taska.txt, orig_taska.txt
	Task     string // a … e
	Category string // cut, light, heavy, non, orig
}

// Clough is the corpus of plagiarised short answers: five Wikipedia
// sources (category orig) and 95 answers.
type Clough struct {
	Dir     string
	Answers []CloughAnswer
}

// Path locates a file of the corpus.
func (c *Clough) Path(file string) string { return filepath.Join(c.Dir, "texts", file) }

// LoadClough reads file_information.csv in dir (answers and the sources,
// category orig).
func LoadClough(dir string) (*Clough, error) {
	f, err := os.Open(filepath.Join(dir, "file_information.csv"))
	if err != nil {
		return nil, fmt.Errorf("eval: clough: %w", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("eval: clough: %w", err)
	}
	c := &Clough{Dir: dir}
	for i, r := range rows {
		if i == 0 || len(r) < 3 {
			continue
		}
		c.Answers = append(c.Answers, CloughAnswer{File: r[0], Task: r[1], Category: r[2]})
	}
	return c, nil
}

// GutenbergPair is one labelled pair of the Gutenberg editions set.
type GutenbergPair struct {
	A, B     string
	SameWork bool
}

// Gutenberg is the set of ten e-texts: two editions of five works.
type Gutenberg struct {
	Dir   string
	Texts []string
	Pairs []GutenbergPair
}

// Path locates an e-text.
func (g *Gutenberg) Path(file string) string { return filepath.Join(g.Dir, "texts", file) }

// LoadGutenberg reads pairs.tsv in dir.
func LoadGutenberg(dir string) (*Gutenberg, error) {
	f, err := os.Open(filepath.Join(dir, "pairs.tsv"))
	if err != nil {
		return nil, fmt.Errorf("eval: gutenberg: %w", err)
	}
	defer f.Close()
	g := &Gutenberg{Dir: dir}
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		fs := strings.Split(sc.Text(), "\t")
		if first || len(fs) < 5 {
			continue
		}
		same, err := strconv.Atoi(fs[4])
		if err != nil {
			return nil, fmt.Errorf("eval: gutenberg pairs.tsv: %q: %w", sc.Text(), err)
		}
		g.Pairs = append(g.Pairs, GutenbergPair{A: fs[0], B: fs[1], SameWork: same == 1})
		for _, t := range fs[:2] {
			if !seen[t] {
				seen[t] = true
				g.Texts = append(g.Texts, t)
			}
		}
	}
	return g, sc.Err()
}
