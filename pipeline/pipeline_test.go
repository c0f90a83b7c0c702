package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/schematest"
	"github.com/neardup/neardup/internal/synth"
	"github.com/neardup/neardup/stream"
	"github.com/neardup/neardup/verify"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// redisIndex opens a fresh namespace on a real redis-server started for
// the test.
func redisIndex(t testing.TB, addr string) func(*Pipeline) index.Store {
	return func(p *Pipeline) index.Store {
		ix, err := index.Open(context.Background(), "redis://"+addr, index.Options{
			Params: p.IndexParams(), Namespace: fmt.Sprintf("t%d", time.Now().UnixNano()),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
}

// comparable strips what legitimately differs between runs: the time and
// the index backend.
func comparable(o Output) string {
	if o.Dead != nil {
		return "dead:" + string(o.Dead.Reason) + ":" + o.Dead.ID
	}
	if o.Event == nil {
		return "none"
	}
	ev := *o.Event
	ev.At = time.Time{}
	ev.Params.Index = ""
	b, _ := json.Marshal(ev)
	return string(b)
}

// TestPlantedDuplicates streams generated documents with planted exact,
// near and partial duplicates through the pipeline, once over the memory
// index and once over Redis, and checks that every planted duplicate is
// reported with its source as duplicate_of and with its planted kind, that
// no other duplicate is reported, and that both indexes give the same
// events.
func TestPlantedDuplicates(t *testing.T) {
	docs, books := 10000, 4000
	if testing.Short() {
		docs, books = 1200, 600
	}
	schema := schematest.Load(t, "event.schema.json")
	addr := redistest.StartServer(t)
	for _, tc := range []struct {
		profile string
		corpus  synth.Config
	}{
		// Web: partial duplicates are passages of an original (3–20% of
		// the new text's length, 45 to 500 words) inside an unrelated text
		// of the original's length: resemblance near 0, found only by the
		// passage lane, and partial (not near) by passage alignment.
		{"web", synth.Config{Docs: docs, Seed: 42, MinWords: 1500, MaxWords: 2500, Embed: [2]float64{0.03, 0.2}}},
		// Books: a fifth of the text replaced plus 1% character noise
		// (the DUPNIQ paper's synthetic partial duplicates), in texts of
		// 1,500–3,000 words: shorter ones are pages, not books, and their
		// near and partial duplicates overlap in resemblance.
		{"books", synth.Config{Docs: books, Seed: 43, PartialReplace: 0.2, PartialNoise: 0.01, MinWords: 1500, MaxWords: 3000}},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			corpus := synth.Corpus(tc.corpus)
			cfg := testConfig(t, tc.profile)
			items := synthItems(corpus)
			mem := run(t, cfg, func(p *Pipeline) index.Store { return memoryIndex(t, p) }, items)
			s := score(corpus, mem)
			t.Logf("%s (%d×%d bands): planted %v, found %v, reported with another kind %v, false positives %d; recall %.4f precision %.4f",
				tc.profile, cfg.Bands, cfg.Rows, s.planted, s.found, s.wrongKind, s.falsePos, s.recall(), s.precision())
			if len(s.missed) > 0 {
				t.Errorf("%d planted duplicates missed, e.g. %v", len(s.missed), s.missed[:min(5, len(s.missed))])
			}
			if s.falsePos > 0 {
				t.Errorf("%d duplicate events for unplanted pairs", s.falsePos)
			}
			for _, k := range []synth.Kind{synth.Exact, synth.Near, synth.Partial} {
				if s.planted[k] < tc.corpus.Docs/20 {
					t.Errorf("only %d planted %s duplicates", s.planted[k], k)
				}
				if n := s.wrongKind[k]; n > 0 {
					t.Errorf("%d of %d planted %s duplicates reported with another kind, e.g. %v", n, s.found[k], k, s.wrongExamples[k])
				}
			}
			for i, o := range mem[:200] {
				b, _ := json.Marshal(o.Event)
				schema.Validate(t, b)
				if o.Event.Kind == KindUnique && o.Event.Cluster != corpus[i].ID {
					t.Errorf("unique %s has cluster %s", corpus[i].ID, o.Event.Cluster)
				}
			}

			red := run(t, cfg, redisIndex(t, addr), items)
			diff := 0
			for i := range mem {
				if a, b := comparable(mem[i]), comparable(red[i]); a != b {
					if diff++; diff <= 3 {
						t.Errorf("document %d: memory and Redis disagree:\n memory %s\n redis  %s", i, a, b)
					}
				}
			}
			if diff > 0 {
				t.Errorf("%d of %d events differ between the memory and Redis indexes", diff, len(mem))
			}
		})
	}
}

// A replayed id returns its first verdict and stores nothing new.
func TestReplay(t *testing.T) {
	corpus := synth.Corpus(synth.Config{Docs: 300, Seed: 5})
	cfg := testConfig(t, "web")
	probe, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ix := memoryIndex(t, probe)
	same := func(*Pipeline) index.Store { return ix }
	first := run(t, cfg, same, synthItems(corpus))
	// Replay everything, with the texts changed: the first verdicts must
	// come back, not new ones.
	items := synthItems(corpus)
	for i := range items {
		items[i].Doc.Text = []byte("changed text " + corpus[(i+7)%len(corpus)].Text)
	}
	second := run(t, cfg, same, items)
	abridged := 0
	for i := range first {
		if !second[i].Event.Replay {
			t.Fatalf("document %d not marked as a replay", i)
		}
		ev := *second[i].Event
		ev.Replay = false
		// The index keeps the first three matches without passages, and
		// says so when the first event had more.
		want := *first[i].Event
		want.Matches = nil
		for k, m := range first[i].Event.Matches {
			if k == 3 || len(m.Passages) > 0 {
				want.Abridged = true
			}
			if k < 3 {
				m.Passages = nil
				want.Matches = append(want.Matches, m)
			}
		}
		if want.Abridged {
			abridged++
		}
		if a, b := comparable(Output{Event: &want}), comparable(Output{Event: &ev}); a != b {
			t.Fatalf("replay %d changed the verdict:\n first  %s\n replay %s", i, a, b)
		}
	}
	if abridged == 0 || abridged == len(first) {
		t.Errorf("%d of %d replays abridged: want some, not all (the corpus has unique documents and partial copies)", abridged, len(first))
	}
}

// Rejected inputs come out as dead letters in order, with a reason, and
// the run continues.
func TestDeadLetters(t *testing.T) {
	cfg := testConfig(t, "web")
	d := NewDecoder(cfg.Sketch.MaxBytes)
	mk := func(line string) Item {
		doc, err := d.DecodeJSON([]byte(line), "")
		return Item{Doc: doc, Err: err, Raw: stream.Raw([]byte(line))}
	}
	items := []Item{
		mk(`{"id":"ok-1","text":"the first document has enough words to be sketched and indexed"}`),
		mk(`{"id":"bad json"`),
		mk(`{"text":"no id"}`),
		mk(`{"id":"both","text":"a","html":"<p>a</p>"}`),
		mk(`{"id":"neither"}`),
		mk(`{"id":"empty","text":"  ... !!! "}`),
		mk(`{"id":"binary","text":"\u0000\u0001\u0002abc"}`),
		{Doc: Document{ID: "invalid-utf8", Text: []byte("caf\xe9 au lait \xff\xfe with words")}},
		{Doc: Document{ID: "big", Text: []byte(strings.Repeat("word ", cfg.Sketch.MaxBytes/5+1))}},
		mk(`{"id":"html","html":"<html><body><p>some visible words in a paragraph</p><script>var x</script></body></html>"}`),
		mk(`{"id":"ok-2","text":"the first document has enough words to be sketched and indexed"}`),
	}
	want := []string{"", "malformed_json", "missing_id", "both_text_and_html", "no_content", "empty_text", "binary", "", "too_large", "", ""}
	outs := run(t, cfg, func(p *Pipeline) index.Store { return memoryIndex(t, p) }, items)
	dl := schematest.Load(t, "dead-letter.schema.json")
	for i, o := range outs {
		got := ""
		if o.Dead != nil {
			got = string(o.Dead.Reason)
			b, _ := json.Marshal(o.Dead)
			dl.Validate(t, b)
			if o.Dead.Input == "" && o.Dead.InputBase64 == nil {
				t.Errorf("item %d: dead letter lost its input", i)
			}
		}
		if got != want[i] {
			t.Errorf("item %d: dead-letter reason %q, want %q", i, got, want[i])
		}
	}
	if ev := outs[10].Event; ev == nil || ev.Kind != KindExact || ev.DuplicateOf != "ok-1" {
		t.Errorf("run did not continue past the bad inputs: %+v", outs[10].Event)
	}
	if big := outs[8].Dead; big == nil || !big.Truncated || len(big.Input) != MaxRawBytes {
		t.Errorf("oversized document's dead letter is not bounded: %+v", big)
	}
}

// Cancelling the context stops Run promptly with every goroutine gone
// (goleak checks at the end of the package's tests).
func TestCancel(t *testing.T) {
	cfg := testConfig(t, "web")
	probe, _ := New(cfg, nil)
	pl, err := New(cfg, memoryIndex(t, probe))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	in := make(chan Item)
	out := make(chan Output) // never read: the pipeline backs up
	done := make(chan error, 1)
	go func() { done <- pl.Run(ctx, in, out) }()
	corpus := synth.Corpus(synth.Config{Docs: 2000, Seed: 9})
	sent := 0
feed:
	for _, it := range synthItems(corpus) {
		select {
		case in <- it:
			sent++
		case <-time.After(200 * time.Millisecond):
			break feed // backpressure reached the input
		}
	}
	if sent == len(corpus) {
		t.Fatal("no backpressure: every item was accepted with no reader")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

// With Redis killed mid-run, Run fails with index.ErrUnavailable and
// reports nothing for the documents it could not decide; after a restart
// of a server without persistence the store reports the index lost, and
// once that is accepted the same input is processed to the end.
func TestIndexDown(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	corpus := synth.Corpus(synth.Config{Docs: 400, Seed: 11})
	cfg := testConfig(t, "web")
	cfg.Retry = 300 * time.Millisecond
	cfg.Batch = 8
	probe, _ := New(cfg, nil)
	ix, err := index.Open(context.Background(), "redis://"+srv.Addr, index.Options{Params: probe.IndexParams(), Namespace: "down", Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	pl, err := New(cfg, ix)
	if err != nil {
		t.Fatal(err)
	}
	in := make(chan Item)
	out := make(chan Output, 1000)
	done := make(chan error, 1)
	go func() { done <- pl.Run(context.Background(), in, out); close(out) }()
	items := synthItems(corpus)
	stop := make(chan struct{})
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		defer close(in)
		for i, it := range items {
			if i == 100 {
				srv.Kill()
			}
			select {
			case in <- it:
			case <-stop: // Run gave up
				return
			}
		}
	}()
	var got []Output
	for o := range out {
		got = append(got, o)
	}
	err = <-done
	close(stop)
	<-fed
	if !errors.Is(err, index.ErrUnavailable) {
		t.Fatalf("Run returned %v, want index.ErrUnavailable", err)
	}
	if len(got) >= len(items) {
		t.Fatalf("all %d documents were reported although Redis was down", len(got))
	}
	for i, o := range got {
		if o.Tag != i {
			t.Fatalf("output %d carries tag %v: order broken", i, o.Tag)
		}
	}
	t.Logf("%d of %d documents decided before Redis went down; Run failed with: %v", len(got), len(items), err)

	srv.Restart()
	// The server came back without its data: the store says so (and
	// decides nothing) until the loss is accepted.
	if _, err := ix.Verdicts(context.Background(), []uint64{1}); !errors.Is(err, index.ErrIndexLost) {
		t.Fatalf("after a restart without persistence: %v, want index.ErrIndexLost", err)
	}
	ix.(interface{ AcceptEmpty() }).AcceptEmpty()
	cfg.Retry = 10 * time.Second
	outs := run(t, cfg, func(*Pipeline) index.Store { return ix }, items)
	for i, o := range outs {
		if o.Event == nil {
			t.Fatalf("document %d: no event after restart", i)
		}
	}
	mem := run(t, cfg, func(p *Pipeline) index.Store { return memoryIndex(t, p) }, items)
	for i := range mem {
		if a, b := comparable(mem[i]), comparable(outs[i]); a != b {
			t.Fatalf("document %d after restart differs from an uninterrupted run:\n %s\n %s", i, b, a)
		}
	}
}

// A second instance (its own, empty cluster cache) sharing the index gives
// a duplicate of a duplicate the first-seen cluster, read from the verdict
// the first instance recorded.
func TestClusterAcrossInstances(t *testing.T) {
	g := synth.NewGenerator(3, 5000)
	a := g.Text(g.Words(400))
	b := a + " " + g.Text(g.Words(20)) // near duplicate of a
	cfg := testConfig(t, "web")
	probe, _ := New(cfg, nil)
	ix := memoryIndex(t, probe)
	shared := func(*Pipeline) index.Store { return ix }
	first := run(t, cfg, shared, []Item{{Doc: Document{ID: "a", Text: []byte(a)}}, {Doc: Document{ID: "b", Text: []byte(b)}}})
	if ev := first[1].Event; ev.DuplicateOf != "a" || ev.Cluster != "a" {
		t.Fatalf("b: %+v", ev)
	}
	second := run(t, cfg, shared, []Item{{Doc: Document{ID: "c", Text: []byte(b)}}})
	if ev := second[0].Event; ev.Kind != KindExact || ev.DuplicateOf != "b" || ev.Cluster != "a" {
		t.Errorf("c on a fresh instance: kind %s, duplicate_of %q, cluster %q; want exact of b in cluster a", ev.Kind, ev.DuplicateOf, ev.Cluster)
	}
}

// TestSkipSimHash: the pipeline's sketchers skip the SimHash only when
// nothing reads it: not the SimHash lane (sketch.simhash_k ≥ 0), not a
// check of the profile.
func TestSkipSimHash(t *testing.T) {
	withCheck := testConfig(t, "web")
	withCheck.Verify.Checks = append(withCheck.Verify.Checks, verify.Check{Method: verify.MethodSimHash, Threshold: 3})
	for _, tt := range []struct {
		name string
		cfg  Config
		skip bool
	}{
		{"web, lane off", testConfig(t, "web"), true},
		{"books, lane off", testConfig(t, "books"), true},
		{"web, lane on", testConfig(t, "web", "sketch.simhash_k", "3"), false},
		{"a SimHash check", withCheck, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := New(tt.cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := pl.cfg.Sketch.SkipSimHash; got != tt.skip {
				t.Errorf("SkipSimHash %v, want %v", got, tt.skip)
			}
		})
	}
}
