package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/synth"
)

// backends are the three index backends of the issue 37 tests: memory,
// a Redis node and a three-master Redis Cluster; each call of open gives
// a fresh, empty store for p's parameters.
type truthBackend struct {
	name string
	open func(t *testing.T, p *Pipeline) index.Store
}

// fresh opens a fresh, empty store for cfg and returns it with the
// parameters it was opened with.
func (b truthBackend) fresh(t *testing.T, cfg Config) (index.Store, index.Params) {
	t.Helper()
	probe, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b.open(t, probe), probe.IndexParams()
}

func truthBackends(t *testing.T) []truthBackend {
	node := redistest.StartServer(t)
	cluster := redistest.StartCluster(t)
	n := 0
	redisOpen := func(url string) func(t *testing.T, p *Pipeline) index.Store {
		return func(t *testing.T, p *Pipeline) index.Store {
			n++
			ix, err := index.Open(context.Background(), fmt.Sprintf("%s?namespace=truth%d", url, n), index.Options{Params: p.IndexParams()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ix.Close() })
			return ix
		}
	}
	return []truthBackend{
		{"memory", func(t *testing.T, p *Pipeline) index.Store { return memoryIndex(t, p) }},
		{"node", redisOpen("redis://" + node)},
		{"cluster", redisOpen("redis+cluster://" + strings.Join(cluster, ","))},
	}
}

// heldRecords holds every RecordVerdicts call until a Remove has been
// made: the verdict of a document in flight when its tombstone arrives is
// recorded after the delete, as it is when verification is slower than
// the index stage.
type heldRecords struct {
	index.Store
	once    sync.Once
	removed chan struct{}
}

func (h *heldRecords) RecordVerdicts(ctx context.Context, seqs []uint64, verdicts [][]byte) ([]bool, error) {
	select {
	case <-h.removed:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(10 * time.Second):
		return nil, fmt.Errorf("no Remove within 10 s")
	}
	return h.Store.RecordVerdicts(ctx, seqs, verdicts)
}

func (h *heldRecords) Remove(ctx context.Context, ids []string) ([]bool, error) {
	r, err := h.Store.Remove(ctx, ids)
	h.once.Do(func() { close(h.removed) })
	return r, err
}

// Issue 37, point 2: doc d (a copy of x) is in flight when its tombstone
// removes it, and d is sent again with new text: the new d is unique,
// and a replay of it returns that, not the deleted incarnation's verdict
// (on main the first incarnation's verdict, recorded by id after the
// delete, landed on the new document: the replay said "exact of x").
func TestDeleteResendReplay(t *testing.T) {
	t.Parallel()
	g := synth.NewGenerator(37, 5000)
	xText, newText := g.Text(g.Words(300)), g.Text(g.Words(300))
	cfg := testConfig(t, "web")
	for _, b := range truthBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ix, params := b.fresh(t, cfg)
			held := &heldRecords{Store: ix, removed: make(chan struct{})}
			outs := run(t, cfg, func(*Pipeline) index.Store { return held }, []Item{
				{Doc: Document{ID: "x", Text: []byte(xText)}},
				{Doc: Document{ID: "d", Text: []byte(xText)}},
				{Doc: Document{ID: "d"}, Delete: true},
				{Doc: Document{ID: "d", Text: []byte(newText)}},
			})
			want := []string{"x unique in x", "d exact of x in x", "d deleted in d", "d unique in d"}
			for i, o := range outs {
				if got := summary(o); got != want[i] {
					t.Errorf("output %d: %q, want %q", i, got, want[i])
				}
			}
			// A replay of the new d (a member reading it again after a
			// crash) returns the new d's verdict.
			again := run(t, cfg, func(*Pipeline) index.Store { return ix }, []Item{{Doc: Document{ID: "d", Text: []byte(newText)}}})
			if ev := again[0].Event; ev == nil || !ev.Replay || summary(again[0]) != "d unique in d" {
				t.Errorf("replay of the new d: %+v, want its own verdict (unique), as a replay", ev)
			}
			rec, err := ix.Verdicts(context.Background(), storedSeqs(t, ix, params, "d"))
			if err != nil || len(rec[0]) == 0 {
				t.Fatalf("verdict of the new d: %q, %v", rec, err)
			}
			if r, err := decodeRecord("d", rec[0]); err != nil || len(r.Matches) != 0 {
				t.Errorf("recorded verdict of the new d: %+v, %v; want unique", r, err)
			}
		})
	}
}

