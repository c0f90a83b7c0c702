package synth

import "testing"

func TestCorpus(t *testing.T) {
	docs := Corpus(Config{Docs: 2000, Seed: 1})
	if len(docs) != 2000 {
		t.Fatalf("%d docs", len(docs))
	}
	pos := map[string]int{}
	used := map[string]bool{}
	count := map[Kind]int{}
	for i, d := range docs {
		pos[d.ID] = i
		count[d.Kind]++
		if d.Kind == Original {
			continue
		}
		p, ok := pos[d.Source]
		if !ok || docs[p].Kind != Original || used[d.Source] {
			t.Fatalf("%s: source %s not an earlier unused original", d.ID, d.Source)
		}
		used[d.Source] = true
		if d.Kind == Exact && d.Text != docs[p].Text {
			t.Fatalf("%s: exact copy differs", d.ID)
		}
		if d.Kind != Exact && d.Text == docs[p].Text {
			t.Fatalf("%s: %s copy is identical", d.ID, d.Kind)
		}
	}
	for _, k := range []Kind{Exact, Near, Partial} {
		if count[k] < 100 {
			t.Errorf("only %d %s duplicates", count[k], k)
		}
	}
	again := Corpus(Config{Docs: 2000, Seed: 1})
	for i := range docs {
		if docs[i] != again[i] {
			t.Fatal("corpus not deterministic")
		}
	}
}

// A stream with a window plants duplicates of recent originals only and
// keeps no more than the window in memory; without one it is the corpus.
func TestStream(t *testing.T) {
	cfg := Config{Docs: 3000, Seed: 4}
	var all []Doc
	Stream(cfg, 0, func(d Doc) { all = append(all, d) })
	corpus := Corpus(cfg)
	for i := range corpus {
		if all[i] != corpus[i] {
			t.Fatal("Stream without a window differs from Corpus")
		}
	}
	pos := map[string]int{}
	n := 0
	Stream(cfg, 50, func(d Doc) {
		pos[d.ID] = n
		n++
		if d.Kind != Original {
			if _, ok := pos[d.Source]; !ok {
				t.Fatalf("%s: source %s not emitted before", d.ID, d.Source)
			}
		}
	})
	if n != cfg.Docs {
		t.Fatalf("%d documents, want %d", n, cfg.Docs)
	}
}
