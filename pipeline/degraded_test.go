package pipeline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/schematest"
	"github.com/neardup/neardup/internal/synth"
)

// garbling records garbage instead of the verdict of one id: the first
// write wins, so the id's stored verdict stays garbage.
type garbling struct {
	index.Store
	id string
	p  index.Params
	t  testing.TB
}

func (g *garbling) RecordVerdicts(ctx context.Context, seqs []uint64, verdicts [][]byte) ([]bool, error) {
	v := append([][]byte(nil), verdicts...)
	bad := storedSeqs(g.t, g.Store, g.p, g.id)[0]
	for i, seq := range seqs {
		if seq == bad {
			v[i] = []byte("\x00\xffnot a verdict")
		}
	}
	return g.Store.RecordVerdicts(ctx, seqs, v)
}

// Issue 24, "Nothing silent": a stored verdict that does not decode was
// read as an empty record, so a replay of its id was reported as a unique
// document, and a duplicate of it was put in a cluster of its own. Now
// both become dead letters (bad_stored_verdict) naming the id, and the
// stream goes on.
func TestBadStoredVerdict(t *testing.T) {
	g := synth.NewGenerator(11, 5000)
	a := g.Text(g.Words(400))
	b := a + " " + g.Text(g.Words(20)) // near duplicate of a
	fresh := g.Text(g.Words(300))
	addr := redistest.StartServer(t)
	for _, tt := range []struct {
		name string
		ix   func(*Pipeline) index.Store
	}{
		{"memory", func(p *Pipeline) index.Store { return memoryIndex(t, p) }},
		{"redis", redisIndex(t, addr)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t, "web")
			probe, err := New(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			ix := tt.ix(probe)
			first := run(t, cfg, func(*Pipeline) index.Store { return &garbling{ix, "a", probe.IndexParams(), t} }, []Item{
				{Doc: Document{ID: "a", Text: []byte(a)}},
				{Doc: Document{ID: "b", Text: []byte(b)}},
			})
			if ev := first[1].Event; ev == nil || ev.DuplicateOf != "a" {
				t.Fatalf("b in the first run: %+v", ev)
			}
			// A second instance (empty cluster cache) over the same index.
			outs := run(t, cfg, func(*Pipeline) index.Store { return ix }, []Item{
				{Doc: Document{ID: "a", Text: []byte(a)}},     // replay of a
				{Doc: Document{ID: "c", Text: []byte(a)}},     // copy of a: its cluster is a's
				{Doc: Document{ID: "d", Text: []byte(b)}},     // copy of b: cluster a, from b's verdict
				{Doc: Document{ID: "e", Text: []byte(fresh)}}, // unique
				{Doc: Document{ID: "a", Text: []byte(a)}},     // replay of a again
			})
			want := []string{"dead:bad_stored_verdict:a", "dead:bad_stored_verdict:c", "exact b a", "unique e e", "dead:bad_stored_verdict:a"}
			dl := schematest.Load(t, "dead-letter.schema.json")
			for i, o := range outs {
				var got string
				switch {
				case o.Dead != nil:
					got = "dead:" + string(o.Dead.Reason) + ":" + o.Dead.ID
					if !strings.Contains(o.Dead.Error, `"a"`) {
						t.Errorf("output %d: dead letter does not name the id whose verdict is bad: %s", i, o.Dead.Error)
					}
					bs, _ := json.Marshal(o.Dead)
					dl.Validate(t, bs)
				case o.Event != nil:
					got = o.Event.Kind + " " + o.Event.DuplicateOf + " " + o.Event.Cluster
					if o.Event.Kind == KindUnique {
						got = o.Event.Kind + " " + o.Event.ID + " " + o.Event.Cluster
					}
				}
				if got != want[i] {
					t.Errorf("output %d: %q, want %q", i, got, want[i])
				}
			}
		})
	}
}

