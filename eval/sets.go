package eval

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Names of the evaluation sets: folders of the shared data directory.
const (
	SetPAN13        = "pan13-text-alignment-no-obfuscation"
	SetClough       = "clough-plagiarised-short-answers"
	SetGutenberg    = "gutenberg-editions"
	SetLicensecheck = "licensecheck-testdata"
	SetSPDX         = "spdx-license-texts"
)

// SetNames lists every set [Build] knows, in report order. The site
// sets (SetSites, SetSitesHTML, SetSitesBoiler) are generated from the
// Gutenberg e-texts ([GenerateSites]).
func SetNames() []string {
	return []string{SetPAN13, SetClough, SetGutenberg, SetLicensecheck, SetSPDX, SetSites, SetSitesHTML, SetSitesBoiler, SetChrome, SetChromeHTML, SetArticles, SetRefDocs}
}

// Short returns a short name of the set for file names: pan13, clough,
// gutenberg, licensecheck or spdx.
func (s *Set) Short() string {
	switch s.Name {
	case SetPAN13:
		return "pan13"
	case SetClough:
		return "clough"
	case SetGutenberg:
		return "gutenberg"
	case SetLicensecheck:
		return "licensecheck"
	case SetSPDX:
		return "spdx"
	}
	return s.Name // the site sets' names are short already
}

// Label says what the labels of a set say about a pair of documents.
type Label int8

const (
	// Unlabelled: the labels say nothing about the pair (two sources of
	// PAN13, two Clough answers that copied the same source).
	Unlabelled Label = iota
	// Negative: the pair is not a duplicate.
	Negative
	// Positive: the later document duplicates the earlier, in whole or in
	// part.
	Positive
)

// Doc is one document of a set.
type Doc struct {
	ID string
	// URL is the page's address, sent as the input's url field (empty
	// for sets that are not web pages).
	URL  string
	Text []byte
	// HTML marks Text as an HTML page, sent as the input's html field
	// and reduced to its main text by the pipeline.
	HTML bool
}

// Expect is a link the labels expect the stream to report: Later is a
// duplicate of any one of Earlier.
type Expect struct {
	Later   string
	Earlier []string
}

// Set is a labelled evaluation set, ready to stream.
type Set struct {
	Name string
	// Order says how Docs are ordered: the order a crawler would meet them
	// in, originals before the documents that copy them.
	Order string
	Docs  []Doc
	// Label labels the link from a later document to an earlier one.
	Label func(later, earlier string) Label
	// Expected are the links recall is measured against.
	Expected []Expect
	// Pairs yields the (later, earlier) pairs the per-score curves are
	// computed over; every pair it yields has a Positive or Negative
	// label.
	Pairs func(yield func(later, earlier string) bool)
	// PairsDoc says in words which pairs Pairs yields.
	PairsDoc string

	sites        *Sites
	pan          *PAN13
	clough       map[string]CloughAnswer // by file name
	licenses     map[string]licenseLabel // by document id
	gutenbergSet *Gutenberg
	refdocs      *RefDocs
}

// OnHost gives every document of s without a url one on host
// (https://host/ID): the set as the pages of one large site, such as an
// encyclopedia whose articles copy passages from each other.
func (s *Set) OnHost(host string) {
	for i := range s.Docs {
		if d := &s.Docs[i]; d.URL == "" {
			d.URL = "https://" + host + "/" + url.PathEscape(d.ID)
		}
	}
}

// WithoutURLs drops the url of every document of s.
func (s *Set) WithoutURLs() {
	for i := range s.Docs {
		s.Docs[i].URL = ""
	}
}

// Missing is a set that could not be built, and why.
type Missing struct {
	Name, Why string
}

