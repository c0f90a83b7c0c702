package corpus

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/internal/dataset"
	"github.com/neardup/neardup/internal/synth"
)

// Spec names the corpora every benchmark takes with -corpus:
//
//	real                  real text, 95% copies in clusters of 20 (the default)
//	real:DUP              real text, DUP copies (0.1, 0.3, 0.8, 0.95, ...)
//	real:DUP:CLUSTER      real text, DUP copies in clusters of CLUSTER documents
//	real:DUP:CLUSTER:WINDOW  the same, each cluster within WINDOW documents of the stream (a stationary stream; see Config.Window)
//	rounds:TEXTS          real text in rounds: TEXTS originals, then one copy of each per round until the documents are out (Config.Texts; rounds:1224 at 100,000 documents: clusters grow to ~82)
//	sites                 the site pages of the boilerplate evaluation (Gutenberg articles in site templates; its 420 pages whatever docs says)
//	generated             the generated corpus (internal/synth: Zipf pseudo-words, 25% copies)
//	generated:contain     bench serve's generated corpus until 2026-11-25 (10% exact, near and partial copies each, a partial one the original inside a longer page)
//	FILE                  a corpus written by Write (neardup bench corpus)
const Spec = "real, real:DUP, real:DUP:CLUSTER, real:DUP:CLUSTER:WINDOW, rounds:TEXTS, sites, generated, generated:contain or a corpus file (.jsonl)"

// ErrUnknown is a corpus spec that names no corpus (a usage error).
var ErrUnknown = errors.New("corpus: unknown corpus")

// Open returns the corpus spec names (see [Spec]) with docs documents
// (ignored for a file) from seed (0: the default), reading real text from
// dataDir ("" : the shared data folder found by internal/dataset).
func Open(spec string, docs int, seed uint64, dataDir string) (*Corpus, error) {
	name, args, _ := strings.Cut(spec, ":")
	data := func() (string, error) {
		if dataDir == "" {
			if dataDir = dataset.Root(); dataDir == "" {
				return "", fmt.Errorf("corpus: %s needs the shared data folder: pass its path, set NEARDUP_DATA, or place shared/data beside the repository", spec)
			}
		}
		return dataDir, nil
	}
	switch name {
	case "real":
		cfg := Config{Docs: docs, Seed: seed}
		if args != "" {
			d, cl, _ := strings.Cut(args, ":")
			v, err := strconv.ParseFloat(d, 64)
			if err != nil || v <= 0 || v >= 1 {
				return nil, fmt.Errorf("corpus: %q: want real:DUP with 0 < DUP < 1", spec)
			}
			cfg.Dup = v
			if cl != "" {
				cl, win, _ := strings.Cut(cl, ":")
				k, err := strconv.Atoi(cl)
				if err != nil || k < 2 {
					return nil, fmt.Errorf("corpus: %q: want real:DUP:CLUSTER with CLUSTER >= 2", spec)
				}
				cfg.Cluster = k
				if win != "" {
					w, err := strconv.Atoi(win)
					if err != nil || w < k {
						return nil, fmt.Errorf("corpus: %q: want real:DUP:CLUSTER:WINDOW with WINDOW >= CLUSTER", spec)
					}
					cfg.Window = w
				}
			}
		}
		dir, err := data()
		if err != nil {
			return nil, err
		}
		return Build(dir, cfg)
	case "rounds":
		k, err := strconv.Atoi(args)
		if err != nil || k < 1 || k > docs {
			return nil, fmt.Errorf("corpus: %q: want rounds:TEXTS with 1 <= TEXTS <= the documents (%d)", spec, docs)
		}
		dir, err := data()
		if err != nil {
			return nil, err
		}
		return Build(dir, Config{Docs: docs, Seed: seed, Texts: k})
	case "sites":
		dir, err := data()
		if err != nil {
			return nil, err
		}
		return Sites(dir, seed, 0)
	case "generated":
		if docs <= 0 {
			return nil, fmt.Errorf("corpus: generated: want documents > 0, got %d", docs)
		}
		switch args {
		case "":
			return Generated(docs, seed), nil
		case "contain":
			return fromSynth("generated (internal/synth, 10% exact, near and partial copies, partial ones containing the original)",
				synth.Config{Docs: docs, Seed: cmp.Or(seed, 2026), MinWords: 900, MaxWords: 1150, Contain: true}), nil
		}
		return nil, fmt.Errorf("%w %q: want %s", ErrUnknown, spec, Spec)
	}
	if strings.HasSuffix(spec, ".jsonl") {
		return Read(spec)
	}
	return nil, fmt.Errorf("%w %q: want %s", ErrUnknown, spec, Spec)
}

// Sites returns the site pages of the boilerplate evaluation (the pages
// `neardup eval sites --write DIR` writes as sites.jsonl, each page's
// visible text) with their ground truth: a near copy is in its source's
// groups, a partial copy in its own and each source's. Seed 0 and pages 0
// give the evaluation's corpus (seed 22, 420 pages).
func Sites(dataDir string, seed uint64, pages int) (*Corpus, error) {
	g, err := eval.GenerateSites(filepath.Join(dataDir, GutenbergFolder), eval.SitesConfig{Seed: seed, Pages: pages})
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	c := &Corpus{Name: fmt.Sprintf("site pages (eval sites, %d pages)", len(g.Pages))}
	groups := map[string][]string{}
	for _, p := range g.Pages {
		t := Truth{ID: p.ID, Sources: p.Sources}
		switch p.Role {
		case eval.RoleOriginal:
			t.Kind, t.Groups = Original, []string{p.ID}
		case eval.RoleNear:
			t.Kind = Near
		default:
			t.Kind, t.Groups = Partial, []string{p.ID}
		}
		for _, s := range p.Sources {
			gs, ok := groups[s]
			if !ok {
				return nil, fmt.Errorf("corpus: site page %s copies %s, which is not earlier", p.ID, s)
			}
			for _, g := range gs {
				if !slices.Contains(t.Groups, g) {
					t.Groups = append(t.Groups, g)
				}
			}
		}
		groups[p.ID] = t.Groups
		c.Docs = append(c.Docs, Doc{ID: p.ID, Text: string(p.Text())})
		c.Truth = append(c.Truth, t)
	}
	return c, nil
}

// Generated returns the project's generated corpus, as the benchmarks
// have used it: documents of 900–1,100 Zipf-distributed pseudo-words
// (~5 KB), 5% exact, 15% near and 5% partial copies (seed 0: 2026).
func Generated(docs int, seed uint64) *Corpus {
	if seed == 0 {
		seed = 2026
	}
	return fromSynth("generated (internal/synth, 25% copies)", synth.Config{Docs: docs, Seed: seed, MinWords: 900, MaxWords: 1100,
		ExactRate: 0.05, NearRate: 0.15, PartialRate: 0.05, NearEdits: 0.03, PartialReplace: 0.2, PartialNoise: 0.01})
}

// fromSynth is the generated corpus of cfg with its ground truth.
func fromSynth(name string, cfg synth.Config) *Corpus {
	ds := synth.Corpus(cfg)
	c := &Corpus{Name: name, Docs: make([]Doc, len(ds)), Truth: make([]Truth, len(ds))}
	for i, d := range ds {
		c.Docs[i] = Doc{ID: d.ID, Text: d.Text}
		t := Truth{ID: d.ID, Kind: Kind(d.Kind), Groups: []string{d.ID}}
		if d.Kind != synth.Original {
			t.Sources, t.Groups = []string{d.Source}, []string{d.Source}
		}
		c.Truth[i] = t
	}
	return c
}
