package corpus

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/dataset"
)

// dataDir is the shared data folder; the test fails under CI when it is
// absent and is skipped elsewhere.
func dataDir(t *testing.T) string {
	t.Helper()
	dataset.Dir(t, GutenbergFolder)
	return filepath.Dir(dataset.Dir(t, PANFolder))
}

// shingles returns the word 5-shingles of text, lower-cased, punctuation
// off.
func shingles(text string) map[string]bool {
	var ws []string
	for _, w := range strings.Fields(text) {
		if _, core, _ := splitWord(w); core != "" {
			ws = append(ws, strings.ToLower(core))
		}
	}
	out := map[string]bool{}
	for i := 0; i+5 <= len(ws); i++ {
		out[strings.Join(ws[i:i+5], " ")] = true
	}
	return out
}

func overlap(a, b map[string]bool) float64 {
	n := 0
	for s := range a {
		if b[s] {
			n++
		}
	}
	return float64(n) / float64(max(len(a), 1))
}

func TestBuildDeterministic(t *testing.T) {
	dir := dataDir(t)
	a, err := Build(dir, Config{Docs: 600, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	texts, err := LoadTexts(dir)
	if err != nil {
		t.Fatal(err)
	}
	texts.Build(Config{Docs: 300, Seed: 9}) // an earlier corpus changes nothing
	b, err := texts.Build(Config{Docs: 600, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two builds with the same seed differ")
	}
	c, err := texts.Build(Config{Docs: 600, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(a.Docs, c.Docs) {
		t.Fatal("seeds 7 and 8 give the same documents")
	}
}

// Each density and cluster size gives its share of copies and its
// clusters, every copy after its source, and a ground truth the texts
// bear out: exact copies equal their source, near copies share most of
// its shingles without being it, partial copies carry a passage of it,
// and originals (plain or enciphered) share almost nothing with earlier
// originals.
func TestBuildDensitiesAndTruth(t *testing.T) {
	texts, err := LoadTexts(dataDir(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d distinct chunks of 5,000 bytes", len(texts.chunks(5000)))
	for _, tc := range []struct {
		docs    int
		dup     float64
		cluster int
		largest int
	}{
		{1200, 0.1, 0, 2},
		{800, 0.3, 0, 2},
		{800, 0.8, 0, 5},
		{800, 0.95, 0, 20},
		{1200, 0.9, 1000, 1000},
		{600, 0.5, 2, 2},
	} {
		c, err := texts.Build(Config{Docs: tc.docs, Dup: tc.dup, Cluster: tc.cluster})
		if err != nil {
			t.Fatalf("dup %g cluster %d: %v", tc.dup, tc.cluster, err)
		}
		st := c.Stats()
		if copies := tc.docs - st.Kinds[Original]; copies != int(tc.dup*float64(tc.docs)+0.5) {
			t.Errorf("dup %g: %d copies of %d documents", tc.dup, copies, tc.docs)
		}
		if st.Largest != tc.largest {
			t.Errorf("dup %g cluster %d: largest cluster %d, want %d", tc.dup, tc.cluster, st.Largest, tc.largest)
		}
		for _, k := range []Kind{Exact, Near, Partial} {
			if st.Kinds[k] == 0 {
				t.Errorf("dup %g: no %s copy", tc.dup, k)
			}
		}
		pos := map[string]int{}
		sh := make([]map[string]bool, len(c.Docs))
		seen := map[string][]int{} // shingle → the originals so far that have it
		for i, d := range c.Docs {
			tr := c.Truth[i]
			pos[d.ID] = i
			sh[i] = shingles(d.Text)
			if tr.Kind == Original {
				shared := map[int]int{}
				for s := range sh[i] {
					for _, j := range seen[s] {
						shared[j]++
					}
					seen[s] = append(seen[s], i)
				}
				for j, n := range shared {
					if o := float64(n) / float64(len(sh[i])); o > 0.05 {
						t.Errorf("dup %g: original %s (enciphered %v) shares %.2f of its shingles with original %s", tc.dup, d.ID, tr.Enciphered, o, c.Docs[j].ID)
					}
				}
				continue
			}
			j, ok := pos[tr.Sources[0]]
			if !ok {
				t.Fatalf("dup %g: %s copies %s, which is not earlier", tc.dup, d.ID, tr.Sources[0])
			}
			src := c.Docs[j].Text
			switch o := overlap(sh[i], sh[j]); tr.Kind {
			case Exact:
				if d.Text != src {
					t.Errorf("exact copy %s differs from its source", d.ID)
				}
			case Near:
				if d.Text == src || o < 0.5 {
					t.Errorf("near copy %s: %.2f of its shingles in its source (identical %v)", d.ID, o, d.Text == src)
				}
			case Partial:
				if o < 0.15 || o > 0.8 {
					t.Errorf("partial copy %s: %.2f of its shingles in its source", d.ID, o)
				}
			}
			if !reflect.DeepEqual(tr.Groups[:1], c.Truth[j].Groups[:1]) {
				t.Errorf("copy %s in groups %v, its source %v", d.ID, tr.Groups, c.Truth[j].Groups)
			}
		}
		if tc.dup == 0.1 && st.Enciphered == 0 {
			t.Errorf("dup %g, %d originals: none enciphered (the data holds fewer chunks)", tc.dup, st.Kinds[Original])
		}
	}
}

func TestBuildBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Docs: 0},
		{Docs: 100, Dup: 1},
		{Docs: 100, Dup: 0.95, Cluster: 5},
		{Docs: 100, Cluster: 1},
		{Docs: 100, ExactShare: 0.8, PartialShare: 0.5},
		{Docs: 100, ChunkBytes: 10},
	} {
		if _, err := Build(t.TempDir(), cfg); err == nil || !strings.HasPrefix(err.Error(), "corpus: ") {
			t.Errorf("%+v: error %v, want a corpus: error", cfg, err)
		}
	}
	if _, err := Build(t.TempDir(), Config{Docs: 10}); err == nil {
		t.Error("a folder without the texts gives no error")
	}
	for _, spec := range []string{"nonsense", "generated:nope", "real:2", "real:0.5:1", "generated", "missing.jsonl"} {
		docs := 10
		if spec == "generated" {
			docs = 0
		}
		if _, err := Open(spec, docs, 0, t.TempDir()); err == nil {
			t.Errorf("corpus %q (%d documents) gives no error", spec, docs)
		}
	}
	if c, err := Open("generated:contain", 200, 0, ""); err != nil || c.Stats().Kinds[Partial] == 0 {
		t.Errorf("generated:contain: %v", err)
	}
}

func TestWriteRead(t *testing.T) {
	c := Generated(300, 0)
	path := filepath.Join(t.TempDir(), "c.jsonl")
	if err := c.Write(path); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Docs, c.Docs) || !reflect.DeepEqual(got.Truth, c.Truth) {
		t.Fatal("read back differs")
	}
	for name, truth := range map[string]string{
		"not json":       "{\n",
		"other id":       `{"id":"nope","kind":"original","groups":["nope"]}` + "\n",
		"no group":       `{"id":"` + c.Docs[0].ID + `","kind":"original"}` + "\n",
		"fewer records":  "",
		"missing (none)": "-",
	} {
		p := filepath.Join(t.TempDir(), "c.jsonl")
		if err := os.WriteFile(p, []byte(`{"id":"`+c.Docs[0].ID+`","text":"x"}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if truth != "-" {
			if err := os.WriteFile(TruthPath(p), []byte(truth), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Read(p); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestScore(t *testing.T) {
	c := &Corpus{Truth: []Truth{
		{ID: "a", Kind: Original, Groups: []string{"a"}},
		{ID: "b", Kind: Original, Groups: []string{"b"}},
		{ID: "c", Kind: Near, Sources: []string{"a"}, Groups: []string{"a"}},
		{ID: "d", Kind: Partial, Sources: []string{"c"}, Groups: []string{"a", "d"}},
		{ID: "e", Kind: Exact, Sources: []string{"b"}, Groups: []string{"b"}},
	}}
	for _, tc := range []struct {
		name  string
		pairs [][2]string
		want  Score
	}{
		{"none", nil, Score{Copies: 3, Precision: 1}},
		{"sources", [][2]string{{"c", "a"}, {"d", "c"}, {"e", "b"}}, Score{Pairs: 3, Correct: 3, Found: 3, Copies: 3, Precision: 1, Recall: 1}},
		{"sibling counts", [][2]string{{"d", "a"}}, Score{Pairs: 1, Correct: 1, Found: 1, Copies: 3, Precision: 1, Recall: 1.0 / 3}},
		{"wrong and unknown", [][2]string{{"e", "a"}, {"c", "zz"}, {"c", "a"}}, Score{Pairs: 3, Correct: 1, Found: 1, Copies: 3, Precision: 1.0 / 3, Recall: 1.0 / 3}},
		{"original reported", [][2]string{{"b", "a"}}, Score{Pairs: 1, Copies: 3}},
	} {
		m := map[[2]string]bool{}
		for _, p := range tc.pairs {
			m[p] = true
		}
		if got := c.Score(m); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestSites(t *testing.T) {
	c, err := Sites(dataDir(t), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	st := c.Stats()
	if st.Docs != 420 || st.Kinds[Near] == 0 || st.Kinds[Partial] == 0 {
		t.Fatalf("sites: %v", st)
	}
}

// TestWindowedStream checks Config.Window: every copy follows its source
// within about the window (its span is in time, so positions vary by the
// number of documents placed in it, clusters arriving twenty at a time:
// under two windows here), the densities are those asked for, and the stream is
// stationary: after the first window, each fifth of it holds about the same
// share of originals, where the unwindowed stream crowds them at its start.
func TestWindowedStream(t *testing.T) {
	texts, err := LoadTexts(dataDir(t))
	if err != nil {
		t.Fatal(err)
	}
	const docs, window = 5000, 500
	originals := func(c *Corpus) []int { // per fifth of the stream
		per := make([]int, 5)
		for i, tr := range c.Truth {
			if tr.Kind == Original {
				per[i*5/len(c.Truth)]++
			}
		}
		return per
	}
	for _, tc := range []struct {
		dup     float64
		cluster int
	}{{0.95, 20}, {0.8, 5}, {0.3, 0}} {
		c, err := texts.Build(Config{Docs: docs, Dup: tc.dup, Cluster: tc.cluster, Window: window})
		if err != nil {
			t.Fatal(err)
		}
		pos := map[string]int{}
		for i, d := range c.Docs {
			pos[d.ID] = i
		}
		for i, tr := range c.Truth {
			for _, s := range tr.Sources {
				if p := pos[s]; p >= i || i-p >= 2*window {
					t.Fatalf("dup %g: copy at %d of source at %d: want the source before it, within %d", tc.dup, i, p, 2*window)
				}
			}
		}
		if copies := docs - c.Stats().Kinds[Original]; copies != int(tc.dup*docs+0.5) {
			t.Errorf("dup %g: %d copies of %d documents", tc.dup, copies, docs)
		}
		per := originals(c)
		lo, hi := slices.Min(per[1:]), slices.Max(per[1:])
		if float64(hi) > 1.5*float64(lo)+20 {
			t.Errorf("dup %g: originals per fifth %v: not stationary after the first window", tc.dup, per)
		}
	}
	// The unwindowed stream is not stationary: that is what Window is for.
	c, err := texts.Build(Config{Docs: docs})
	if err != nil {
		t.Fatal(err)
	}
	if per := originals(c); per[0] < 3*per[2] {
		t.Errorf("originals per fifth of the whole-stream corpus %v: want them crowded at the start", per)
	}
	if _, err := texts.Build(Config{Docs: docs, Cluster: 20, Window: 10}); err == nil {
		t.Error("a window smaller than a cluster was accepted")
	}
}

// A rounds stream holds each text's original in the first round and one
// copy of it in every later round.
func TestRoundsStream(t *testing.T) {
	dir := dataDir(t)
	const docs, texts = 530, 50
	c, err := Open("rounds:50", docs, 0, dir)
	if err != nil {
		t.Fatal(err)
	}
	pos := map[string]int{}
	for i, d := range c.Docs {
		pos[d.ID] = i
	}
	for i, tr := range c.Truth {
		round := i / texts
		if (round == 0) != (tr.Kind == Original) {
			t.Fatalf("position %d (round %d) is %v", i, round, tr.Kind)
		}
		if round == 0 {
			continue
		}
		if len(tr.Sources) != 1 || pos[tr.Sources[0]] >= texts {
			t.Fatalf("position %d: sources %v, want one original of the first round", i, tr.Sources)
		}
	}
	for p := texts; p < docs; p += texts {
		seen := map[string]bool{}
		for _, tr := range c.Truth[p:min(p+texts, docs)] {
			if seen[tr.Sources[0]] {
				t.Fatalf("round %d copies %s twice", p/texts, tr.Sources[0])
			}
			seen[tr.Sources[0]] = true
		}
	}
	st := c.Stats()
	if st.Kinds[Original] != texts || st.Clusters != texts || st.Largest != 11 {
		t.Errorf("stats %v: want %d originals and clusters, the largest of 11", st, texts)
	}
	for _, spec := range []string{"rounds:0", "rounds:x", "rounds:531"} {
		if _, err := Open(spec, docs, 0, dir); err == nil {
			t.Errorf("corpus %q gives no error", spec)
		}
	}
}
