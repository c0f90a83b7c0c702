package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/sketch"
)

func TestSourceCodec(t *testing.T) {
	for _, tt := range []struct {
		name   string
		hashes []uint32
	}{
		{"one", []uint32{7}},
		{"several", []uint32{0, 1, 1 << 31, ^uint32(0)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := AppendSource(nil, 1<<40+3, tt.hashes)
			if len(b) != 6+4*len(tt.hashes) {
				t.Errorf("%d bytes for %d hashes", len(b), len(tt.hashes))
			}
			by, got, err := DecodeSource(nil, b)
			if err != nil || by != 1<<40+3 || !slices.Equal(got, tt.hashes) {
				t.Errorf("DecodeSource(AppendSource(%v)) = %d, %v, %v", tt.hashes, by, got, err)
			}
		})
	}
	for _, tt := range []struct {
		name string
		b    []byte
	}{
		{"torn", []byte{0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0}},
		{"short", []byte{0, 0, 1}},
		{"no finder", AppendSource(nil, 0, []uint32{5})},
		{"unsorted", AppendSource(nil, 1, []uint32{5, 4})},
		{"repeated", AppendSource(nil, 1, []uint32{5, 5})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := DecodeSource(nil, tt.b); !errors.Is(err, ErrInvalid) {
				t.Errorf("DecodeSource(%x) = %v, want ErrInvalid", tt.b, err)
			}
		})
	}
}

// src returns the source record of hashes found by Seq 1.
func src(hashes ...uint32) []byte { return AppendSource(nil, 1, hashes) }

// srcBy returns the source record of hashes found by Seq by.
func srcBy(by uint64, hashes ...uint32) []byte { return AppendSource(nil, by, hashes) }

// sources reads Sources or fails.
func sources(t *testing.T, s Store, ids ...string) [][]byte {
	t.Helper()
	got, err := s.Sources(context.Background(), seqsOf(t, s, ids...))
	if err != nil {
		t.Fatalf("Sources(%v): %v", ids, err)
	}
	if len(got) != len(ids) {
		t.Fatalf("Sources(%v): %d records", ids, len(got))
	}
	return got
}

// checkLookupSources checks that the source records returned with res's
// candidates and I-Match hits are what Sources returns for their ids (nil
// there is empty here); with filled, that each candidate of a result with
// common anchors came with its source record.
func checkLookupSources(t *testing.T, s Store, res []Result, filled bool) {
	t.Helper()
	for i, r := range res {
		type got struct {
			id  string
			src []byte
		}
		var gots []got
		for _, c := range r.Candidates {
			gots = append(gots, got{c.ID, c.Source})
		}
		if r.IMatch != "" {
			gots = append(gots, got{r.IMatch, r.IMatchSource})
		}
		for _, g := range gots {
			want := sources(t, s, g.id)[0]
			switch {
			case g.src == nil && filled && len(r.CommonAnchors) > 0:
				t.Errorf("result %d: %s: no source record read, want %x", i, g.id, want)
			case g.src != nil && !bytes.Equal(g.src, want):
				t.Errorf("result %d: %s: source record %x, Sources returns %x", i, g.id, g.src, want)
			}
		}
	}
}