// Issue 37, point 3: two members share an index; one handles d's
// tombstone and d's new text, the other then sees an exact copy of the new
// text. Both agree that it joins the new d's cluster (on main the second
// member's cluster cache still held the deleted incarnation's cluster, x,
// and put the copy there).
func TestMembersAgreeAfterDelete(t *testing.T) {
	t.Parallel()
	g := synth.NewGenerator(38, 5000)
	xText := g.Text(g.Words(300))
	dText := xText + " " + g.Text(g.Words(10)) // a near copy of x
	newText := g.Text(g.Words(300))
	cfg := testConfig(t, "web")
	for _, b := range truthBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ix, _ := b.fresh(t, cfg)
			member := func() *Pipeline {
				pl, err := New(cfg, ix)
				if err != nil {
					t.Fatal(err)
				}
				return pl
			}
			a, bm := member(), member()
			step := func(pl *Pipeline, items ...Item) []string {
				var got []string
				for _, o := range runThrough(t, pl, items, make(chan Item), make(chan Output, 16)) {
					got = append(got, summary(o))
				}
				return got
			}
			check := func(what string, got []string, want ...string) {
				t.Helper()
				if strings.Join(got, ", ") != strings.Join(want, ", ") {
					t.Errorf("%s: %q, want %q", what, got, want)
				}
			}
			check("A: x, d", step(a, Item{Doc: Document{ID: "x", Text: []byte(xText)}}, Item{Doc: Document{ID: "d", Text: []byte(dText)}}),
				"x unique in x", "d near of x in x")
			check("B: a copy of d", step(bm, Item{Doc: Document{ID: "e0", Text: []byte(dText)}}), "e0 exact of d in x")
			check("A: delete d, d again", step(a, Item{Doc: Document{ID: "d"}, Delete: true}, Item{Doc: Document{ID: "d", Text: []byte(newText)}}),
				"d deleted in d", "d unique in d")
			check("B: a copy of the new d", step(bm, Item{Doc: Document{ID: "e", Text: []byte(newText)}}), "e exact of d in d")
			check("A: a copy of the new d", step(a, Item{Doc: Document{ID: "f", Text: []byte(newText)}}), "f exact of d in d")
		})
	}
}

// summary is an output as "id kind [of duplicate_of] in cluster", or
// "dead:reason".
func summary(o Output) string {
	switch {
	case o.Dead != nil:
		return "dead:" + string(o.Dead.Reason)
	case o.Event == nil:
		return "none"
	case o.Event.DuplicateOf == "":
		return o.Event.ID + " " + o.Event.Kind + " in " + o.Event.Cluster
	}
	return o.Event.ID + " " + o.Event.Kind + " of " + o.Event.DuplicateOf + " in " + o.Event.Cluster
}

// crashBefore is a fault hook: the RecordVerdicts call that holds the
// verdict of the document stored under id waits until lookups documents
// have been looked up (the member has gone on reading), then fails, as a
// member killed before recording does. Nothing of that call is recorded.
type crashBefore struct {
	index.Store
	p       index.Params
	t       testing.TB
	id      string
	lookups int

	mu      sync.Mutex
	seen    int
	enough  chan struct{}
	crashed bool
}

func (c *crashBefore) LookupInsert(ctx context.Context, docs []index.Entry) ([]index.Result, error) {
	r, err := c.Store.LookupInsert(ctx, docs)
	c.mu.Lock()
	if c.seen += len(docs); err == nil && c.seen >= c.lookups && c.enough != nil {
		close(c.enough)
		c.enough = nil
	}
	c.mu.Unlock()
	return r, err
}

