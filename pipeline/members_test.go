package pipeline_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/bench/corpus"
	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/dataset"
	"github.com/neardup/neardup/pipeline"
)

// member is one member of a consumer group: a pipeline of its own over a
// shared index, kept across the parts of the stream it is given.
type member struct {
	pl    *pipeline.Pipeline
	store index.Store
}

func newMember(t *testing.T, cfg config.Config) *member {
	t.Helper()
	pc, store, err := pipeline.OpenStore(context.Background(), &cfg, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	pl, err := pipeline.New(pc, store)
	if err != nil {
		t.Fatal(err)
	}
	return &member{pl: pl, store: store}
}

// run streams docs through the member's pipeline and returns their
// events in input order, without their timestamps.
func (m *member) run(ctx context.Context, docs []corpus.Doc) ([]pipeline.Event, error) {
	items := make(chan pipeline.Item, len(docs))
	for _, d := range docs {
		items <- pipeline.Item{Doc: pipeline.Document{ID: d.ID, Text: []byte(d.Text)}}
	}
	close(items)
	outs := make(chan pipeline.Output, len(docs))
	if err := m.pl.Run(ctx, items, outs); err != nil {
		return nil, err
	}
	close(outs)
	var events []pipeline.Event
	for o := range outs {
		if o.Event == nil {
			return nil, fmt.Errorf("an output without an event: %+v", o)
		}
		ev := *o.Event
		ev.At = time.Time{}
		events = append(events, ev)
	}
	if len(events) != len(docs) {
		return nil, fmt.Errorf("%d events for %d documents", len(events), len(docs))
	}
	return events, nil
}

// A copy-dense stream gives the same events whether one member reads it
// whole, two members of a consumer group read it in turns over one Redis,
// or a member restarts in its middle: the sources of widely copied texts
// are kept in the index (common.go), so a member that did not see a text
// copied whole, or saw it before a restart, knows its source. With the
// sources in each member's memory, the members after the first missed
// the sources found before and judged later partial copies of those
// texts by the template rule: at 95% copies in clusters of 20, 99 of
// 1,200 events differed with two members in turns and 186 after a
// restart (on a 3-master cluster, another draw: 49 and 96 of 600); at
// 80% in clusters of 5, 1 after a restart.
func TestMembersShareSources(t *testing.T) {
	root := filepath.Dir(dataset.Dir(t, corpus.GutenbergFolder))
	dataset.Dir(t, corpus.PANFolder)
	texts, err := corpus.LoadTexts(root)
	if err != nil {
		t.Fatal(err)
	}
	base, err := eval.StreamConfig(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	// The race run (-short, make race) streams half the documents: the
	// same members in turns and restarts, over fewer parts; make unit
	// streams them all.
	n := 1200
	if testing.Short() {
		n = 600
	}
	node := "redis://" + redistest.StartServer(t)
	cluster := "redis+cluster://" + strings.Join(redistest.StartCluster(t), ",")
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		url  string
		cfg  corpus.Config
	}{
		{"95% copies, clusters of 20", node, corpus.Config{Docs: n, Seed: 3}},
		{"80% copies, clusters of 5", node, corpus.Config{Docs: n, Seed: 13, Dup: 0.8}},
		// In a cluster the sources come with Store.Sources, not with
		// the candidates.
		{"cluster, 95% copies, clusters of 20", cluster, corpus.Config{Docs: n / 2, Seed: 5}},
	} {
		c, err := texts.Build(tt.cfg)
		if err != nil {
			t.Fatal(err)
		}
		ns := 0
		fresh := func() config.Config {
			cf := base
			cf.Index.URL = tt.url
			ns++
			cf.Index.Namespace = fmt.Sprintf("members-%d-%d", tt.cfg.Seed, ns)
			return cf
		}
		want, err := newMember(t, fresh()).run(ctx, c.Docs)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(tt.name+"/two members in turns", func(t *testing.T) {
			cf := fresh()
			a, b := newMember(t, cf), newMember(t, cf)
			var got []pipeline.Event
			const part = 150
			for i, lo := 0, 0; lo < len(c.Docs); i, lo = i+1, lo+part {
				m := a
				if i%2 == 1 {
					m = b
				}
				evs, err := m.run(ctx, c.Docs[lo:min(lo+part, len(c.Docs))])
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, evs...)
			}
			sameEvents(t, want, got)
		})
		t.Run(tt.name+"/restart", func(t *testing.T) {
			cf := fresh()
			half := len(c.Docs) / 2
			first, err := newMember(t, cf).run(ctx, c.Docs[:half])
			if err != nil {
				t.Fatal(err)
			}
			second, err := newMember(t, cf).run(ctx, c.Docs[half:])
			if err != nil {
				t.Fatal(err)
			}
			sameEvents(t, want, append(first, second...))
		})
	}
}

// sameEvents reports the events of got that differ from want's.
func sameEvents(t *testing.T, want, got []pipeline.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	diff := 0
	for i := range want {
		if !reflect.DeepEqual(want[i], got[i]) {
			if diff++; diff <= 3 {
				t.Errorf("event %d (%s) differs from one member's:\n  one member %s %s %+v\n  here       %s %s %+v", i, want[i].ID,
					want[i].Kind, want[i].DuplicateOf, want[i].Matches, got[i].Kind, got[i].DuplicateOf, got[i].Matches)
			}
		}
	}
	if diff > 0 {
		t.Errorf("%d of %d events differ from one member's", diff, len(want))
	}
}