// Build loads the named sets from the data directory root. A set that is
// absent is returned in missing with what it needs, not as an error; an
// error means a set is present but unreadable.
func Build(root string, names []string) (sets []*Set, missing []Missing, err error) {
	have := func(name string) bool {
		st, err := os.Stat(filepath.Join(root, name))
		return err == nil && st.IsDir()
	}
	var sites, chrome *Sites // generated once for their renderings
	for _, name := range names {
		if name == SetRefDocs {
			r, err := GenerateRefDocs(context.Background(), "")
			if err != nil {
				missing = append(missing, Missing{name, fmt.Sprintf("generated from the machine's JDK: %v", err)})
				continue
			}
			sets = append(sets, buildRefDocs(r))
			continue
		}
		if name == SetChrome || name == SetChromeHTML || name == SetArticles {
			if !have(SetGutenberg) {
				missing = append(missing, Missing{name, fmt.Sprintf("%s not found: the set is generated from its e-texts (see %s)", filepath.Join(root, SetGutenberg), expects[SetGutenberg])})
				continue
			}
			if name == SetArticles {
				g, err := GenerateArticles(filepath.Join(root, SetGutenberg), 0)
				if err != nil {
					return nil, nil, err
				}
				sets = append(sets, buildArticles(g))
				continue
			}
			if chrome == nil {
				if chrome, err = GenerateChrome(filepath.Join(root, SetGutenberg), ChromeConfig{}); err != nil {
					return nil, nil, err
				}
			}
			sets = append(sets, buildChrome(chrome, name))
			continue
		}
		if v, ok := sitesVariant(name); ok {
			if !have(SetGutenberg) {
				missing = append(missing, Missing{name, fmt.Sprintf("%s not found: the site set is generated from its e-texts (see %s)", filepath.Join(root, SetGutenberg), expects[SetGutenberg])})
				continue
			}
			if sites == nil {
				if sites, err = GenerateSites(filepath.Join(root, SetGutenberg), SitesConfig{}); err != nil {
					return nil, nil, err
				}
			}
			sets = append(sets, buildSites(sites, v))
			continue
		}
		if !have(name) {
			missing = append(missing, Missing{name, fmt.Sprintf("%s not found (see %s)", filepath.Join(root, name), expects[name])})
			continue
		}
		dir := filepath.Join(root, name)
		var s *Set
		switch name {
		case SetPAN13:
			s, err = buildPAN13(dir)
		case SetClough:
			s, err = buildClough(dir)
		case SetGutenberg:
			s, err = buildGutenberg(dir)
		case SetLicensecheck:
			var spdx []SPDXLicense
			if have(SetSPDX) {
				if spdx, err = LoadSPDX(filepath.Join(root, SetSPDX)); err != nil {
					return nil, nil, err
				}
			}
			s, err = buildLicensecheck(dir, spdx)
		case SetSPDX:
			s, err = buildSPDX(dir)
		default:
			return nil, nil, fmt.Errorf("eval: unknown set %q (want one of %s)", name, strings.Join(SetNames(), ", "))
		}
		if err != nil {
			return nil, nil, err
		}
		sets = append(sets, s)
	}
	return sets, missing, nil
}

// expects says what each set's folder must hold.
var expects = map[string]string{
	SetPAN13:        "pairs, src/, susp/ and truth/ of the PAN 2013 text-alignment corpus, 02-no-obfuscation",
	SetClough:       "file_information.csv and texts/ of the Clough & Stevenson corpus of plagiarised short answers",
	SetGutenberg:    "pairs.tsv and texts/ of two Project Gutenberg editions of five works",
	SetLicensecheck: "testdata/ of github.com/google/licensecheck; spdx-license-texts beside it supplies the reference texts",
	SetSPDX:         "spdx-full.json of the npm package spdx-license-list",
}

func readDocs(ids []string, path func(string) string) ([]Doc, error) {
	docs := make([]Doc, 0, len(ids))
	for _, id := range ids {
		b, err := os.ReadFile(path(id))
		if err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
		docs = append(docs, Doc{ID: id, Text: b})
	}
	return docs, nil
}