func (c *crashBefore) RecordVerdicts(ctx context.Context, seqs []uint64, verdicts [][]byte) ([]bool, error) {
	target := storedSeqs(c.t, c.Store, c.p, c.id)[0]
	c.mu.Lock()
	wait := c.enough
	c.mu.Unlock()
	for _, s := range seqs {
		if s == target && target != 0 {
			if wait != nil {
				select {
				case <-wait:
				case <-time.After(5 * time.Second):
				}
			}
			c.mu.Lock()
			c.crashed = true
			c.mu.Unlock()
			return nil, fmt.Errorf("killed before recording")
		}
	}
	return c.Store.RecordVerdicts(ctx, seqs, verdicts)
}

// Issue 37, point 4: a member that crashes after looking up a partial
// copy j and the near copies read after it, before recording j's
// verdict, leaves j stored without a verdict. The next member's replay of
// j gives the verdict one uninterrupted run gives, although the near
// copies have since made j's keys common and raised their counts past
// the template threshold (on main the replay looked j up again, saw the
// copied text as a template of many documents and called j unique).
func TestReplayAfterCrashEqualsUninterrupted(t *testing.T) {
	t.Parallel()
	g := synth.NewGenerator(39, 50000)
	orig := g.Words(300)
	near := func() string {
		w := append([]string(nil), orig...)
		for i := range w {
			if i%37 == 5 {
				w[i] = g.Words(1)[0]
			}
		}
		return g.Text(w)
	}
	items := []Item{{Doc: Document{ID: "o", Text: []byte(g.Text(orig))}}}
	for i := range 2 {
		items = append(items, Item{Doc: Document{ID: fmt.Sprint("c", i), Text: []byte(near())}})
	}
	j := len(items)
	items = append(items, Item{Doc: Document{ID: "j", Text: []byte(g.Text(g.Words(60)) + " " + g.Text(orig) + " " + g.Text(g.Words(60)))}})
	for i := 2; i < 12; i++ {
		items = append(items, Item{Doc: Document{ID: fmt.Sprint("c", i), Text: []byte(near())}})
	}
	cfg := testConfig(t, "web")
	cfg.Batch = 1
	at := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	cfg.Now = func() time.Time { return at }
	for _, b := range truthBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			whole := run(t, cfg, func(*Pipeline) index.Store { ix, _ := b.fresh(t, cfg); return ix }, items)
			want := summary(whole[j])
			if !strings.HasPrefix(want, "j partial") && !strings.HasPrefix(want, "j near") {
				t.Fatalf("j in one run: %q, want a duplicate (the test plants one)", want)
			}

			ix, params := b.fresh(t, cfg)
			hook := &crashBefore{Store: ix, p: params, t: t, id: "j", lookups: len(items) - 2, enough: make(chan struct{})}
			pl, err := New(cfg, hook)
			if err != nil {
				t.Fatal(err)
			}
			in, out := make(chan Item, len(items)), make(chan Output, len(items))
			for _, it := range items {
				in <- it
			}
			close(in)
			if err := pl.Run(context.Background(), in, out); err == nil || !hook.crashed {
				t.Fatalf("the first member's run: %v (crashed %v), want it killed before recording j", err, hook.crashed)
			}
			close(out)
			n := 0
			for range out {
				n++
			}
			t.Logf("%d of %d documents looked up before the crash, %d decided", hook.seen, len(items), n)
			// The next member reads again from j (the first uncommitted
			// record): every one of them is stored, none has a verdict.
			again := run(t, cfg, func(*Pipeline) index.Store { return ix }, items[n:])
			got := summary(again[j-n])
			if got != want {
				t.Errorf("j read again after the crash: %q, one uninterrupted run: %q", got, want)
			}
			for i, o := range again {
				if s, w := summary(o), summary(whole[n+i]); s != w {
					t.Errorf("%s after the crash: %q, one uninterrupted run: %q", items[n+i].Doc.ID, s, w)
				}
			}
		})
	}
}

