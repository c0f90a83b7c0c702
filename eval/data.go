package eval

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// Sources returns the source documents named in the pairs, sorted.
func (p *PAN13) Sources() []string { return sortedUnique(p.Pairs, 1) }

// Suspicious returns the suspicious documents named in the pairs, sorted.
func (p *PAN13) Suspicious() []string { return sortedUnique(p.Pairs, 0) }

func sortedUnique(pairs [][2]string, side int) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range pairs {
		if !seen[p[side]] {
			seen[p[side]] = true
			out = append(out, p[side])
		}
	}
	slices.Sort(out)
	return out
}

// licenseMatch is one license google/licensecheck expects to find in a
// test file: its name (an SPDX id for most) and the byte range it covers
// in the file's text; End is len(Text) when the header says "$". IsURL
// marks a match of the license's URL rather than of its text.
type licenseMatch struct {
	Name       string
	Start, End int
	IsURL      bool
}

// licenseVariant is one test file of google/licensecheck: a license text
// as found in the wild (reflowed, with copyright lines, cut short, or
// embedded in a longer file) and what licensecheck expects to match in it.
type licenseVariant struct {
	File string // e.g. MIT.t12
	Kind string // the file name before .tN, e.g. MIT, Apache-2.0-Header
	// Coverage is the expected percentage of the text the matches cover.
	Coverage float64
	Matches  []licenseMatch
	Text     []byte // the test input, after the header
}

// licensecheck is the google/licensecheck test data.
type licensecheck struct {
	Dir      string
	Variants []licenseVariant // sorted by kind, then by test number
}

// loadLicensecheck reads every Kind.tN file of dir/testdata and parses its
// header (testdata/README): comment lines, the expected coverage ("91.2%"),
// one "Name [Percent] Start,End [URL]" line per match, then optionally a
// "scan" stanza of the same form (ignored here), and a blank line.
func loadLicensecheck(dir string) (*licensecheck, error) {
	td := filepath.Join(dir, "testdata")
	ents, err := os.ReadDir(td)
	if err != nil {
		return nil, fmt.Errorf("eval: licensecheck: %w", err)
	}
	lc := &licensecheck{Dir: dir}
	for _, e := range ents {
		kind, _, ok := splitTestName(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(td, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("eval: licensecheck: %w", err)
		}
		v, err := parseLicenseTest(b)
		if err != nil {
			return nil, fmt.Errorf("eval: licensecheck %s: %w", e.Name(), err)
		}
		v.File, v.Kind = e.Name(), kind
		lc.Variants = append(lc.Variants, v)
	}
	slices.SortFunc(lc.Variants, func(a, b licenseVariant) int {
		ka, na, _ := splitTestName(a.File)
		kb, nb, _ := splitTestName(b.File)
		return cmp.Or(cmp.Compare(ka, kb), cmp.Compare(na, nb))
	})
	if len(lc.Variants) == 0 {
		return nil, fmt.Errorf("eval: licensecheck: no Kind.tN files in %s", td)
	}
	return lc, nil
}

// splitTestName splits "MIT.t12" into "MIT" and 12.
func splitTestName(name string) (string, int, bool) {
	i := strings.LastIndex(name, ".t")
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(name[i+2:])
	if err != nil {
		return "", 0, false
	}
	return name[:i], n, true
}

func parseLicenseTest(b []byte) (licenseVariant, error) {
	var v licenseVariant
	head, text, ok := bytes.Cut(b, []byte("\n\n"))
	if !ok {
		return v, fmt.Errorf("no blank line after the header")
	}
	v.Text = text
	var lines []string
	for _, l := range strings.Split(string(head), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	if len(lines) > 0 && lines[0] == "cover+scan" {
		lines = lines[1:]
	}
	if len(lines) == 0 || !strings.HasSuffix(lines[0], "%") {
		return v, fmt.Errorf("header: want a coverage percentage first, got %q", lines)
	}
	cov, err := strconv.ParseFloat(strings.TrimSuffix(lines[0], "%"), 64)
	if err != nil {
		return v, fmt.Errorf("header: coverage %q: %w", lines[0], err)
	}
	v.Coverage = cov
	for _, l := range lines[1:] {
		if l == "scan" {
			break
		}
		fs := strings.Fields(l)
		if len(fs) > 1 && strings.HasSuffix(fs[1], "%") {
			fs = append(fs[:1], fs[2:]...) // the optional Percent field
		}
		if len(fs) < 2 {
			return v, fmt.Errorf("header: match line %q", l)
		}
		lo, hi, ok := strings.Cut(fs[1], ",")
		start, err1 := strconv.Atoi(lo)
		end, err2 := len(text), error(nil)
		if hi != "$" {
			end, err2 = strconv.Atoi(hi)
		}
		if !ok || err1 != nil || err2 != nil {
			return v, fmt.Errorf("header: match range in %q", l)
		}
		v.Matches = append(v.Matches, licenseMatch{Name: fs[0], Start: start, End: end, IsURL: len(fs) > 2 && fs[2] == "URL"})
	}
	return v, nil
}

// spdxLicense is one entry of the SPDX license list.
type spdxLicense struct {
	ID, Name string
	Text     string
}

// loadSPDX reads spdx-full.json (npm spdx-license-list) in dir; the
// licenses come back sorted by id.
func loadSPDX(dir string) ([]spdxLicense, error) {
	b, err := os.ReadFile(filepath.Join(dir, "spdx-full.json"))
	if err != nil {
		return nil, fmt.Errorf("eval: spdx: %w", err)
	}
	var m map[string]struct {
		Name string `json:"name"`
		Text string `json:"licenseText"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("eval: spdx: %w", err)
	}
	out := make([]spdxLicense, 0, len(m))
	for id, l := range m {
		if strings.TrimSpace(l.Text) != "" {
			out = append(out, spdxLicense{ID: id, Name: l.Name, Text: l.Text})
		}
	}
	slices.SortFunc(out, func(a, b spdxLicense) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}
