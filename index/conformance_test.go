package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup/sketch"
)

// testParams are small parameters for the conformance suite.
var testParams = Params{Hash: "fnv1a64+splitmix64/v1", K: 12, Bands: 4, Rows: 3, Shingle: 5, Seed: 1, SimHashK: 3}

// storeOpts are the settings the suite varies; each backend maps them onto
// its own config.
type storeOpts struct {
	params        Params
	commonDocs    int
	maxCandidates int
	retention     time.Duration
	generation    time.Duration
	refresh       bool
	clock         func() time.Time
}

// backend opens a fresh, empty store for one subtest.
type backend struct {
	name string
	open func(t *testing.T, o storeOpts) Store
	// cluster: results follow the cluster ordering rule (a candidate may
	// have a higher Seq; seqs have gaps; dead exact hits are not repaired).
	cluster bool
}

func features(t testing.TB, s Store, ids []string) [][]byte {
	t.Helper()
	return featuresOf(t, s, seqsOf(t, s, ids...))
}

func featuresOf(t testing.TB, s Store, seqs []uint64) [][]byte {
	t.Helper()
	f, err := s.Features(context.Background(), seqs)
	if err != nil {
		t.Fatalf("Features: %v", err)
	}
	return f
}

// key returns a distinct pseudo-random band key for (id, i).
func key(id string, i int) uint64 {
	return sketch.Mix64(uint64(fnv32(id))<<20 ^ uint64(i+1)*0x9e3779b97f4a7c15)
}

// entry returns an entry whose bands are its own, except band i is
// shared[i] where shared[i] != 0.
func entry(p Params, id string, shared map[int]uint64) Entry {
	e := Entry{ID: id, Bands: make([]uint64, p.Bands)}
	for i := range e.Bands {
		if k, ok := shared[i]; ok {
			e.Bands[i] = k
		} else {
			e.Bands[i] = key(id, i)
		}
	}
	return e
}

// anchors returns n distinct pseudo-random anchors of id.
func anchors(id string, n int) []uint64 {
	a := make([]uint64, n)
	for i := range a {
		a[i] = key(id+"/anchor", i)
	}
	return a
}

// withAnchors returns e with anchors a.
func withAnchors(e Entry, a ...uint64) Entry {
	e.Anchors = a
	return e
}

// hits returns the candidates' hits, in order.
func hits(c []Candidate) []int {
	out := []int{}
	for _, x := range c {
		out = append(out, x.Hits)
	}
	return out
}

func wantHits(t *testing.T, what string, r Result, want ...int) {
	t.Helper()
	if got := hits(r.Candidates); !slices.Equal(got, want) {
		t.Errorf("%s: hits %v, want %v", what, got, want)
	}
}

func ids(c []Candidate) []string {
	out := []string{}
	for _, x := range c {
		out = append(out, x.ID+"/"+x.Via)
	}
	return out
}

// insert runs LookupInsert and checks the features returned with the
// candidates against Features (one more call when there are candidates).
func insert(t *testing.T, s Store, docs ...Entry) []Result {
	t.Helper()
	res, err := s.LookupInsert(context.Background(), docs)
	if err != nil {
		t.Fatalf("LookupInsert: %v", err)
	}
	if len(res) != len(docs) {
		t.Fatalf("LookupInsert: %d results for %d docs", len(res), len(docs))
	}
	checkLookupFeatures(t, s, res, false)
	return res
}

// checkLookupFeatures checks that the features returned with res's
// candidates and I-Match hits are what Features returns for their ids;
// with filled, that each of them came with its features (nil is allowed
// otherwise: the caller fetches them).
func checkLookupFeatures(t *testing.T, s Store, res []Result, filled bool) {
	t.Helper()
	type got struct {
		what string
		f    []byte
	}
	var q []uint64
	var gots, verdicts []got
	for i, r := range res {
		for _, c := range r.Candidates {
			q = append(q, c.Seq)
			gots = append(gots, got{fmt.Sprintf("result %d: candidate %s", i, c.ID), c.Features})
			verdicts = append(verdicts, got{fmt.Sprintf("result %d: candidate %s", i, c.ID), c.Verdict})
		}
		if r.IMatch != "" {
			q = append(q, r.IMatchSeq)
			gots = append(gots, got{fmt.Sprintf("result %d: I-Match %s", i, r.IMatch), r.IMatchFeatures})
			verdicts = append(verdicts, got{fmt.Sprintf("result %d: I-Match %s", i, r.IMatch), r.IMatchVerdict})
		} else if r.IMatchFeatures != nil || r.IMatchVerdict != nil {
			t.Errorf("result %d: I-Match features %q, verdict %q without an I-Match document", i, r.IMatchFeatures, r.IMatchVerdict)
		}
	}
	if len(q) == 0 {
		return
	}
	want := featuresOf(t, s, q)
	wantV, err := s.Verdicts(context.Background(), q)
	if err != nil {
		t.Fatalf("Verdicts: %v", err)
	}
	for i, g := range gots {
		switch {
		case g.f == nil && filled:
			t.Errorf("%s: no features, want %q", g.what, want[i])
		case g.f != nil && (want[i] == nil || !bytes.Equal(g.f, want[i])):
			t.Errorf("%s: features %q, Features returns %q", g.what, g.f, want[i])
		}
		// A verdict read with the features is what Verdicts returns (the
		// features were read, so the document was stored then).
		if v := verdicts[i]; v.f != nil && (wantV[i] == nil || !bytes.Equal(v.f, wantV[i])) {
			t.Errorf("%s: verdict %q, Verdicts returns %q", v.what, v.f, wantV[i])
		} else if v.f == nil && g.f != nil {
			t.Errorf("%s: features read without the verdict", v.what)
		}
	}
}

func wantCands(t *testing.T, what string, r Result, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := ids(r.Candidates); !slices.Equal(got, want) {
		t.Errorf("%s: candidates %v, want %v", what, got, want)
	}
}

