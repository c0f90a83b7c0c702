package eval_test

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/neardup/neardup/bench/corpus"
	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/dataset"
)

// TestCopyDenseRecall streams copy-dense real-text corpora (bench/corpus:
// Gutenberg and PAN13 text cut into ~5 KB originals, each followed by
// exact, near and partial copies) through the pipeline with the memory
// index, as neardup scan does, and checks the reported (duplicate,
// duplicate_of) pairs against the corpus's truth.
//
// In such a stream a copied text is soon held by index.common_docs
// documents, so its keys are common, like a site's template: a partial
// copy of it (a passage inside other text) must still be found. Before
// the copied texts were told from templates (pipeline/common.go,
// markSources), the common passage was taken as the partial copy's
// template and most partial copies from a cluster's fourth document on
// were missed: recall 0.78 at 95% copies in clusters of 20.
func TestCopyDenseRecall(t *testing.T) {
	root := filepath.Dir(dataset.Dir(t, corpus.GutenbergFolder))
	dataset.Dir(t, corpus.PANFolder)
	texts, err := corpus.LoadTexts(root)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		cfg  corpus.Config
	}{
		{"95% copies, clusters of 20", corpus.Config{Docs: 3000, Seed: 7}},
		{"95% copies, clusters of 100", corpus.Config{Docs: 3000, Seed: 11, Cluster: 100}},
		{"80% copies, clusters of 5", corpus.Config{Docs: 3000, Seed: 13, Dup: 0.8}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := texts.Build(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			docs := make([]eval.Doc, len(c.Docs))
			for i, d := range c.Docs {
				docs[i] = eval.Doc{ID: d.ID, Text: []byte(d.Text)}
			}
			events, err := eval.Stream(context.Background(), cfg, docs, nil)
			if err != nil {
				t.Fatal(err)
			}
			pairs := map[[2]string]bool{}
			partial := 0 // partial copies found
			kind := map[string]corpus.Kind{}
			for _, tr := range c.Truth {
				kind[tr.ID] = tr.Kind
			}
			for _, ev := range events {
				if ev.DuplicateOf != "" {
					pairs[[2]string{ev.ID, ev.DuplicateOf}] = true
				}
			}
			s := c.Score(pairs)
			for p := range pairs {
				if kind[p[0]] == corpus.Partial && c.Score(map[[2]string]bool{p: true}).Correct == 1 {
					partial++
				}
			}
			st := c.Stats()
			t.Logf("%v: precision %.4f, recall %.4f; partial copies found %d of %d", st, s.Precision, s.Recall, partial, st.Kinds[corpus.Partial])
			if s.Precision < 0.99 {
				t.Errorf("precision %.4f, want >= 0.99", s.Precision)
			}
			if s.Recall < 0.97 {
				t.Errorf("recall %.4f, want >= 0.97", s.Recall)
			}
		})
	}
}

// A copy-dense stream gives the same events on the memory index, a Redis
// node and a three-master Redis Cluster: which candidates are sources of
// a widely copied text is decided in input order from what the index
// returns, not from the backend or the timing.
func TestCopyDenseIndexesAgree(t *testing.T) {
	root := filepath.Dir(dataset.Dir(t, corpus.GutenbergFolder))
	dataset.Dir(t, corpus.PANFolder)
	texts, err := corpus.LoadTexts(root)
	if err != nil {
		t.Fatal(err)
	}
	c, err := texts.Build(corpus.Config{Docs: 800, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	docs := make([]eval.Doc, len(c.Docs))
	for i, d := range c.Docs {
		docs[i] = eval.Doc{ID: d.ID, Text: []byte(d.Text)}
	}
	cfg, err := eval.StreamConfig(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var want []eval.Event
	for _, url := range []string{"memory", "redis://" + redistest.StartServer(t), "redis+cluster://" + strings.Join(redistest.StartCluster(t), ",")} {
		cf := cfg
		cf.Index.URL = url
		cf.Index.Namespace = "copydense-agree"
		got, err := eval.StreamOn(ctx, cf, docs, nil)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		if want == nil {
			pairs := map[[2]string]bool{}
			for _, ev := range got {
				if ev.DuplicateOf != "" {
					pairs[[2]string{ev.ID, ev.DuplicateOf}] = true
				}
			}
			if s := c.Score(pairs); s.Recall < 0.9 {
				t.Fatalf("%s: recall %.4f on %d documents, want >= 0.9", url, s.Recall, len(docs))
			}
			want = got
			continue
		}
		for i := range want {
			if !reflect.DeepEqual(want[i], got[i]) {
				t.Errorf("%s: event %d (%s) differs from memory's:\n  memory %+v\n  %s %+v", url, i, want[i].ID, want[i], url, got[i])
			}
		}
	}
}
