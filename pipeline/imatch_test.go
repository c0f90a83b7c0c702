package pipeline

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/dataset"
	"github.com/neardup/neardup/internal/synth"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// imatchCount is the measurement of "an equal I-Match digest means a near
// duplicate" on one data set, over pairs whose normalized texts differ
// (identical texts are exact copies, found by the content digest).
type imatchCount struct {
	set string
	// truePairs is the number of labelled duplicate pairs (near or
	// partial), equalTrue how many of them have equal digests (recall),
	// equalFalse the pairs with equal digests that are not duplicates.
	truePairs, equalTrue, equalFalse int
}

// digestOf sketches text with a profile's sketch configuration.
func digestOf(t testing.TB, s *sketch.Sketcher, text []byte) (sketch.Digest, sketch.ContentDigest, bool) {
	t.Helper()
	var f sketch.Features
	if err := s.Sketch(text, &f); err != nil {
		t.Fatal(err)
	}
	return f.IMatch, f.Content, f.HasIMatch
}

// TestIMatchEvidence measures whether an equal I-Match digest can decide
// a duplicate on its own, per profile, on the labelled data: the
// Gutenberg editions (5 same-work pairs, 40 different-work pairs) and the
// generated corpora of the planted-duplicate test (other seeds). A
// profile may decide on I-Match only where the digest found duplicates
// (recall > 0) and never a non-duplicate (no false pair). The figures are
// in docs/design.md ("I-Match").
func TestIMatchEvidence(t *testing.T) {
	gut := filepath.Join(dataset.Dir(t, "gutenberg-editions"), "texts")
	for _, profile := range []string{"web", "books"} {
		t.Run(profile, func(t *testing.T) {
			cfg := testConfig(t, profile)
			s, err := sketch.New(cfg.Sketch, nil)
			if err != nil {
				t.Fatal(err)
			}
			var counts []imatchCount

			// Gutenberg: every pair of the ten texts.
			c := imatchCount{set: "gutenberg-editions"}
			pairs := readGutenbergPairs(t, filepath.Dir(gut))
			digests := map[string]sketch.Digest{}
			for _, p := range pairs {
				for _, name := range []string{p[0], p[1]} {
					if _, ok := digests[name]; !ok {
						b, err := os.ReadFile(filepath.Join(gut, name))
						if err != nil {
							t.Fatal(err)
						}
						d, _, ok := digestOf(t, s, b)
						if !ok {
							t.Fatalf("%s has no I-Match digest", name)
						}
						digests[name] = d
					}
				}
				equal := digests[p[0]] == digests[p[1]]
				if p[2] == "1" {
					c.truePairs++
					if equal {
						c.equalTrue++
					}
				} else if equal {
					c.equalFalse++
				}
			}
			counts = append(counts, c)

			// Generated corpora: planted pairs, and every pair of documents
			// that share a digest. The race run (-short, make race) has
			// nothing to find in more of the same sketching (it is serial):
			// 1000 documents each; make unit measures the 3000.
			n := 3000
			if testing.Short() {
				n = 1000
			}
			for _, sc := range []synth.Config{
				{Docs: n, Seed: 101, Contain: true, ContainExtra: [2]float64{0.3, 1}},
				{Docs: n, Seed: 102, PartialReplace: 0.2, PartialNoise: 0.01},
			} {
				docs := synth.Corpus(sc)
				c := imatchCount{set: fmt.Sprintf("synthetic seed %d", sc.Seed)}
				byDigest := map[sketch.Digest][]int{}
				contents := make([]sketch.ContentDigest, len(docs))
				index := map[string]int{}
				for i, d := range docs {
					dg, content, ok := digestOf(t, s, []byte(d.Text))
					contents[i] = content
					index[d.ID] = i
					if ok {
						byDigest[dg] = append(byDigest[dg], i)
					}
				}
				planted := map[[2]int]bool{}
				for i, d := range docs {
					if d.Kind == synth.Near || d.Kind == synth.Partial {
						planted[[2]int{index[d.Source], i}] = true
						c.truePairs++
					}
				}
				for _, group := range byDigest {
					for x := range group {
						for _, b := range group[x+1:] {
							a := group[x]
							if contents[a] == contents[b] {
								continue // an exact copy
							}
							if planted[[2]int{a, b}] {
								c.equalTrue++
							} else {
								c.equalFalse++
							}
						}
					}
				}
				counts = append(counts, c)
			}

			// Two constructed pairs that keep every word and so the digest:
			// a text with its sentences in another order, and a news item
			// with two company names swapped.
			shuffled, swapped := imatchTraps()
			c = imatchCount{set: "shuffled sentences, swapped names"}
			for _, p := range [][2]string{shuffled, swapped} {
				a, _, _ := digestOf(t, s, []byte(p[0]))
				b, _, _ := digestOf(t, s, []byte(p[1]))
				if a == b {
					c.equalFalse++ // neither is a copy of the other
				}
			}
			counts = append(counts, c)

			right := true
			for _, c := range counts {
				t.Logf("%s profile, %-34s duplicate pairs %5d, with equal digests %4d; other pairs with equal digests %d",
					profile, c.set+":", c.truePairs, c.equalTrue, c.equalFalse)
				right = right && c.equalFalse == 0
			}
			decides := slices.ContainsFunc(cfg.Verify.Checks, func(c verify.Check) bool { return c.Method == verify.MethodIMatch })
			if decides && !right {
				t.Errorf("the %s profile decides on I-Match, but equal digests named pairs that are not duplicates", profile)
			}
		})
	}
}