// Issue 38, point 5: with records keyed by site, a document and its
// tombstone (keyed by the id) sit in different partitions; a member that
// crashes after deleting the document, its tombstone committed but not the
// document's record, reads that record again: the document must stay
// deleted (on main it was stored again: 11 of 20 in a SIGKILL run). A
// record of the id from later in the partition is a new document.
func TestDeleteSurvivesReread(t *testing.T) {
	t.Parallel()
	g := synth.NewGenerator(40, 5000)
	text, newText := g.Text(g.Words(300)), g.Text(g.Words(300))
	at := func(p int32, off int64) Source { return Source{Topic: "docs", Partition: &p, Offset: &off} }
	cfg := testConfig(t, "web")
	for _, b := range truthBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ix, params := b.fresh(t, cfg)
			with := func(*Pipeline) index.Store { return ix }
			first := run(t, cfg, with, []Item{
				{Doc: Document{ID: "d", Text: []byte(text)}, Source: at(0, 10)},
				{Doc: Document{ID: "d"}, Delete: true, Source: at(1, 3)},
			})
			if got := summary(first[0]) + ", " + summary(first[1]); got != "d unique in d, d deleted in d" {
				t.Fatalf("first run: %s", got)
			}
			// The member crashed: partition 1 was committed, partition 0
			// was not; the next member reads d's record again, then later
			// records of partition 0.
			again := run(t, cfg, with, []Item{
				{Doc: Document{ID: "d", Text: []byte(text)}, Source: at(0, 10)},
				{Doc: Document{ID: "copy", Text: []byte(text)}, Source: at(0, 11)},
			})
			if ev := again[0].Event; ev == nil || ev.Kind != KindDeleted || !ev.Replay {
				t.Errorf("d's record read again after its delete: %+v, want deleted (replay)", ev)
			}
			if got := summary(again[1]); got != "copy unique in copy" {
				t.Errorf("a copy of the deleted text: %q, want unique (d is not stored again)", got)
			}
			if seqs := storedSeqs(t, ix, params, "d"); seqs[0] != 0 {
				t.Errorf("d is stored again (seq %d)", seqs[0])
			}
			// d sent again later in its partition, or from another one, is
			// a new document.
			later := run(t, cfg, with, []Item{
				{Doc: Document{ID: "d", Text: []byte(newText)}, Source: at(0, 12)},
			})
			if got := summary(later[0]); got != "d unique in d" {
				t.Errorf("d sent again at offset 12: %q, want a new document", got)
			}
		})
	}
}

// Issue 38, point 5: deleting an original leaves its stored exact copies
// findable: a later copy of the text is an exact duplicate of the newest
// copy still stored (on main it was unique: the copies hold no bucket
// entry and the content lane named only the deleted original).
func TestDeleteOriginalKeepsCopiesFindable(t *testing.T) {
	t.Parallel()
	g := synth.NewGenerator(41, 5000)
	text := g.Text(g.Words(300))
	cfg := testConfig(t, "web")
	for _, b := range truthBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			outs := run(t, cfg, func(p *Pipeline) index.Store { return b.open(t, p) }, []Item{
				{Doc: Document{ID: "o", Text: []byte(text)}},
				{Doc: Document{ID: "c1", Text: []byte(text)}},
				{Doc: Document{ID: "c2", Text: []byte(text)}},
				{Doc: Document{ID: "o"}, Delete: true},
				{Doc: Document{ID: "later", Text: []byte(text)}},
				{Doc: Document{ID: "c2"}, Delete: true},
				{Doc: Document{ID: "last", Text: []byte(text)}},
			})
			var got []string
			for _, o := range outs {
				got = append(got, summary(o))
			}
			want := []string{"o unique in o", "c1 exact of o in o", "c2 exact of o in o", "o deleted in o",
				"later exact of c2 in o", "c2 deleted in c2", "last exact of later in o"}
			if strings.Join(got, ", ") != strings.Join(want, ", ") {
				t.Errorf("events:\n%q\nwant\n%q", got, want)
			}
		})
	}
}

// interleaved holds member A's LookupInsert of its batch [a1, a2] between
// its two documents until member B has looked its batch up: the index
// gives a1 < b0 < b1 < a2, as two members interleave their batches.
type interleaved struct {
	index.Store
	a1Done, bDone chan struct{}
	member        string
	a1Once, bOnce *sync.Once
}

