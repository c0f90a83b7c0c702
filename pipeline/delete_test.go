package pipeline

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/schematest"
	"github.com/neardup/neardup/internal/synth"
)

// Deletes run in input order with the documents around them, even inside
// one index batch: a document is inserted, deleted, deleted again (not
// found) and re-sent (new, not a replay); a copy sent after the delete is
// an exact copy of the copy stored before the delete (deleting an original
// leaves its stored exact copies findable: see index "Deletion"); a later
// document that named the deleted one keeps its verdict.
// The deleted events satisfy the schema. Memory and Redis.
func TestPipelineDeletes(t *testing.T) {
	schema := schematest.Load(t, "event.schema.json")
	addr := redistest.StartServer(t)
	var a, b synth.Doc
	for _, d := range synth.Corpus(synth.Config{Docs: 60, Seed: 9}) {
		if d.Kind == synth.Original && a.ID == "" {
			a = d
		} else if d.Kind == synth.Original && b.ID == "" {
			b = d
		}
	}
	doc := func(id, text string) Item { return Item{Doc: Document{ID: id, Text: []byte(text)}} }
	del := func(id string) Item { return Item{Doc: Document{ID: id}, Delete: true} }
	items := []Item{
		doc(a.ID, a.Text), doc("copy1", a.Text), del(a.ID), del(a.ID), doc("copy2", a.Text),
		doc(a.ID, a.Text), del(""), doc(b.ID, b.Text), del(b.ID), del("never-stored"),
	}
	cfg := testConfig(t, "web")
	for name, ix := range map[string]func(*Pipeline) index.Store{
		"memory": func(p *Pipeline) index.Store { return memoryIndex(t, p) },
		"redis":  redisIndex(t, addr),
	} {
		t.Run(name, func(t *testing.T) {
			outs := run(t, cfg, ix, items)
			kind := func(i int) string {
				if outs[i].Event == nil {
					return "dead"
				}
				return outs[i].Event.Kind
			}
			want := []string{KindUnique, KindExact, KindDeleted, KindDeleted, KindExact, KindExact, "dead", KindUnique, KindDeleted, KindDeleted}
			for i, k := range want {
				if kind(i) != k {
					t.Errorf("item %d (%s, delete %v): %s, want %s", i, items[i].Doc.ID, items[i].Delete, kind(i), k)
				}
			}
			if t.Failed() {
				return
			}
			if ev := outs[1].Event; ev.DuplicateOf != a.ID {
				t.Errorf("copy1 duplicates %q, want %s (its verdict stands after the delete)", ev.DuplicateOf, a.ID)
			}
			for i, nf := range map[int]bool{2: false, 3: true, 8: false, 9: true} {
				if ev := outs[i].Event; ev.NotFound != nf || ev.ID != items[i].Doc.ID {
					t.Errorf("item %d: deleted event %+v, want not_found %v", i, ev, nf)
				}
				b, _ := json.Marshal(outs[i].Event)
				schema.Validate(t, b)
			}
			// copy1, an exact copy stored while a was its content's
			// representative, takes a's place when a is deleted: copy2
			// and a re-sent are exact copies of it.
			if ev := outs[4].Event; ev.DuplicateOf != "copy1" {
				t.Errorf("copy2 after the delete: %+v; want an exact copy of copy1", ev)
			}
			if ev := outs[5].Event; ev.Replay || ev.DuplicateOf != "copy1" {
				t.Errorf("%s re-sent after its delete: %+v; want new, an exact copy of copy1", a.ID, ev)
			}
			if d := outs[6].Dead; d == nil || d.Reason != ReasonMissingID {
				t.Errorf("delete without an id: %+v, want a missing_id dead letter", d)
			}
		})
	}
}

// lookupOnly is an index without Remove.
type lookupOnly struct{ Index }

// An index that cannot remove documents turns deletes into dead letters
// (delete_unsupported); the documents around them are decided.
func TestPipelineDeleteUnsupported(t *testing.T) {
	cfg := testConfig(t, "web")
	items := []Item{{Doc: Document{ID: "a", Text: []byte("one two three four five six seven eight")}}, {Doc: Document{ID: "a"}, Delete: true}}
	outs := run(t, cfg, func(p *Pipeline) index.Store {
		return struct {
			index.Store
		}{memoryIndex(t, p)}
	}, items[:1])
	if outs[0].Event == nil {
		t.Fatalf("a: %+v", outs[0])
	}
	probe, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := New(cfg, lookupOnly{memoryIndex(t, probe)})
	if err != nil {
		t.Fatal(err)
	}
	in, out := make(chan Item, 2), make(chan Output, 2)
	in <- items[0]
	in <- items[1]
	close(in)
	if err := pl.Run(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	close(out)
	var got []Output
	for o := range out {
		got = append(got, o)
	}
	if len(got) != 2 || got[0].Event == nil || got[1].Dead == nil || got[1].Dead.Reason != ReasonNoDelete {
		t.Errorf("outputs %+v, want an event and a delete_unsupported dead letter", got)
	}
}

// The schema holds deleted events to their shape: no duplicate_of,
// method, scores or matches; not_found only on them.
func TestSchemaDeleted(t *testing.T) {
	schema := schematest.Load(t, "event.schema.json")
	params := `"params":{"profile":"web","shingle":5,"k":128,"minhash":"oph","bands":9,"rows":13,"seed":1,"simhash_k":3,"index":"memory","version":"x"}`
	head := `{"id":"a","cluster":"a","source":{},` + params + `,"at":"2026-01-01T00:00:00Z",`
	schema.Validate(t, []byte(head+`"kind":"deleted","not_found":true}`))
	for _, bad := range []string{
		head + `"kind":"deleted","duplicate_of":"b"}`,
		head + `"kind":"deleted","method":"exact"}`,
		head + `"kind":"unique","not_found":true}`,
		head + `"kind":"deleted","not_found":false}`,
	} {
		ft := &fakeT{TB: t}
		schema.Validate(ft, []byte(bad))
		if !ft.failed {
			t.Errorf("schema accepted %s", bad)
		}
	}
}
