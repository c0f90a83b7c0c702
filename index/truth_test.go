package index

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/sketch"
)

// runTruth is the conformance suite's part for records by Seq and lookup
// records (issue 37): what a document's records say never depends on
// which incarnation of its id, or which attempt, wrote them.
func runTruth(t *testing.T, b backend, open func(*testing.T, storeOpts) Store) {
	p := testParams
	ctx := context.Background()

	t.Run("resent-after-delete", func(t *testing.T) {
		// doc d (a copy of x) is in flight when its tombstone removes it;
		// d is sent again with other text. The first incarnation's
		// verdict, recorded late, lands nowhere: the new d is a new
		// document in every record.
		s := open(t, storeOpts{})
		x := entry(p, "x", nil)
		d := entry(p, "d", map[int]uint64{0: x.Bands[0]})
		d.Features = []byte("old text")
		insert(t, s, x)
		old := insert(t, s, d)[0]
		wantCands(t, "d", old, "x/lsh")
		if removed, err := s.Remove(ctx, []string{"d"}); err != nil || !removed[0] {
			t.Fatalf("Remove(d) = %v, %v", removed, err)
		}
		d2 := entry(p, "d", nil)
		d2.Features = []byte("new text")
		nw := insert(t, s, d2)[0]
		if nw.Replay || nw.Seq == old.Seq {
			t.Fatalf("d sent again: %+v, want a new document (seq other than %d)", nw, old.Seq)
		}
		stored, err := s.RecordVerdicts(ctx, []uint64{old.Seq, nw.Seq}, [][]byte{[]byte("exact of x"), []byte("unique")})
		if err != nil || !slices.Equal(stored, []bool{false, true}) {
			t.Fatalf("RecordVerdicts(old, new) = %v, %v; want [false true]", stored, err)
		}
		if st, err := s.RecordSources(ctx, []uint64{old.Seq}, [][]byte{src(1)}); err != nil || st[0] {
			t.Errorf("RecordSources(old) = %v, %v; want not stored", st, err)
		}
		if st, err := s.RecordTemplates(ctx, []uint64{old.Seq}, [][]byte{templateRecords.rec(1, 1)}); err != nil || st[0] {
			t.Errorf("RecordTemplates(old) = %v, %v; want not stored", st, err)
		}
		if rv, err := s.ReviseVerdicts(ctx, []uint64{old.Seq}, [][]byte{nil}, [][]byte{[]byte("x")}); err != nil || rv[0] {
			t.Errorf("ReviseVerdicts(old) = %v, %v; want not revised", rv, err)
		}
		r := insert(t, s, d2)[0]
		if !r.Replay || r.Seq != nw.Seq || string(r.Verdict) != "unique" {
			t.Errorf("replay of the new d: %+v, want its own verdict \"unique\"", r)
		}
		f := featuresOf(t, s, []uint64{old.Seq, nw.Seq})
		if f[0] != nil || string(f[1]) != "new text" {
			t.Errorf("Features(old, new) = %q, want none and the new text", f)
		}
		v, err := s.Verdicts(ctx, []uint64{old.Seq, nw.Seq, 0})
		if err != nil || v[0] != nil || string(v[1]) != "unique" || v[2] != nil {
			t.Errorf("Verdicts(old, new, 0) = %q, %v", v, err)
		}
	})

	t.Run("gone", func(t *testing.T) {
		// A removed document's id keeps its origin: an entry of the id
		// from the same partition at or before that offset is a record
		// read again (Gone: nothing stored), one after it or from another
		// partition a new document; an entry without an origin is new.
		s := open(t, storeOpts{})
		mk := func(part int32, off int64) Entry {
			e := entry(p, "d", nil)
			e.Origin = Origin("docs", part, off)
			return e
		}
		first := insert(t, s, mk(0, 10))[0]
		if first.Gone || first.Replay {
			t.Fatalf("d: %+v", first)
		}
		if r := insert(t, s, mk(0, 10))[0]; !r.Replay || r.Gone {
			t.Errorf("d's record again, stored: %+v, want its replay", r)
		}
		if removed, err := s.Remove(ctx, []string{"d"}); err != nil || !removed[0] {
			t.Fatalf("Remove(d) = %v, %v", removed, err)
		}
		for _, off := range []int64{10, 3} {
			if r := insert(t, s, mk(0, off))[0]; !r.Gone || r.Replay || r.Seq != 0 {
				t.Errorf("d's record at offset %d read after its delete: %+v, want Gone", off, r)
			}
		}
		if seqsOf(t, s, "d")[0] != 1<<48-1 {
			t.Errorf("d stored again by a record read again")
		}
		if r := insert(t, s, mk(1, 2))[0]; r.Gone || r.Replay {
			t.Errorf("d from another partition: %+v, want a new document", r)
		}
		if _, err := s.Remove(ctx, []string{"d"}); err != nil {
			t.Fatal(err)
		}
		if r := insert(t, s, mk(0, 11))[0]; r.Gone || r.Replay {
			t.Errorf("d later in its partition: %+v, want a new document", r)
		}
		if _, err := s.Remove(ctx, []string{"d"}); err != nil {
			t.Fatal(err)
		}
		if r := insert(t, s, entry(p, "d", nil))[0]; r.Gone || r.Replay {
			t.Errorf("d without an origin: %+v, want a new document", r)
		}
		bad := entry(p, "x", nil)
		bad.Origin = "docs, not an origin"
		if _, err := s.LookupInsert(ctx, []Entry{bad}); !errors.Is(err, ErrInvalid) {
			t.Errorf("an origin not made by Origin: %v, want ErrInvalid", err)
		}
	})

	t.Run("recall", func(t *testing.T) {
		// A replay without a verdict gets the lookup its first attempt
		// got, although later documents have since made its keys common
		// and raised their counts; a fresh look-up sees the index as it
		// is now.
		s := open(t, storeOpts{commonDocs: 3})
		hot := key("hot", 7)
		band := key("band", 7)
		mk := func(id string) Entry {
			return withAnchors(entry(p, id, map[int]uint64{0: band}), append(anchors(id, 2), hot)...)
		}
		insert(t, s, mk("d0"))
		first := insert(t, s, mk("d1"))[0]
		wantCands(t, "d1", first, "d0/lsh")
		if first.Common != 0 || len(first.CommonAnchors) != 0 {
			t.Fatalf("d1: %+v, want no common key yet", first)
		}
		for i := 2; i < 7; i++ {
			insert(t, s, mk(fmt.Sprint("d", i)))
		}
		now, err := s.Lookup(ctx, []Entry{mk("probe")})
		if err != nil {
			t.Fatal(err)
		}
		if now[0].Common == 0 || len(now[0].CommonAnchors) != 1 {
			t.Fatalf("probe: %+v, want the band and anchor common by now", now[0])
		}
		same := func(what string, r Result) {
			t.Helper()
			if !r.Replay || !r.Recalled || r.Seq != first.Seq || r.Verdict != nil {
				t.Errorf("%s: %+v, want a recalled replay of seq %d", what, r, first.Seq)
			}
			if r.Common != first.Common || r.Truncated != first.Truncated || r.Dropped != first.Dropped ||
				len(r.CommonAnchors) != len(first.CommonAnchors) || r.Copy != first.Copy || r.IMatch != first.IMatch {
				t.Errorf("%s: %+v, want the first attempt's %+v", what, r, first)
			}
			if !slices.EqualFunc(r.Candidates, first.Candidates, func(a, b Candidate) bool {
				return a.ID == b.ID && a.Seq == b.Seq && a.Via == b.Via && a.Hits == b.Hits
			}) {
				t.Errorf("%s: candidates %+v, want the first attempt's %+v", what, r.Candidates, first.Candidates)
			}
		}
		same("replay of d1", insert(t, s, mk("d1"))[0])
		look, err := s.Lookup(ctx, []Entry{mk("d1")})
		if err != nil {
			t.Fatal(err)
		}
		same("Lookup of d1", look[0])
		// A candidate removed since is left out.
		if _, err := s.Remove(ctx, []string{"d0"}); err != nil {
			t.Fatal(err)
		}
		r := insert(t, s, mk("d1"))[0]
		if !r.Recalled || len(r.Candidates) != 0 {
			t.Errorf("replay of d1 after d0's removal: %+v, want recalled without d0", r)
		}
		// Once a verdict is recorded it answers, and the lookup record
		// is gone.
		if err := recordVerdict(ctx, s, "d1", []byte("v")); err != nil {
			t.Fatal(err)
		}
		if r := insert(t, s, mk("d1"))[0]; r.Recalled || string(r.Verdict) != "v" {
			t.Errorf("replay of d1 after its verdict: %+v", r)
		}
		// The same id twice in one batch: the second is recalled.
		two := insert(t, s, mk("e"), mk("e"))
		if !two[1].Replay || !two[1].Recalled || !slices.Equal(ids(two[1].Candidates), ids(two[0].Candidates)) {
			t.Errorf("e twice in a batch: %+v, want the second recalled with the first's candidates", two)
		}
	})
}