// runConformance is the suite every Store implementation passes.
func runConformance(t *testing.T, b backend) {
	p := testParams
	open := func(t *testing.T, o storeOpts) Store {
		if o.params.Hash == "" {
			o.params = p
		}
		s := b.open(t, o)
		t.Cleanup(func() { s.Close() })
		return s
	}
	ctx := context.Background()

	t.Run("lookup-insert", func(t *testing.T) {
		s := open(t, storeOpts{})
		a := entry(p, "a", nil)
		bb := entry(p, "b", map[int]uint64{0: a.Bands[0]})
		c := entry(p, "c", map[int]uint64{2: a.Bands[2], 3: bb.Bands[3]})
		ra := insert(t, s, a)[0]
		rb := insert(t, s, bb)[0]
		rc := insert(t, s, c)[0]
		wantCands(t, "a", ra)
		wantCands(t, "b", rb, "a/lsh")
		// One hit each: the most recent first.
		wantCands(t, "c", rc, "b/lsh", "a/lsh")
		if !(ra.Seq > 0 && ra.Seq < rb.Seq && rb.Seq < rc.Seq) {
			t.Errorf("seqs %d %d %d not increasing", ra.Seq, rb.Seq, rc.Seq)
		}
		if rc.Candidates[0].Seq != rb.Seq || rc.Candidates[1].Seq != ra.Seq || rc.Candidates[0].Hits != 1 {
			t.Errorf("candidate seqs %+v, want %d %d with one hit", rc.Candidates, rb.Seq, ra.Seq)
		}
		if ra.Replay || rb.Replay || ra.IMatch != "" || ra.Truncated != 0 {
			t.Errorf("unexpected result %+v", ra)
		}
	})

	t.Run("batch-order", func(t *testing.T) {
		s := open(t, storeOpts{})
		a := entry(p, "a", nil)
		bb := entry(p, "b", map[int]uint64{1: a.Bands[1]})
		c := entry(p, "c", map[int]uint64{1: a.Bands[1]})
		r := insert(t, s, a, bb, c)
		wantCands(t, "a", r[0])
		wantCands(t, "b", r[1], "a/lsh")
		wantCands(t, "c", r[2], "b/lsh", "a/lsh")
	})

	t.Run("rank-and-cap", func(t *testing.T) {
		// More documents share a band than the default common_docs lets a
		// key take: the guard is set above them (common keys: "common-key").
		s := open(t, storeOpts{maxCandidates: 3, commonDocs: 64})
		a := entry(p, "a", nil)
		docs := []Entry{a}
		// b1…b5 share 1, 3, 2, 1 and 3 of a's bands.
		for i, k := range []int{1, 3, 2, 1, 3} {
			shared := map[int]uint64{}
			for j := range k {
				shared[j] = a.Bands[j]
			}
			docs = append(docs, entry(p, fmt.Sprint("b", i+1), shared))
		}
		insert(t, s, docs[1:]...)
		var before Stats
		st, hasStats := s.(interface{ Stats() Stats })
		if hasStats {
			before = st.Stats()
		}
		r := insert(t, s, a)[0]
		wantCands(t, "a", r, "b5/lsh", "b2/lsh", "b3/lsh")
		if r.Dropped != 2 || r.Candidates[0].Hits != 3 || r.Candidates[2].Hits != 2 {
			t.Errorf("dropped %d, candidates %+v; want 2 dropped and hits 3, 3, 2", r.Dropped, r.Candidates)
		}
		if hasStats && st.Stats().Dropped-before.Dropped != 2 {
			t.Errorf("stats %+v (before %+v), want 2 more dropped", st.Stats(), before)
		}
		// A deleted member does not take a place: the next one moves up.
		if err := s.Delete(ctx, "b5"); err != nil {
			t.Fatal(err)
		}
		r = insert(t, s, entry(p, "a2", map[int]uint64{0: a.Bands[0], 1: a.Bands[1], 2: a.Bands[2]}))[0]
		wantCands(t, "a2", r, "a/lsh", "b2/lsh", "b3/lsh")
		if r.Dropped != 2 {
			t.Errorf("a2: dropped %d, want 2", r.Dropped)
		}
	})

	t.Run("copies", func(t *testing.T) {
		s := open(t, storeOpts{})
		c := sketch.ContentDigest{7, 7, 7}
		mk := func(id string, shared map[int]uint64) Entry {
			e := entry(p, id, shared)
			e.Content, e.HasContent = c, true
			e.IMatch, e.HasIMatch = sketch.Digest{3}, true
			e.Features = []byte("features of " + id)
			return e
		}
		a := mk("a", nil)
		ra := insert(t, s, a)[0]
		if ra.Copy != "" {
			t.Errorf("a: copy %q", ra.Copy)
		}
		// Copies are found through the digest: no bucket is read or
		// written, not even the ones they share with a.
		r := insert(t, s, mk("b", map[int]uint64{0: a.Bands[0]}), mk("c", nil))
		for i, id := range []string{"b", "c"} {
			if r[i].Copy != "a" || r[i].CopySeq != ra.Seq || len(r[i].Candidates) != 0 || r[i].IMatch != "" {
				t.Errorf("%s: %+v, want a copy of a and nothing else", id, r[i])
			}
		}
		// No lookup returns a copy, so it keeps no features (its keys
		// record holds its content digest alone): on a single node and in
		// memory. In cluster mode its records are written before the
		// content lane is read.
		for i, f := range features(t, s, []string{"a", "b", "c"}) {
			want := ""
			if i == 0 || b.cluster {
				want = "features of " + []string{"a", "b", "c"}[i]
			}
			if string(f) != want {
				t.Errorf("features of document %d: %q, want %q", i, f, want)
			}
		}
		other := entry(p, "d", map[int]uint64{0: a.Bands[0]})
		wantCands(t, "d", insert(t, s, other)[0], "a/lsh") // b is in no bucket
		// A copy deletes by its id alone; the representative stays.
		if got, err := s.Remove(ctx, []string{"c"}); err != nil || !got[0] {
			t.Fatalf("remove c: %v %v", got, err)
		}
		if r := insert(t, s, mk("c2", nil))[0]; r.Copy != "a" {
			t.Errorf("c2 after c was deleted: copy %q, want a", r.Copy)
		}
		// A replay without a verdict is looked up again: still a copy.
		if r := insert(t, s, mk("b", nil))[0]; !r.Replay || r.Copy != "a" {
			t.Errorf("replay of b: %+v", r)
		}
		if st, ok := s.(interface{ Stats() Stats }); ok && st.Stats().Copies != 4 {
			t.Errorf("stats %+v, want 4 copies", st.Stats())
		}
		// The representative gone, its newest stored copy takes its place
		// (issue 38: a later copy of a text still stored is found), then
		// the next, and with none left the next document with that content
		// takes its place and is looked up in full.
		if err := s.Delete(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if r := insert(t, s, mk("e", map[int]uint64{0: a.Bands[0]}))[0]; r.Copy != "c2" {
			t.Errorf("e after a was deleted: copy %q, want c2 (the newest copy stored)", r.Copy)
		}
		for _, step := range []struct{ del, want string }{{"c2", "e"}, {"e", "fc2"}} {
			if err := s.Delete(ctx, step.del); err != nil {
				t.Fatal(err)
			}
			if r := insert(t, s, mk("f"+step.del, nil))[0]; r.Copy != step.want {
				t.Errorf("after %s was deleted: copy %q, want %s", step.del, r.Copy, step.want)
			}
		}
		if err := s.Delete(ctx, "b", "fc2", "fe"); err != nil {
			t.Fatal(err)
		}
		rg := insert(t, s, mk("g", map[int]uint64{0: a.Bands[0]}))[0]
		if rg.Copy != "" {
			t.Errorf("g with every copy deleted: copy %q", rg.Copy)
		}
		wantCands(t, "g", rg, "d/lsh")
		if r := insert(t, s, mk("h", nil))[0]; r.Copy != "g" {
			t.Errorf("h: copy %q, want g", r.Copy)
		}
	})

	t.Run("simhash", func(t *testing.T) {
		s := open(t, storeOpts{})
		const fp = 0x0123456789abcdef
		a := entry(p, "a", nil)
		a.SimHash, a.HasSimHash = fp, true
		near := entry(p, "near", nil)
		near.SimHash, near.HasSimHash = fp^0b1011, true // distance 3
		far := entry(p, "far", nil)
		far.SimHash, far.HasSimHash = fp^0xf, true // distance 4, three blocks equal
		both := entry(p, "both", map[int]uint64{0: a.Bands[0]})
		both.SimHash, both.HasSimHash = fp, true
		off := entry(p, "off", nil) // no SimHash: not looked up
		insert(t, s, a)
		wantCands(t, "near", insert(t, s, near)[0], "a/simhash")
		// far is 4 bits from a (not a candidate) but 1 bit from near.
		wantCands(t, "far", insert(t, s, far)[0], "near/simhash")
		wantCands(t, "both", insert(t, s, both)[0], "a/lsh", "near/simhash")
		wantCands(t, "off", insert(t, s, off)[0])
	})

	t.Run("exact", func(t *testing.T) {
		s := open(t, storeOpts{})
		d := sketch.Digest{1, 2, 3, 4, 5}
		mk := func(id string) Entry {
			e := entry(p, id, nil)
			e.IMatch, e.HasIMatch = d, true
			return e
		}
		ra := insert(t, s, mk("a"))[0]
		rb := insert(t, s, mk("b"))[0]
		rc := insert(t, s, mk("c"))[0]
		if ra.IMatch != "" || rb.IMatch != "a" || rc.IMatch != "a" || rc.IMatchSeq != ra.Seq {
			t.Errorf("exact: a %q b %q c %q (%d, want %d)", ra.IMatch, rb.IMatch, rc.IMatch, rc.IMatchSeq, ra.Seq)
		}
		other := entry(p, "other", nil)
		other.IMatch, other.HasIMatch = sketch.Digest{9}, true
		if r := insert(t, s, other)[0]; r.IMatch != "" {
			t.Errorf("other digest: exact %q", r.IMatch)
		}
		if err := s.Delete(ctx, "a", "b", "c"); err != nil {
			t.Fatal(err)
		}
		if r := insert(t, s, mk("d"))[0]; r.IMatch != "" {
			t.Errorf("after deleting the first document: exact %q, want none", r.IMatch)
		}
		if b.cluster {
			return // a dead first document is not replaced in cluster mode
		}
		if r := insert(t, s, mk("e"))[0]; r.IMatch != "d" {
			t.Errorf("exact %q, want d (the first live document)", r.IMatch)
		}
	})

	t.Run("replay", func(t *testing.T) {
		s := open(t, storeOpts{})
		a := entry(p, "a", nil)
		ra := insert(t, s, a)[0]
		bb := entry(p, "b", map[int]uint64{0: a.Bands[0]})
		rb := insert(t, s, bb)[0]
		r := insert(t, s, a)[0]
		if !r.Replay || r.Seq != ra.Seq || r.Verdict != nil {
			t.Fatalf("replay: %+v, want Replay with seq %d and no verdict", r, ra.Seq)
		}
		if !b.cluster {
			wantCands(t, "replay of a", r) // b came later
		}
		if v, err := s.Verdicts(ctx, seqsOf(t, s, "a", "nope")); err != nil || v[0] == nil || len(v[0]) != 0 || v[1] != nil {
			t.Errorf("Verdicts before recording = %q, %v, want empty (stored, none yet) and nil (not stored)", v, err)
		}
		if err := recordVerdict(ctx, s, "a", []byte("v1")); err != nil {
			t.Fatal(err)
		}
		if err := recordVerdict(ctx, s, "a", []byte("v2")); err != nil {
			t.Fatal(err)
		}
		if v, err := s.Verdicts(ctx, seqsOf(t, s, "nope", "a", "b")); err != nil || v[0] != nil || string(v[1]) != "v1" || v[2] == nil || len(v[2]) != 0 {
			t.Errorf("Verdicts = %q, %v, want [nil v1 \"\"]", v, err)
		}
		r = insert(t, s, a)[0]
		if !r.Replay || string(r.Verdict) != "v1" || len(r.Candidates) != 0 {
			t.Errorf("replay after verdict: %+v, want verdict v1 and no candidates", r)
		}
		r = insert(t, s, bb)[0]
		if !r.Replay || r.Seq != rb.Seq {
			t.Errorf("replay of b: %+v", r)
		}
		wantCands(t, "replay of b", r, "a/lsh")
		// Nothing new was stored: a third document sees a and b once, and
		// (without cluster gaps) takes the next seq.
		c := entry(p, "c", map[int]uint64{0: a.Bands[0]})
		rc := insert(t, s, c)[0]
		wantCands(t, "c", rc, "b/lsh", "a/lsh")
		if !b.cluster && rc.Seq != rb.Seq+1 {
			t.Errorf("c has seq %d, want %d: a replay took a seq", rc.Seq, rb.Seq+1)
		}
		// A replay inside one batch.
		r2 := insert(t, s, entry(p, "d", nil), entry(p, "d", nil))
		if r2[0].Replay || !r2[1].Replay || r2[1].Seq != r2[0].Seq {
			t.Errorf("same id twice in a batch: %+v", r2)
		}
	})

	t.Run("verdict", func(t *testing.T) {
		s := open(t, storeOpts{})
		if err := recordVerdict(ctx, s, "nope", []byte("x")); !errors.Is(err, ErrNotFound) {
			t.Errorf("RecordVerdict(unknown) = %v, want ErrNotFound", err)
		}
		insert(t, s, entry(p, "a", nil))
		if err := recordVerdict(ctx, s, "a", nil); err != nil {
			t.Fatal(err)
		}
		r := insert(t, s, entry(p, "a", nil))[0]
		if r.Verdict == nil || len(r.Verdict) != 0 {
			t.Errorf("empty verdict came back as %#v, want empty non-nil", r.Verdict)
		}
	})

	t.Run("verdicts in one call", func(t *testing.T) {
		s := open(t, storeOpts{})
		var docs []Entry
		for i := range 40 { // more ids than one call's shard batch in cluster mode
			docs = append(docs, entry(p, fmt.Sprintf("v%d", i), nil))
		}
		insert(t, s, docs...)
		ids := []string{"v0", "nope", "v1", "v0"}
		vs := [][]byte{[]byte("first"), []byte("x"), nil, []byte("second")}
		for i := 2; i < 40; i++ {
			ids, vs = append(ids, fmt.Sprintf("v%d", i)), append(vs, []byte(fmt.Sprint(i)))
		}
		stored, err := s.RecordVerdicts(ctx, seqsOf(t, s, ids...), vs)
		if err != nil {
			t.Fatal(err)
		}
		for i, ok := range stored {
			if ok != (ids[i] != "nope") {
				t.Errorf("stored[%d] (%s) = %v", i, ids[i], ok)
			}
		}
		got, err := s.Verdicts(ctx, seqsOf(t, s, "v0", "v1", "v2", "v39", "nope"))
		if err != nil {
			t.Fatal(err)
		}
		if string(got[0]) != "first" || got[1] == nil || len(got[1]) != 0 || string(got[2]) != "2" || string(got[3]) != "39" || got[4] != nil {
			t.Errorf("Verdicts = %q, want [first \"\" 2 39 nil] (the first of two writes wins)", got)
		}
		if _, err := s.RecordVerdicts(ctx, seqsOf(t, s, "v0"), nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("RecordVerdicts with 1 id and 0 verdicts = %v, want ErrInvalid", err)
		}
	})

	t.Run("features", func(t *testing.T) {
		s := open(t, storeOpts{})
		a := entry(p, "a", nil)
		a.Features = []byte("features of a \x00\xff")
		insert(t, s, a, entry(p, "b", nil))
		got := features(t, s, []string{"a", "b", "x", "a"})
		if len(got) != 4 || !bytes.Equal(got[0], a.Features) || got[1] == nil || len(got[1]) != 0 ||
			got[2] != nil || !bytes.Equal(got[3], a.Features) {
			t.Errorf("Features = %q", got)
		}
	})

	t.Run("lookup-features", func(t *testing.T) {
		// The candidates' and the I-Match document's stored features come
		// with the lookup (single node, memory): from the call's own
		// pending writes for a document inserted earlier in the batch,
		// from the stored records otherwise, sent once per reply however
		// many documents find the same original.
		s := open(t, storeOpts{commonDocs: 64}) // four documents share a band: below the guard
		dig := sketch.Digest{7, 7, 7}
		a := entry(p, "a", nil)
		a.Features = []byte("fa \x00\xff")
		a.IMatch, a.HasIMatch = dig, true
		bb := entry(p, "b", map[int]uint64{0: a.Bands[0]}) // no features
		c := entry(p, "c", map[int]uint64{0: a.Bands[0], 1: bb.Bands[1]})
		c.Features = []byte("fc")
		c.IMatch, c.HasIMatch = dig, true // a: a candidate and the I-Match hit
		e := entry(p, "e", nil)           // the I-Match hit only
		e.IMatch, e.HasIMatch = dig, true
		e.Features = []byte("fe")
		r := insert(t, s, a, bb, c, e)
		wantCands(t, "c", r[2], "b/lsh", "a/lsh")
		check := func(what string, res ...Result) {
			t.Helper()
			if !b.cluster {
				checkLookupFeatures(t, s, res, true)
			}
			var got []string
			for _, r := range res {
				for _, c := range r.Candidates {
					got = append(got, fmt.Sprintf("%s=%q", c.ID, c.Features))
				}
				if r.IMatch != "" {
					got = append(got, fmt.Sprintf("imatch %s=%q", r.IMatch, r.IMatchFeatures))
				}
			}
			t.Logf("%s: %v", what, got)
		}
		check("same batch", r...)
		if !b.cluster {
			if f := r[1].Candidates[0].Features; string(f) != string(a.Features) {
				t.Errorf("b: candidate a's features %q, want %q", f, a.Features)
			}
			if f := r[2].Candidates[0].Features; f == nil || len(f) != 0 {
				t.Errorf("c: candidate b's features %q, want empty, not nil", f)
			}
			if f := r[3].IMatchFeatures; r[3].IMatch != "a" || string(f) != string(a.Features) {
				t.Errorf("e: I-Match %q with features %q, want a with %q", r[3].IMatch, f, a.Features)
			}
		}

		// Stored records: two documents of one batch find a, c and b.
		d1 := entry(p, "d1", map[int]uint64{0: a.Bands[0], 2: c.Bands[2]})
		d2 := entry(p, "d2", map[int]uint64{0: a.Bands[0], 2: c.Bands[2]})
		d2.IMatch, d2.HasIMatch = dig, true
		r = insert(t, s, d1, d2)
		wantCands(t, "d1", r[0], "c/lsh", "b/lsh", "a/lsh")
		check("stored", r...)

		// A replay without a verdict repeats the lookups, earlier
		// documents only.
		r = insert(t, s, c)
		if !r[0].Replay {
			t.Fatalf("c again: %+v, want a replay", r[0])
		}
		if !b.cluster {
			wantCands(t, "replay of c", r[0], "b/lsh", "a/lsh") // cluster: d1, d2 as well
		}
		check("replay", r...)

		// A deleted document is no candidate; the others keep their
		// features.
		if err := s.Delete(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		g := entry(p, "g", map[int]uint64{0: a.Bands[0]})
		g.IMatch, g.HasIMatch = dig, true
		r = insert(t, s, g)
		wantCands(t, "g", r[0], "d2/lsh", "d1/lsh", "c/lsh", "b/lsh")
		if r[0].IMatch == "a" {
			t.Errorf("g: I-Match hit on the deleted a")
		}
		check("after delete", r...)
	})

	t.Run("delete", func(t *testing.T) {
		s := open(t, storeOpts{commonDocs: 64}) // three documents share a band: below the guard
		a := entry(p, "a", nil)
		ra := insert(t, s, a)[0]
		insert(t, s, entry(p, "b", map[int]uint64{0: a.Bands[0]}), entry(p, "b2", map[int]uint64{0: a.Bands[0]}))
		if err := s.Delete(ctx, "a", "b2", "unknown"); err != nil {
			t.Fatal(err)
		}
		wantCands(t, "c", insert(t, s, entry(p, "c", map[int]uint64{0: a.Bands[0]}))[0], "b/lsh")
		if f := features(t, s, []string{"a"}); f[0] != nil {
			t.Errorf("Features(deleted) = %q", f[0])
		}
		if err := recordVerdict(ctx, s, "a", []byte("x")); !errors.Is(err, ErrNotFound) {
			t.Errorf("RecordVerdict(deleted) = %v", err)
		}
		r := insert(t, s, a)[0]
		if r.Replay || r.Seq <= ra.Seq {
			t.Errorf("re-insert after delete: %+v", r)
		}
		wantCands(t, "a again", r, "c/lsh", "b/lsh")
		if err := s.Delete(ctx); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("remove", func(t *testing.T) { runRemove(t, b, open) })

	t.Run("sources", func(t *testing.T) { runSources(t, b, open) })     // sources_test.go
	t.Run("templates", func(t *testing.T) { runTemplates(t, b, open) }) // templates_test.go
	t.Run("truth", func(t *testing.T) { runTruth(t, b, open) })         // truth_test.go

	t.Run("common-key", func(t *testing.T) {
		// A band bucket becomes common when commonDocs documents hold it:
		// later documents get its exemplar (the first holder) as their
		// only candidate from it, are counted, and are not added.
		s := open(t, storeOpts{commonDocs: 3})
		hot := key("hot", 0)
		var rs []Result
		for i := range 6 {
			rs = append(rs, insert(t, s, entry(p, fmt.Sprint("d", i), map[int]uint64{0: hot}))[0])
		}
		for i, want := range []int{0, 1, 2, 1, 1, 1} {
			if len(rs[i].Candidates) != want {
				t.Errorf("d%d: %d candidates, want %d", i, len(rs[i].Candidates), want)
			}
		}
		for i, want := range []int{0, 0, 0, 1, 1, 1} {
			if rs[i].Common != want || rs[i].Truncated != 0 {
				t.Errorf("d%d: common %d truncated %d, want %d and 0", i, rs[i].Common, rs[i].Truncated, want)
			}
		}
		wantCands(t, "d2", rs[2], "d1/lsh", "d0/lsh")
		wantCands(t, "d5", rs[5], "d0/lsh")
		if st, ok := s.(interface{ Stats() Stats }); ok {
			if got := st.Stats(); got.HotBuckets != 3 || got.Withheld != 0 || got.Docs != 6 {
				t.Errorf("stats %+v, want 3 common-key hits, 0 withheld, 6 docs", got)
			}
		}
		// A common key stays common for its generation: deleting its
		// exemplar leaves it without candidates, not open again.
		if err := s.Delete(ctx, "d0"); err != nil {
			t.Fatal(err)
		}
		r := insert(t, s, entry(p, "d6", map[int]uint64{0: hot}))[0]
		if r.Common != 1 || len(r.Candidates) != 0 {
			t.Errorf("d6: common %d, candidates %+v; want 1 and none", r.Common, r.Candidates)
		}
		// Dead members do not count towards the threshold.
		warm := key("warm", 0)
		insert(t, s, entry(p, "w0", map[int]uint64{2: warm}), entry(p, "w1", map[int]uint64{2: warm}))
		if err := s.Delete(ctx, "w0"); err != nil {
			t.Fatal(err)
		}
		r = insert(t, s, entry(p, "w2", map[int]uint64{2: warm}))[0]
		wantCands(t, "w2", r, "w1/lsh")
		r = insert(t, s, entry(p, "w3", map[int]uint64{2: warm}))[0]
		if r.Common != 0 {
			t.Errorf("w3: common %d, want 0 (w1, w2 and w3 make the key common)", r.Common)
		}
		wantCands(t, "w3", r, "w2/lsh", "w1/lsh")
		r = insert(t, s, entry(p, "w4", map[int]uint64{2: warm}))[0]
		if r.Common != 1 {
			t.Errorf("w4: common %d, want 1", r.Common)
		}
		wantCands(t, "w4", r, "w1/lsh")
	})

	t.Run("hot-anchors", func(t *testing.T) {
		// Documents sharing one boilerplate anchor among anchors of their
		// own: once its bucket holds commonDocs members, later documents
		// get it back in CommonAnchors (and only it), as given, whatever
		// the order and repeats of their anchors.
		s := open(t, storeOpts{commonDocs: 2})
		boiler := key("boilerplate", 0)
		// h1 makes the anchor common; later documents find its exemplar h0.
		for i := range 5 {
			own := anchors(fmt.Sprint("own", i), 4)
			e := withAnchors(entry(p, fmt.Sprint("h", i), nil), append([]uint64{own[3], boiler, own[0], boiler}, own[1:3]...)...)
			r := insert(t, s, e)[0]
			var want []uint64
			if i >= 2 {
				want = []uint64{boiler}
			}
			if !slices.Equal(r.CommonAnchors, want) {
				t.Errorf("h%d: hot anchors %x, want %x", i, r.CommonAnchors, want)
			}
			if i > 0 {
				wantCands(t, fmt.Sprint("h", i), r, "h0/passage")
			}
		}
		// A full band bucket is not an anchor.
		for i := range 4 {
			r := insert(t, s, entry(p, fmt.Sprint("b", i), map[int]uint64{1: key("hot band", 0)}))[0]
			if r.CommonAnchors != nil {
				t.Errorf("b%d: hot anchors %x from a band", i, r.CommonAnchors)
			}
		}
	})

	t.Run("passage", func(t *testing.T) {
		s := open(t, storeOpts{})
		st, hasStats := s.(interface{ Stats() Stats })
		const fp = 0x0123456789abcdef
		a := withAnchors(entry(p, "a", nil), anchors("a", 6)...)
		a.SimHash, a.HasSimHash = fp, true
		A := a.Anchors
		B := anchors("b", 3)
		for _, tt := range []struct {
			e     Entry
			cands []string
			hits  []int
		}{
			{a, nil, nil},
			// Two of a's anchors and nothing else.
			{withAnchors(entry(p, "b", nil), B[0], A[1], B[1], A[4], B[2]), []string{"a/passage"}, []int{2}},
			// A band and an anchor (given three times) of a: the band wins
			// the via and the hits add up; one anchor of b.
			{withAnchors(entry(p, "c", map[int]uint64{0: a.Bands[0]}), A[0], A[0], B[0], A[0]), []string{"a/lsh", "b/passage"}, []int{2, 1}},
			// Duplicate anchors count once: two of b's (both in one entry
			// many times) outrank one of a's.
			{withAnchors(entry(p, "d", nil), A[2], B[1], B[2], B[1], A[2], B[2]), []string{"b/passage", "a/passage"}, []int{2, 1}},
			// No anchors: the passage table is not read.
			{entry(p, "e", map[int]uint64{1: a.Bands[1]}), []string{"a/lsh"}, []int{1}},
			// Three equal SimHash blocks (distance 1) and an anchor: via
			// SimHash, four hits.
			{func() Entry {
				e := withAnchors(entry(p, "f", nil), A[3])
				e.SimHash, e.HasSimHash = fp^1, true
				return e
			}(), []string{"a/simhash"}, []int{4}},
		} {
			var before Stats
			if hasStats {
				before = st.Stats()
			}
			r := insert(t, s, tt.e)[0]
			wantCands(t, tt.e.ID, r, tt.cands...)
			wantHits(t, tt.e.ID, r, tt.hits...)
			if hasStats {
				want := uint64(passageCands(r.Candidates))
				if got := st.Stats().Passage - before.Passage; got != want {
					t.Errorf("%s: stats count %d passage candidates, want %d", tt.e.ID, got, want)
				}
			}
		}
	})

	t.Run("passage-copies", func(t *testing.T) {
		// An exact copy stops at the content lane: none of its anchors is
		// read or written.
		s := open(t, storeOpts{})
		z := anchors("z", 2)
		mk := func(id string) Entry {
			e := withAnchors(entry(p, id, nil), z...)
			e.Content, e.HasContent = sketch.ContentDigest{5}, true
			return e
		}
		insert(t, s, mk("x"))
		if r := insert(t, s, mk("y"))[0]; r.Copy != "x" || len(r.Candidates) != 0 {
			t.Errorf("y: %+v, want a copy of x and nothing else", r)
		}
		r := insert(t, s, withAnchors(entry(p, "w", nil), z[1]))[0]
		wantCands(t, "w", r, "x/passage")
		wantHits(t, "w", r, 1)
	})

	t.Run("lookup", func(t *testing.T) {
		// Lookup answers as LookupInsert would and stores nothing: the
		// looked-up document is neither a candidate nor a replay later,
		// and a common key's count does not move.
		s := open(t, storeOpts{commonDocs: 3})
		a := withAnchors(entry(p, "a", nil), anchors("a", 3)...)
		a.Content, a.HasContent = sketch.ContentDigest{9}, true
		insert(t, s, a)
		q := withAnchors(entry(p, "q", map[int]uint64{0: a.Bands[0]}), a.Anchors[1])
		rs, err := s.Lookup(ctx, []Entry{q, q, a})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rs[:2] {
			if r.Seq <= rs[2].CopySeq || r.Replay {
				t.Errorf("lookup %d: %+v, want a seq after a's and no replay", i, r)
			}
			wantCands(t, "q", r, "a/lsh")
			wantHits(t, "q", r, 2)
		}
		if !rs[2].Replay || rs[2].Seq != seqsOf(t, s, "a")[0] || rs[2].Verdict != nil || !rs[2].Recalled || rs[2].Copy != "" {
			t.Errorf("a looked up again: %+v, want its replay: its Seq, no verdict, its own lookup recalled", rs[2])
		}
		if err := recordVerdict(ctx, s, "a", []byte("va")); err != nil {
			t.Fatal(err)
		}
		if rs, err := s.Lookup(ctx, []Entry{a}); err != nil || !rs[0].Replay || string(rs[0].Verdict) != "va" {
			t.Errorf("a looked up after its verdict: %+v, %v; want its replay with verdict va", rs, err)
		}
		if f := features(t, s, []string{"q"}); f[0] != nil {
			t.Errorf("Features(q) after Lookup = %q, want none", f[0])
		}
		r := insert(t, s, entry(p, "r", map[int]uint64{0: a.Bands[0]}))[0]
		wantCands(t, "r", r, "a/lsh")
		if r2 := insert(t, s, q)[0]; r2.Replay {
			t.Errorf("q inserted after Lookup is a replay: %+v", r2)
		}
	})

	t.Run("passage-common", func(t *testing.T) {
		s := open(t, storeOpts{commonDocs: 3})
		hot := key("hot", 1)
		var rs []Result
		for i := range 6 {
			id := fmt.Sprint("d", i)
			rs = append(rs, insert(t, s, withAnchors(entry(p, id, nil), append(anchors(id, 2), hot)...))[0])
		}
		for i, want := range []int{0, 1, 2, 1, 1, 1} {
			if len(rs[i].Candidates) != want {
				t.Errorf("d%d: %d candidates, want %d", i, len(rs[i].Candidates), want)
			}
			wantCommon := 0
			if i >= 3 {
				wantCommon = 1
			}
			if rs[i].Common != wantCommon || len(rs[i].CommonAnchors) != wantCommon {
				t.Errorf("d%d: common %d anchors %x, want %d", i, rs[i].Common, rs[i].CommonAnchors, wantCommon)
			}
			// The count: the three holders, then each document that found
			// the key before this one.
			if wantCommon == 1 && !slices.Equal(rs[i].CommonAnchorDocs, []int{i}) {
				t.Errorf("d%d: common anchor held by %v documents, want [%d]", i, rs[i].CommonAnchorDocs, i)
			}
		}
		wantCands(t, "d5", rs[5], "d0/passage")
		if st, ok := s.(interface{ Stats() Stats }); ok {
			if got := st.Stats(); got.HotBuckets != 3 || got.Withheld != 0 || got.Passage != 6 {
				t.Errorf("stats %+v, want 3 common-key hits, 0 withheld, 6 passage candidates", got)
			}
		}
	})

	t.Run("passage-replay", func(t *testing.T) {
		s := open(t, storeOpts{})
		a := withAnchors(entry(p, "a", nil), anchors("a", 4)...)
		ra := insert(t, s, a)[0]
		bb := withAnchors(entry(p, "b", nil), a.Anchors[0], a.Anchors[1], key("b", 7))
		rb := insert(t, s, bb)[0]
		r := insert(t, s, a)[0]
		if !r.Replay || r.Seq != ra.Seq {
			t.Fatalf("replay of a: %+v", r)
		}
		if !b.cluster {
			wantCands(t, "replay of a", r) // b came later
		}
		r = insert(t, s, bb)[0]
		if !r.Replay || r.Seq != rb.Seq {
			t.Fatalf("replay of b: %+v", r)
		}
		wantCands(t, "replay of b", r, "a/passage")
		wantHits(t, "replay of b", r, 2)
		// The replays stored nothing: c meets a and b once per anchor.
		rc := insert(t, s, withAnchors(entry(p, "c", nil), a.Anchors[0], a.Anchors[2]))[0]
		wantCands(t, "c", rc, "a/passage", "b/passage")
		wantHits(t, "c", rc, 2, 1)
		if !b.cluster && rc.Seq != rb.Seq+1 {
			t.Errorf("c has seq %d, want %d: a replay took a seq", rc.Seq, rb.Seq+1)
		}
		if err := recordVerdict(ctx, s, "b", []byte("v")); err != nil {
			t.Fatal(err)
		}
		if r := insert(t, s, bb)[0]; string(r.Verdict) != "v" || len(r.Candidates) != 0 {
			t.Errorf("replay of b after its verdict: %+v", r)
		}
	})

	t.Run("passage-delete", func(t *testing.T) {
		s := open(t, storeOpts{})
		x := key("x", 0)
		a := withAnchors(entry(p, "a", nil), x, key("a", 9))
		insert(t, s, a, withAnchors(entry(p, "b", nil), x))
		if err := s.Delete(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		wantCands(t, "c", insert(t, s, withAnchors(entry(p, "c", nil), x, key("a", 9)))[0], "b/passage")
		r := insert(t, s, a)[0]
		if r.Replay {
			t.Errorf("re-insert after delete: %+v", r)
		}
		wantCands(t, "a again", r, "c/passage", "b/passage")
		wantHits(t, "a again", r, 2, 1)
	})

	t.Run("passage-retention", func(t *testing.T) {
		clk := newFakeClock()
		s := open(t, storeOpts{retention: 10 * time.Second, generation: 5 * time.Second, clock: clk.Now})
		A := anchors("a", 3)
		insert(t, s, withAnchors(entry(p, "a", nil), A...))
		clk.Advance(9 * time.Second)
		r := insert(t, s, withAnchors(entry(p, "b", nil), A[0], A[1]))[0]
		wantCands(t, "b at +9s", r, "a/passage")
		wantHits(t, "b at +9s", r, 2)
		clk.Advance(7 * time.Second) // +16 s: a's generation is gone
		r = insert(t, s, withAnchors(entry(p, "c", nil), A...))[0]
		wantCands(t, "c at +16s", r, "b/passage")
		wantHits(t, "c at +16s", r, 2)
	})

	t.Run("passage-refresh", func(t *testing.T) {
		clk := newFakeClock()
		s := open(t, storeOpts{retention: 10 * time.Second, generation: 5 * time.Second, refresh: true, clock: clk.Now, commonDocs: 64}) // three share an anchor: below the guard
		A := anchors("a", 3)
		insert(t, s, withAnchors(entry(p, "a", nil), A...))
		clk.Advance(6 * time.Second)
		// a is carried into the current generation, with its entry in the
		// bucket of A[0].
		wantCands(t, "b at +6s", insert(t, s, withAnchors(entry(p, "b", nil), A[0]))[0], "a/passage")
		clk.Advance(time.Second)
		// A[0] holds a in two generations: it counts once.
		r := insert(t, s, withAnchors(entry(p, "c", nil), A[0], A[1]))[0]
		wantCands(t, "c at +7s", r, "a/passage", "b/passage")
		wantHits(t, "c at +7s", r, 2, 1)
		clk.Advance(10 * time.Second) // +17 s: the first generation is gone
		// a lives on in the buckets it shared with b and c, not in that
		// of A[2].
		r = insert(t, s, withAnchors(entry(p, "d", nil), A...))[0]
		wantCands(t, "d at +17s", r, "c/passage", "a/passage", "b/passage")
		wantHits(t, "d at +17s", r, 2, 2, 1)
	})

	t.Run("invalid", func(t *testing.T) {
		s := open(t, storeOpts{})
		for _, e := range []Entry{
			{ID: "", Bands: make([]uint64, p.Bands)},
			{ID: "x", Bands: make([]uint64, p.Bands-1)},
			{ID: "x", Bands: make([]uint64, p.Bands), Anchors: anchors("x", MaxAnchors+1)},
		} {
			if _, err := s.LookupInsert(ctx, []Entry{e}); !errors.Is(err, ErrInvalid) {
				t.Errorf("LookupInsert(%.60v…) = %v, want ErrInvalid", e, err)
			}
		}
		insert(t, s, withAnchors(entry(p, "max", nil), anchors("max", MaxAnchors)...))
		if r, err := s.LookupInsert(ctx, nil); err != nil || len(r) != 0 {
			t.Errorf("LookupInsert(nil) = %v, %v", r, err)
		}
	})

	t.Run("closed", func(t *testing.T) {
		s := open(t, storeOpts{})
		s.Close()
		if _, err := s.LookupInsert(ctx, []Entry{entry(p, "a", nil)}); !errors.Is(err, ErrClosed) {
			t.Errorf("after Close: %v, want ErrClosed", err)
		}
		if _, err := s.Features(ctx, []uint64{1}); !errors.Is(err, ErrClosed) {
			t.Errorf("after Close: %v, want ErrClosed", err)
		}
	})

	t.Run("retention", func(t *testing.T) {
		// Generations of 5 s, retention 10 s: findable for at least 10 s
		// and at most 15 s. The fake clock runs days ahead of the real one
		// so that the expiries Redis is given lie in the future.
		clk := newFakeClock()
		o := storeOpts{retention: 10 * time.Second, generation: 5 * time.Second, clock: clk.Now}
		s := open(t, o)
		a := entry(p, "a", nil)
		insert(t, s, a)
		clk.Advance(9 * time.Second)
		wantCands(t, "b at +9s", insert(t, s, entry(p, "b", map[int]uint64{0: a.Bands[0]}))[0], "a/lsh")
		clk.Advance(7 * time.Second) // +16 s
		wantCands(t, "c at +16s", insert(t, s, entry(p, "c", map[int]uint64{0: a.Bands[0]}))[0], "b/lsh")
		if f := features(t, s, []string{"a", "b"}); f[0] != nil || f[1] == nil {
			t.Errorf("Features at +16s = %q, want a expired and b present", f)
		}
		if r := insert(t, s, a)[0]; r.Replay {
			t.Errorf("an expired id is a replay: %+v", r)
		}
	})

	t.Run("refresh-on-match", func(t *testing.T) {
		clk := newFakeClock()
		o := storeOpts{retention: 10 * time.Second, generation: 5 * time.Second, refresh: true, clock: clk.Now}
		s := open(t, o)
		a := entry(p, "a", nil)
		a.Features = []byte("fa")
		insert(t, s, a)
		clk.Advance(9 * time.Second)
		wantCands(t, "b at +9s", insert(t, s, entry(p, "b", map[int]uint64{0: a.Bands[0]}))[0], "a/lsh")
		clk.Advance(8 * time.Second) // +17 s: a lives on thanks to b's match
		wantCands(t, "c at +17s", insert(t, s, entry(p, "c", map[int]uint64{0: a.Bands[0]}))[0], "b/lsh", "a/lsh")
		if f := features(t, s, []string{"a"}); string(f[0]) != "fa" {
			t.Errorf("Features(a) after refresh = %q", f[0])
		}
		if r := insert(t, s, a)[0]; !r.Replay {
			t.Errorf("refreshed a is not a replay: %+v", r)
		}
	})
}

// fakeClock is a manually advanced clock, days ahead of the real one and
// aligned to a whole minute.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Now().Add(72 * time.Hour).Truncate(time.Minute)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func memoryBackend() backend {
	return backend{name: "memory", open: func(t *testing.T, o storeOpts) Store {
		m, err := NewMemory(MemoryConfig{Params: o.params, CommonDocs: o.commonDocs, MaxCandidates: o.maxCandidates,
			Retention: o.retention, Generation: o.generation, RefreshOnMatch: o.refresh, Clock: o.clock})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}}
}

func TestMemoryConformance(t *testing.T) { runConformance(t, memoryBackend()) }