// runSources is the conformance suite's part for source records.
func runSources(t *testing.T, b backend, open func(*testing.T, storeOpts) Store) {
	p := testParams
	ctx := context.Background()

	t.Run("record-and-read", func(t *testing.T) {
		s := open(t, storeOpts{})
		var docs []Entry
		for i := range 40 { // more ids than one call's shard batch in cluster mode
			docs = append(docs, entry(p, fmt.Sprintf("s%d", i), nil))
		}
		insert(t, s, docs...)
		ids := []string{"s0", "nope", "s1", "s0"}
		recs := [][]byte{src(1, 2, 3), src(4), src(5), src(9)}
		for i := 2; i < 40; i++ {
			ids, recs = append(ids, fmt.Sprintf("s%d", i)), append(recs, src(uint32(i)))
		}
		stored, err := s.RecordSources(ctx, seqsOf(t, s, ids...), recs)
		if err != nil {
			t.Fatal(err)
		}
		for i, ok := range stored {
			if ok != (ids[i] != "nope") {
				t.Errorf("stored[%d] (%s) = %v", i, ids[i], ok)
			}
		}
		// A replay of the batch changes nothing: of two records of one
		// finder the first wins; a later finder's record is not kept, an
		// earlier finder's replaces what a later one wrote.
		if _, err := s.RecordSources(ctx, seqsOf(t, s, "s1", "s0", "s2"), [][]byte{src(6), src(7), srcBy(2, 8)}); err != nil {
			t.Fatal(err)
		}
		insert(t, s, entry(p, "t0", nil), entry(p, "t1", nil))
		if _, err := s.RecordSources(ctx, seqsOf(t, s, "t0"), [][]byte{srcBy(2, 10)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RecordSources(ctx, seqsOf(t, s, "t0", "t1", "t1"), [][]byte{srcBy(1, 9), srcBy(5, 11), srcBy(4, 12)}); err != nil {
			t.Fatal(err)
		}
		got := sources(t, s, "s0", "s1", "s2", "s39", "nope", "t0", "t1")
		want := [][]byte{src(1, 2, 3), src(5), src(2), src(39), nil, srcBy(1, 9), srcBy(4, 12)}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) || (want[i] == nil) != (got[i] == nil) {
				t.Errorf("Sources = %x, want %x (the earliest finder's record, the first of one finder's)", got, want)
				break
			}
		}
	})

	t.Run("invalid", func(t *testing.T) {
		s := open(t, storeOpts{})
		insert(t, s, entry(p, "a", nil))
		for _, tt := range []struct {
			name string
			ids  []string
			recs [][]byte
		}{
			{"count", []string{"a"}, nil},
			{"empty", []string{"a"}, [][]byte{{}}},
			{"finder only", []string{"a"}, [][]byte{srcBy(1)}},
			{"torn", []string{"a"}, [][]byte{{0, 0, 0, 0, 0, 1, 1, 2, 3}}},
			{"unsorted", []string{"a"}, [][]byte{src(3, 2)}},
			{"long", []string{"a"}, [][]byte{make([]byte, MaxSourceBytes+4)}},
		} {
			if _, err := s.RecordSources(ctx, seqsOf(t, s, tt.ids...), tt.recs); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: RecordSources = %v, want ErrInvalid", tt.name, err)
			}
		}
		if got := sources(t, s, "a"); got[0] == nil || len(got[0]) != 0 {
			t.Errorf("Sources(a) after invalid calls = %x, want none (empty)", got[0])
		}
	})

	t.Run("with-candidates", func(t *testing.T) {
		// A candidate's source record comes with the lookup (memory and a
		// single node) when the entry has common anchors; Redis Cluster
		// leaves it to Sources.
		s := open(t, storeOpts{maxBucket: 2})
		boiler := key("boilerplate", 0)
		dig := sketch.Digest{9, 9, 9}
		mk := func(id string) Entry {
			e := withAnchors(entry(p, id, nil), append(anchors(id, 3), boiler)...)
			e.IMatch, e.HasIMatch = dig, true
			return e
		}
		insert(t, s, mk("h0"), mk("h1"))
		if _, err := s.RecordSources(ctx, seqsOf(t, s, "h0"), [][]byte{src(10, 20)}); err != nil {
			t.Fatal(err)
		}
		r := insert(t, s, mk("h2"), mk("h3"))
		for i, r := range r {
			if len(r.CommonAnchors) != 1 || r.IMatch != "h0" {
				t.Fatalf("h%d: common anchors %x, I-Match %q; want the boilerplate anchor and h0", i+2, r.CommonAnchors, r.IMatch)
			}
			wantCands(t, fmt.Sprint("h", i+2), r, "h0/passage")
		}
		checkLookupSources(t, s, r, !b.cluster)
		if !b.cluster {
			if c := r[0].Candidates[0]; !bytes.Equal(c.Source, src(10, 20)) || !bytes.Equal(r[0].IMatchSource, src(10, 20)) {
				t.Errorf("h2: candidate h0's source %x, I-Match source %x; want %x", c.Source, r[0].IMatchSource, src(10, 20))
			}
		}
		// h1 has no source record: read, empty.
		x := withAnchors(entry(p, "x", map[int]uint64{0: key("h1", 0)}), boiler)
		r = insert(t, s, x)
		wantCands(t, "x", r[0], "h1/lsh", "h0/passage")
		checkLookupSources(t, s, r, !b.cluster)
		if c := r[0].Candidates; !b.cluster && (c[0].Source == nil || len(c[0].Source) != 0 || !bytes.Equal(c[1].Source, src(10, 20))) {
			t.Errorf("x: candidates' sources h1 %#v, h0 %x; want empty and %x", c[0].Source, c[1].Source, src(10, 20))
		}
		// Without common anchors nothing needs the sources; what comes is
		// still what Sources says.
		r = insert(t, s, entry(p, "y", map[int]uint64{0: key("h1", 0)}))
		checkLookupSources(t, s, r, false)
	})

	t.Run("remove", func(t *testing.T) {
		// A source record goes with its document: Remove leaves no field
		// of it, and the id inserted again has none.
		s := open(t, storeOpts{})
		insert(t, s, entry(p, "y", nil))
		if _, err := s.RecordSources(ctx, seqsOf(t, s, "y"), [][]byte{src(1)}); err != nil {
			t.Fatal(err)
		}
		k0, f0 := footprint(t, s)
		insert(t, s, entry(p, "x", nil))
		if _, err := s.RecordSources(ctx, seqsOf(t, s, "x"), [][]byte{src(2, 3)}); err != nil {
			t.Fatal(err)
		}
		if removed, err := s.Remove(ctx, []string{"x"}); err != nil || !removed[0] {
			t.Fatalf("Remove(x) = %v, %v", removed, err)
		}
		if k, f := footprint(t, s); k != k0 || f != f0 {
			t.Errorf("after Remove(x): %d keys %d fields, want %d and %d as before x", k, f, k0, f0)
		}
		insert(t, s, entry(p, "x", nil))
		if got := sources(t, s, "x", "y"); got[0] == nil || len(got[0]) != 0 || !bytes.Equal(got[1], src(1)) {
			t.Errorf("Sources(x inserted again, y) = %x, want none and %x", got, src(1))
		}
	})

	t.Run("retention", func(t *testing.T) {
		// A source record lives as long as its document: carried along
		// when a match refreshes it, gone when it expires.
		clk := newFakeClock()
		s := open(t, storeOpts{retention: 10 * time.Second, generation: 5 * time.Second, refresh: true, clock: clk.Now})
		a, c := entry(p, "a", nil), entry(p, "c", nil)
		insert(t, s, a, c)
		if _, err := s.RecordSources(ctx, seqsOf(t, s, "a", "c"), [][]byte{src(1), src(2)}); err != nil {
			t.Fatal(err)
		}
		checkRecordExpiry(t, s)
		clk.Advance(9 * time.Second)
		wantCands(t, "b at +9s", insert(t, s, entry(p, "b", map[int]uint64{0: a.Bands[0]}))[0], "a/lsh")
		checkRecordExpiry(t, s)
		clk.Advance(8 * time.Second) // +17 s: a lives on thanks to b's match, c is gone
		if got := sources(t, s, "a", "c"); !bytes.Equal(got[0], src(1)) || got[1] != nil {
			t.Errorf("Sources(a, c) at +17s = %x, want %x and none", got, src(1))
		}
	})
}