// TestRedisReadOnly: a read-only store (neardup check) writes nothing,
// anywhere, on a single node and on a cluster: it does not create a
// missing namespace (the members stay stopped on the lost index), and
// after a generation turnover it neither supersedes an older layout,
// sweeps, nor writes the clock: rdb_changes_since_last_save and every
// key's value and expiry are unchanged, while it answers as a writer
// would.
func TestRedisReadOnly(t *testing.T) { onNodeAndCluster(t, testReadOnly) }

func testReadOnly(t *testing.T, addrs []string, cluster bool) {
	ctx := context.Background()
	p := testParams
	clk := newFakeClock()
	cfg := RedisConfig{Addrs: addrs, Cluster: cluster, Namespace: "ro", Params: p, CommonDocs: 3,
		Retention: 10 * time.Second, Generation: 5 * time.Second, Clock: clk.Now, MaxClockAhead: -1, Capacity: 4096}
	roCfg := cfg
	roCfg.ReadOnly = true
	masters := redistest.Masters(t, addrs)
	// A missing namespace: not created, whatever is asked.
	if _, err := NewRedis(ctx, roCfg); !errors.Is(err, ErrIndexLost) {
		t.Errorf("NewRedis(read-only) on an empty server = %v, want ErrIndexLost", err)
	}
	if n := redistest.Snapshot(t, masters).DBSize; n != 0 {
		t.Errorf("DBSIZE %d after a read-only open of a missing namespace, want 0", n)
	}

	// A namespace written in three generations, an older layout's clock
	// beside it, then the clock moves into a generation no writer has
	// started.
	w := openRedis(t, cfg)
	x := entry(p, "x", nil)
	for g := range 3 {
		var docs []Entry
		for i := range 4 {
			docs = append(docs, withAnchors(entry(p, fmt.Sprintf("g%d-%d", g, i), map[int]uint64{0: x.Bands[0]}), key("hot", 1), key(fmt.Sprint("a", g, i), 0)))
		}
		res := insert(t, w, docs...)
		var seqs []uint64
		var vs [][]byte
		for i, r := range res[:2] {
			seqs, vs = append(seqs, r.Seq), append(vs, []byte(fmt.Sprint("verdict ", g, i)))
		}
		if _, err := w.RecordVerdicts(ctx, seqs, vs); err != nil {
			t.Fatal(err)
		}
		clk.Advance(5 * time.Second)
	}
	for _, c := range masters {
		// Only the master owning slot {0} takes it; the others refuse.
		_ = c.HSet(ctx, "ro:v5:{0}c", "f", "an older build's fingerprint").Err()
	}
	clk.Advance(5 * time.Second) // a new generation: nobody has written it
	before := redistest.Snapshot(t, masters)

	ro, err := NewRedis(ctx, roCfg)
	if err != nil {
		t.Fatalf("NewRedis(read-only): %v", err)
	}
	defer ro.Close()
	probe := []Entry{
		entry(p, "g2-0", map[int]uint64{0: x.Bands[0]}),                                            // stored, with a verdict
		withAnchors(entry(p, "g2-3", map[int]uint64{0: x.Bands[0]}), key("hot", 1), key("a23", 0)), // stored, none
		withAnchors(entry(p, "new", map[int]uint64{0: x.Bands[0]}), key("hot", 1)),                 // not stored
	}
	got, err := ro.Lookup(ctx, probe)
	if err != nil {
		t.Fatalf("Lookup(read-only): %v", err)
	}
	if !got[0].Replay || string(got[0].Verdict) != "verdict 2 0" {
		t.Errorf("g2-0: %+v, want its stored verdict", got[0])
	}
	if !got[1].Replay || got[1].Verdict != nil || !got[1].Recalled {
		t.Errorf("g2-3: %+v, want its recalled lookup", got[1])
	}
	if got[2].Replay || len(got[2].Candidates) == 0 {
		t.Errorf("new: %+v, want candidates from the older generations", got[2])
	}
	seqs := []uint64{got[0].Seq, got[1].Seq}
	if f, err := ro.Features(ctx, seqs); err != nil || len(f) != 2 {
		t.Errorf("Features(read-only) = %q, %v", f, err)
	}
	if v, err := ro.Verdicts(ctx, seqs); err != nil || string(v[0]) != "verdict 2 0" || v[1] == nil || len(v[1]) != 0 {
		t.Errorf("Verdicts(read-only) = %q, %v", v, err)
	}
	if _, err := ro.Sources(ctx, seqs); err != nil {
		t.Errorf("Sources(read-only): %v", err)
	}
	if _, err := ro.Templates(ctx, seqs); err != nil {
		t.Errorf("Templates(read-only): %v", err)
	}
	if err := ro.Maintain(ctx); err != nil {
		t.Errorf("Maintain(read-only): %v", err)
	}
	for what, err := range map[string]error{
		"LookupInsert": func() error { _, err := ro.LookupInsert(ctx, probe[2:]); return err }(),
		"RecordVerdicts": func() error {
			_, err := ro.RecordVerdicts(ctx, seqs[:1], [][]byte{[]byte("x")})
			return err
		}(),
		"RecordSources": func() error { _, err := ro.RecordSources(ctx, seqs[:1], [][]byte{src(1)}); return err }(),
		"RecordTemplates": func() error {
			_, err := ro.RecordTemplates(ctx, seqs[:1], [][]byte{templateRecords.rec(1, 1)})
			return err
		}(),
		"ReviseVerdicts": func() error {
			_, err := ro.ReviseVerdicts(ctx, seqs[:1], [][]byte{nil}, [][]byte{[]byte("x")})
			return err
		}(),
		"Remove": func() error { _, err := ro.Remove(ctx, []string{"g2-0"}); return err }(),
	} {
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s on a read-only store = %v, want ErrInvalid", what, err)
		}
	}
	after := redistest.Snapshot(t, masters)
	if after.DBSize != before.DBSize || after.Changes != before.Changes {
		t.Errorf("after the read-only calls: DBSIZE %d → %d, rdb_changes_since_last_save %d → %d; want both unchanged",
			before.DBSize, after.DBSize, before.Changes, after.Changes)
	}
	if d := before.Diff(after); len(d) > 0 {
		t.Errorf("the read-only calls changed keys: %v", d)
	}

	// A writer in the same generation answers the same.
	wl, err := w.Lookup(ctx, probe)
	if err != nil {
		t.Fatal(err)
	}
	for i := range probe {
		if !slices.Equal(ids(wl[i].Candidates), ids(got[i].Candidates)) || wl[i].Replay != got[i].Replay ||
			string(wl[i].Verdict) != string(got[i].Verdict) || wl[i].Common != got[i].Common {
			t.Errorf("%s: read-only %+v, writer %+v", probe[i].ID, got[i], wl[i])
		}
	}
}