func buildPAN13(dir string) (*Set, error) {
	p, err := LoadPAN13(dir)
	if err != nil {
		return nil, err
	}
	srcs, susps := p.Sources(), p.Suspicious()
	docs, err := readDocs(srcs, p.SrcPath)
	if err != nil {
		return nil, err
	}
	sd, err := readDocs(susps, p.SuspPath)
	if err != nil {
		return nil, err
	}
	docs = append(docs, sd...)
	pairs := map[[2]string]bool{}
	s := &Set{Name: SetPAN13, pan: p, Docs: docs,
		Order:    fmt.Sprintf("the %d source documents, then the %d suspicious documents, each in name order", len(srcs), len(susps)),
		PairsDoc: fmt.Sprintf("every (suspicious, source) combination: the %d labelled pairs are positive, the others negative", len(p.Pairs)),
	}
	for _, pr := range p.Pairs {
		pairs[pr] = true
		s.Expected = append(s.Expected, Expect{Later: pr[0], Earlier: []string{pr[1]}})
	}
	isSusp := func(id string) bool { return strings.HasPrefix(id, "suspicious-") }
	s.Label = func(later, earlier string) Label {
		switch {
		case pairs[[2]string{later, earlier}]:
			return Positive
		case isSusp(later) && !isSusp(earlier):
			return Negative
		}
		return Unlabelled // two sources, or two suspicious documents
	}
	s.Pairs = func(yield func(string, string) bool) {
		for _, a := range susps {
			for _, b := range srcs {
				if !yield(a, b) {
					return
				}
			}
		}
	}
	return s, nil
}

func buildClough(dir string) (*Set, error) {
	c, err := LoadClough(dir)
	if err != nil {
		return nil, err
	}
	byFile := map[string]CloughAnswer{}
	var origs, answers []string
	for _, a := range c.Answers {
		byFile[a.File] = a
		if a.Category == "orig" {
			origs = append(origs, a.File)
		} else {
			answers = append(answers, a.File)
		}
	}
	slices.Sort(origs)
	slices.Sort(answers)
	docs, err := readDocs(append(slices.Clone(origs), answers...), c.Path)
	if err != nil {
		return nil, err
	}
	copied := func(cat string) bool { return cat == "cut" || cat == "light" || cat == "heavy" }
	s := &Set{Name: SetClough, clough: byFile, Docs: docs,
		Order:    fmt.Sprintf("the %d Wikipedia sources (orig_task*), then the %d answers, each in name order", len(origs), len(answers)),
		PairsDoc: "every (answer, source) combination: an answer of category cut, light or heavy against its task's source is positive, every other combination negative",
	}
	for _, a := range answers {
		if ans := byFile[a]; copied(ans.Category) {
			s.Expected = append(s.Expected, Expect{Later: a, Earlier: []string{"orig_task" + ans.Task + ".txt"}})
		}
	}
	s.Label = func(later, earlier string) Label {
		a, b := byFile[later], byFile[earlier]
		switch {
		case a.Task != b.Task:
			return Negative // a different question
		case b.Category == "orig" && copied(a.Category):
			return Positive
		case b.Category == "orig" || a.Category == "non" || b.Category == "non":
			return Negative // an independent answer and its source or another answer
		}
		return Unlabelled // two answers that copied the same source share its text
	}
	s.Pairs = func(yield func(string, string) bool) {
		for _, a := range answers {
			for _, o := range origs {
				if !yield(a, o) {
					return
				}
			}
		}
	}
	return s, nil
}

func buildGutenberg(dir string) (*Set, error) {
	g, err := LoadGutenberg(dir)
	if err != nil {
		return nil, err
	}
	texts := slices.Sorted(slices.Values(g.Texts))
	docs, err := readDocs(texts, g.Path)
	if err != nil {
		return nil, err
	}
	pos := map[[2]string]Label{}
	s := &Set{Name: SetGutenberg, gutenbergSet: g, Docs: docs,
		Order:    "the ten e-texts in name order (as `neardup scan` walks the folder)",
		PairsDoc: fmt.Sprintf("all %d pairs: two editions of one work are positive", len(g.Pairs)),
	}
	rank := map[string]int{}
	for i, t := range texts {
		rank[t] = i
	}
	ordered := func(a, b string) (string, string) { // later, earlier
		if rank[a] < rank[b] {
			return b, a
		}
		return a, b
	}
	for _, p := range g.Pairs {
		later, earlier := ordered(p.A, p.B)
		l := Negative
		if p.SameWork {
			l = Positive
			s.Expected = append(s.Expected, Expect{Later: later, Earlier: []string{earlier}})
		}
		pos[[2]string{later, earlier}] = l
	}
	s.Label = func(later, earlier string) Label { return pos[[2]string{later, earlier}] }
	s.Pairs = func(yield func(string, string) bool) {
		for _, p := range g.Pairs {
			if !yield(ordered(p.A, p.B)) {
				return
			}
		}
	}
	return s, nil
}