// checkRecordExpiry checks, on Redis, that every source record hash
// expires with its documents' meta records: it is given the expiry of the
// meta record hash of the same seqs.
func checkRecordExpiry(t *testing.T, s Store) {
	t.Helper()
	r, ok := s.(*Redis)
	if !ok {
		return
	}
	ctx := context.Background()
	var mu sync.Mutex
	var keys []string
	scan := func(c redis.Cmdable) error {
		ks, err := c.Keys(ctx, r.ns+":*}s*").Result()
		mu.Lock()
		keys = append(keys, ks...)
		mu.Unlock()
		return err
	}
	var err error
	if cc, ok := r.c.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return scan(c) })
	} else {
		err = scan(r.c)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Fatal("no source record hash stored")
	}
	for _, k := range keys {
		i := strings.LastIndex(k, "}s")
		m := k[:i] + "}m" + k[i+2:]
		se, err1 := r.c.ExpireTime(ctx, k).Result()
		me, err2 := r.c.ExpireTime(ctx, m).Result()
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		// A record hash holds up to 64 documents of its shard: the meta
		// records' hash may outlive the sources' for a later document
		// that recorded no source, never the other way round.
		if se <= 0 || se > me {
			t.Errorf("%s expires at %v, its meta records %s at %v", k, se, m, me)
		}
	}
}