// In Redis Cluster a LookupInsert takes several round trips (registration,
// content lane, buckets, lookup records); a member killed between two of
// them leaves its documents registered but half inserted, without lookup
// records. Their replays complete the insertion: later documents find
// what one uninterrupted run would have stored (an exact copy of the
// original stops at the content lane; a near copy finds the original and
// not the exact copy). Before, a replay only looked its content lane up,
// so a stop before phase 3 left the original out of the lane for good:
// later exact copies were processed in full and listed every copy before
// them. And a replay does not list as a later document that did not see
// it one that its first attempt's bucket entry was already in when it was
// added (bucket members are in the order they were added): stopped after
// phase 4, the original's replay listed its near copy (a correction of a
// verdict that needed none). A later document added before the entry is
// still listed (pipeline's TestClusterCorrectionsRecorded).
func TestClusterReplayAfterHalfInsert(t *testing.T) {
	addrs := redistest.StartCluster(t)
	p := testParams
	o := entry(p, "o", nil)
	o.Content, o.HasContent = sketch.ContentDigest{7}, true
	copyOf := func(id string) Entry {
		e := entry(p, id, nil)
		copy(e.Bands, o.Bands)
		e.Content, e.HasContent = o.Content, true
		return e
	}
	nearOf := func(id string) Entry { return entry(p, id, map[int]uint64{0: o.Bands[0], 1: o.Bands[1]}) }
	first := []Entry{o, copyOf("e"), nearOf("n")}
	later := []Entry{copyOf("e2"), nearOf("n2")}
	summary := func(rs []Result) []string {
		var out []string
		for _, r := range rs {
			out = append(out, fmt.Sprintf("copy %q cands %v", r.Copy, ids(r.Candidates)))
		}
		return out
	}
	open := func(ns string) *Redis {
		return openRedis(t, RedisConfig{Addrs: addrs, Cluster: true, Namespace: ns, Params: p})
	}
	whole := open("whole")
	want1, want2 := summary(insert(t, whole, first...)), summary(insert(t, whole, later...))
	if want2[0] != `copy "o" cands []` {
		t.Fatalf("uninterrupted: a later exact copy: %s, want a copy of o", want2[0])
	}
	for _, phase := range []int{2, 3, 4} {
		t.Run(fmt.Sprint("stopped after phase ", phase), func(t *testing.T) {
			s := open(fmt.Sprint("half", phase))
			killed := errors.New("killed")
			s.stopAfter = func(ph int) error {
				if ph == phase {
					return killed
				}
				return nil
			}
			if _, err := s.LookupInsert(context.Background(), first); !errors.Is(err, killed) {
				t.Fatalf("first attempt: %v, want killed after phase %d", err, phase)
			}
			s.stopAfter = nil
			again := insert(t, s, first...)
			for i, r := range again {
				if !r.Replay {
					t.Errorf("%s read again: not a replay", first[i].ID)
				}
			}
			if got := summary(again); !slices.Equal(got, want1) {
				t.Errorf("replays: %q, uninterrupted %q", got, want1)
			}
			if got := summary(insert(t, s, later...)); !slices.Equal(got, want2) {
				t.Errorf("later documents: %q, uninterrupted %q", got, want2)
			}
		})
	}
}