// readGutenbergPairs returns (a, b, same_work) for every row of pairs.tsv.
func readGutenbergPairs(t testing.TB, dir string) [][3]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "pairs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][3]string
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) < 5 {
			t.Fatalf("pairs.tsv: %q", sc.Text())
		}
		out = append(out, [3]string{fields[0], fields[1], fields[4]})
	}
	if len(out) != 45 {
		t.Fatalf("pairs.tsv: %d pairs, want 45", len(out))
	}
	return out
}

// imatchTraps returns two pairs of texts with the same words but not the
// same meaning or order: sentences of four words shuffled (no 5-word
// shingle survives), and a news item with two company names swapped.
func imatchTraps() (shuffled, swapped [2]string) {
	g := synth.NewGenerator(77, 5000)
	var sentences []string
	for range 80 {
		w := g.Words(4)
		w[0] = strings.ToUpper(w[0][:1]) + w[0][1:]
		sentences = append(sentences, strings.Join(w, " ")+".")
	}
	perm := slices.Clone(sentences)
	rand.New(rand.NewPCG(7, 7)).Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	shuffled = [2]string{strings.Join(sentences, " "), strings.Join(perm, " ")}
	item := `Northwind Traders agreed on Monday to acquire Contoso Pharmaceuticals for 4.2 billion dollars,
the companies said, in a deal that would make Northwind the largest supplier of generic drugs in the region.
Contoso shareholders will receive 31 dollars a share, a premium of 24 percent over Friday's closing price.
Northwind's chief executive said the purchase would add Contoso's research pipeline of eleven drugs in late
trials and cut combined costs by 300 million dollars a year within three years. Analysts said regulators were
likely to examine the overlap between Northwind and Contoso in antibiotics, where the two hold a third of the
market between them. Contoso's board has recommended the offer, and the deal is expected to close in the second
half of next year, subject to approval by shareholders of Northwind and of Contoso and by competition authorities.`
	swap := strings.NewReplacer("Northwind", "Contoso", "Contoso", "Northwind").Replace(item)
	swapped = [2]string{item, swap}
	return shuffled, swapped
}

// In the web profile an equal I-Match digest is a candidate, verified by
// resemblance: a text with its sentences shuffled and a news item with two
// names swapped share their digest, the index hands the first to the
// second as its I-Match candidate, and the verdict is the resemblance
// checks' (here: not duplicates, Jaccard 0.0 and about 0.5). On today's
// main both came out near by imatch.
func TestIMatchIsACandidate(t *testing.T) {
	cfg := testConfig(t, "web")
	s, err := sketch.New(cfg.Sketch, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := verify.New(cfg.Verify)
	if err != nil {
		t.Fatal(err)
	}
	shuffled, swapped := imatchTraps()
	for _, tc := range []struct {
		name string
		pair [2]string
	}{{"shuffled sentences", shuffled}, {"swapped names", swapped}} {
		t.Run(tc.name, func(t *testing.T) {
			var f [2]*sketch.Features
			for i, text := range tc.pair {
				var full sketch.Features
				if err := s.Sketch([]byte(text), &full); err != nil {
					t.Fatal(err)
				}
				f[i] = &sketch.Features{}
				full.Stored(f[i], cfg.Verify.Limits(cfg.Limits))
				if !full.HasIMatch {
					t.Fatal("no I-Match digest: the test would prove nothing")
				}
				f[i].IMatch = full.IMatch
			}
			if f[0].IMatch != f[1].IMatch {
				t.Fatal("the pair does not share an I-Match digest: the test would prove nothing")
			}
			want := v.Verify(f[1], f[0])
			probe, _ := New(cfg, nil)
			mem, err := index.NewMemory(index.MemoryConfig{Params: probe.IndexParams()})
			if err != nil {
				t.Fatal(err)
			}
			outs := run(t, cfg, func(*Pipeline) index.Store { return mem },
				[]Item{{Doc: Document{ID: "a", Text: []byte(tc.pair[0])}}, {Doc: Document{ID: "b", Text: []byte(tc.pair[1])}}})
			ev := outs[1].Event
			if mem.Stats().IMatch != 1 {
				t.Errorf("the I-Match lane did not return a as b's candidate: %+v", mem.Stats())
			}
			wantKind := string(want.Kind)
			if want.Kind == verify.Distinct {
				wantKind = KindUnique
			}
			if ev.Kind != wantKind || ev.Method == string(verify.MethodIMatch) {
				t.Errorf("%s by %q; the resemblance checks say %s by %s", ev.Kind, ev.Method, want.Kind, want.Check)
			}
			j := -1.0
			if want.Scores.Jaccard != nil {
				j = *want.Scores.Jaccard
			}
			t.Logf("%s by %q (jaccard %.3f; -1: not reached)", ev.Kind, ev.Method, j)
		})
	}
}