// decodeRecord takes what this version records (and records of a newer
// one, with fields it does not know) and refuses what no version records.
func TestDecodeStoredVerdict(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		ok   bool
	}{
		{"unique", `{"a":1700000000000}`, true},
		{"duplicate", `{"c":"x","m":[{"id":"x","kind":"exact","method":"exact","scores":{}}],"a":1}`, true},
		{"newer fields", `{"a":1,"zz":[1,2]}`, true},
		{"not json", "\x00\xffgarbage", false},
		{"empty object", `{}`, false},
		{"null", `null`, false},
		{"array", `[1]`, false},
		{"wrong type", `{"a":"yesterday"}`, false},
		{"empty", ``, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := decodeRecord("id", []byte(tt.in))
			if (err == nil) != tt.ok {
				t.Fatalf("decodeRecord(%q) = %+v, %v; want ok %v", tt.in, rec, err, tt.ok)
			}
			if !tt.ok {
				return
			}
			b, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			again, err := decodeRecord("id", b)
			if err != nil || again.At != rec.At || again.Cluster != rec.Cluster || len(again.Matches) != len(rec.Matches) {
				t.Errorf("round trip of %s: %+v, %v", b, again, err)
			}
		})
	}
}

// admittedFirst makes the index answer as Redis Cluster does when two
// near-duplicates are admitted at the same moment: the entry with id
// `early` gets a Seq below every stored document's, so the candidates it
// finds are later documents that did not see it.
type admittedFirst struct {
	index.Store
	early string
}

func (a *admittedFirst) LookupInsert(ctx context.Context, docs []index.Entry) ([]index.Result, error) {
	rs, err := a.Store.LookupInsert(ctx, docs)
	for i := range rs {
		if docs[i].ID == a.early {
			rs[i].Seq = 0
		}
	}
	return rs, err
}

// A correction is recorded (docs/operations.md, "Scaling out"): the later
// document's recorded verdict, unique, is replaced by the correction, so a
// replay of it names the earlier document (issue 24). The ordering is
// forced here on the memory index; TestClusterCorrectionsRecorded shows it
// on a real cluster.
func TestCorrectionIsRecorded(t *testing.T) {
	g := synth.NewGenerator(13, 5000)
	text := g.Text(g.Words(400))
	near := text + " " + g.Text(g.Words(20))
	cfg := testConfig(t, "web")
	probe, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ix := memoryIndex(t, probe)
	later := run(t, cfg, func(*Pipeline) index.Store { return ix }, []Item{{Doc: Document{ID: "later", Text: []byte(near)}}})
	if ev := later[0].Event; ev == nil || ev.Kind != KindUnique {
		t.Fatalf("later, alone: %+v", ev)
	}
	early := run(t, cfg, func(*Pipeline) index.Store { return &admittedFirst{ix, "early"} }, []Item{{Doc: Document{ID: "early", Text: []byte(text)}}})
	o := early[0]
	if o.Event == nil || o.Event.Kind != KindUnique || len(o.Corrections) != 1 {
		t.Fatalf("early: event %+v, %d corrections; want unique with one correction", o.Event, len(o.Corrections))
	}
	if c := o.Corrections[0]; !c.Correction || c.ID != "later" || c.DuplicateOf != "early" || c.Cluster != "early" {
		t.Fatalf("correction: %+v", c)
	}
	replay := run(t, cfg, func(*Pipeline) index.Store { return ix }, []Item{{Doc: Document{ID: "later", Text: []byte(near)}}})
	ev := replay[0].Event
	if ev == nil || !ev.Replay {
		t.Fatalf("later again: %+v, want a replay", ev)
	}
	c := o.Corrections[0]
	if ev.Kind != c.Kind || ev.DuplicateOf != "early" || ev.Cluster != "early" || len(replay[0].Corrections) != 0 {
		t.Errorf("later again: kind %s, duplicate_of %q, cluster %q, %d corrections; want the correction: %s of early, cluster early",
			ev.Kind, ev.DuplicateOf, ev.Cluster, len(replay[0].Corrections), c.Kind)
	}
}