// LookupInsert orders the members' documents a1 < b0 < b1 < a2 in the
// index however each member's batcher cuts its two documents into
// batches (under load a member may look up one document at a time): B
// waits for a1, and A looks up a2 only once B has b1.
func (s *interleaved) LookupInsert(ctx context.Context, docs []index.Entry) ([]index.Result, error) {
	has := func(id string) int { return slices.IndexFunc(docs, func(e index.Entry) bool { return e.ID == id }) }
	if s.member == "B" {
		<-s.a1Done
		r, err := s.Store.LookupInsert(ctx, docs)
		if has("b1") >= 0 {
			s.bOnce.Do(func() { close(s.bDone) })
		}
		return r, err
	}
	cut := has("a2")
	if cut < 0 {
		cut = len(docs)
	}
	var out []index.Result
	if cut > 0 {
		first, err := s.Store.LookupInsert(ctx, docs[:cut])
		if has("a1") >= 0 {
			s.a1Once.Do(func() { close(s.a1Done) })
		}
		if err != nil || cut == len(docs) {
			return first, err
		}
		out = first
	}
	<-s.bDone
	rest, err := s.Store.LookupInsert(ctx, docs[cut:])
	return append(out, rest...), err
}

// Two members whose batches interleave in the index, each holding a
// document the other's next one duplicates: A's batch [a1, a2], B's
// [b0, b1], with a1 < b0 < b1 < a2, b0 a near copy of a1 and a2 one of
// b1. b0 waits for a1's verdict and a2 for b1's: before a member waits, it
// records what its batch decided before (before, each batch recorded its
// verdicts only once all were resolved, so the two members waited for
// each other until Config.SettleWait ran out, and a2's cluster was
// unknown).
func TestMembersDoNotWaitForEachOther(t *testing.T) {
	t.Parallel()
	g := synth.NewGenerator(41, 5000)
	x, y := g.Words(300), g.Words(300)
	near := func(w []string) string { return g.Text(w) + " " + g.Text(g.Words(12)) }
	cfg := testConfig(t, "web")
	cfg.Batch = 2
	cfg.SettleWait = 20 * time.Second
	for _, b := range truthBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ix, _ := b.fresh(t, cfg)
			a1Done, bDone := make(chan struct{}), make(chan struct{})
			var a1Once, bOnce sync.Once
			member := func(name string) *Pipeline {
				pl, err := New(cfg, &interleaved{Store: ix, a1Done: a1Done, bDone: bDone, member: name, a1Once: &a1Once, bOnce: &bOnce})
				if err != nil {
					t.Fatal(err)
				}
				return pl
			}
			a, bm := member("A"), member("B")
			doc := func(id, text string) Item { return Item{Doc: Document{ID: id, Text: []byte(text)}} }
			t0 := time.Now()
			var wg sync.WaitGroup
			var got [2][]string
			for i, m := range []struct {
				pl    *Pipeline
				items []Item
			}{{a, []Item{doc("a1", g.Text(x)), doc("a2", near(y))}}, {bm, []Item{doc("b0", near(x)), doc("b1", g.Text(y))}}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Both documents of a member in one batch: the input
					// is buffered before the run starts.
					in := make(chan Item, len(m.items))
					for _, it := range m.items {
						in <- it
					}
					close(in)
					out := make(chan Output, len(m.items))
					if err := m.pl.Run(context.Background(), in, out); err != nil {
						t.Error(err)
					}
					close(out)
					for o := range out {
						got[i] = append(got[i], summary(o))
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(t0)
			want := [2][]string{{"a1 unique in a1", "a2 near of b1 in b1"}, {"b0 near of a1 in a1", "b1 unique in b1"}}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("got %q, want %q", got, want)
			}
			if u := a.Stats().ClusterUnknown + bm.Stats().ClusterUnknown; u != 0 || elapsed > cfg.SettleWait/2 {
				t.Errorf("decided in %v with %d clusters unknown; want well within SettleWait (%v), none unknown", elapsed.Round(time.Millisecond), u, cfg.SettleWait)
			}
		})
	}
}
