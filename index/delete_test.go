package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index/redistest"
)

// footprint counts what a store holds, for the delete tests: on Redis the
// keys of the store's namespace and the fields of those hashes (a
// namespace-wide DBSIZE and the sum of the hash lengths), leaving out
// the counters a delete keeps (the shards' clock hashes, whose seq
// counter only grows, and the guard's o-fields); in memory the entries
// of its maps (ids, bucket slots, lane entries).
func footprint(t *testing.T, s Store) (keys, fields int) {
	t.Helper()
	switch s := s.(type) {
	case *Memory:
		return s.footprint(), 0
	case *Redis:
		ctx := context.Background()
		count := func(c redis.Cmdable) error {
			var cur uint64
			for {
				ks, next, err := c.Scan(ctx, cur, s.ns+":*", 1000).Result()
				if err != nil {
					return err
				}
				for _, k := range ks {
					if strings.HasSuffix(k, "}c") {
						continue // a clock hash
					}
					hk, err := c.HKeys(ctx, k).Result()
					if err != nil {
						return fmt.Errorf("%s: %w", k, err)
					}
					keys++
					for _, f := range hk {
						if !strings.HasPrefix(f, "o") || len(f) != 1+fieldBytes {
							fields++
						}
					}
				}
				if cur = next; cur == 0 {
					return nil
				}
			}
		}
		var err error
		if cc, ok := s.c.(*redis.ClusterClient); ok {
			var mu sync.Mutex
			err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
				mu.Lock()
				defer mu.Unlock()
				return count(c)
			})
		} else {
			err = count(s.c)
		}
		if err != nil {
			t.Fatalf("footprint: %v", err)
		}
		return keys, fields
	}
	t.Fatalf("footprint: unknown store %T", s)
	return 0, 0
}

// full returns e with every lane: a SimHash fingerprint, an I-Match and a
// content digest, and anchors. Its features hold the three digests, as
// real ones do, so that Redis refers to them (digestRefs) rather than
// writing them in the keys record again.
func full(e Entry, simhash uint64, a ...uint64) Entry {
	e.SimHash, e.HasSimHash = simhash, true
	binary.LittleEndian.PutUint64(e.IMatch[:], key(e.ID+"/imatch", 0))
	binary.LittleEndian.PutUint64(e.IMatch[8:], key(e.ID+"/imatch", 1))
	binary.LittleEndian.PutUint32(e.IMatch[16:], uint32(key(e.ID+"/imatch", 2)))
	e.HasIMatch = true
	binary.LittleEndian.PutUint64(e.Content[:], key(e.ID+"/content", 0))
	binary.LittleEndian.PutUint64(e.Content[8:], key(e.ID+"/content", 1))
	e.HasContent = true
	e.Anchors = a
	e.Features = append([]byte("features of "+e.ID), e.Content[:]...)
	e.Features = binary.LittleEndian.AppendUint64(e.Features, e.SimHash)
	e.Features = append(e.Features, e.IMatch[:]...)
	return e
}

// runRemove is the conformance suite's delete case: Remove takes every
// key of a document away, on every backend.
func runRemove(t *testing.T, b backend, open func(*testing.T, storeOpts) Store) {
	p := testParams
	ctx := context.Background()

	t.Run("every-key", func(t *testing.T) {
		s := open(t, storeOpts{})
		shared, anchor := key("shared", 0), key("anchor", 0)
		y := full(entry(p, "y", map[int]uint64{1: shared}), 0x0123456789abcdef, anchor, key("y", 7))
		insert(t, s, y, full(entry(p, "z", nil), 0xfedcba9876543210, key("z", 7)))
		if err := recordVerdict(ctx, s, "y", []byte("vy")); err != nil {
			t.Fatal(err)
		}
		k0, f0 := footprint(t, s)
		// x shares a band, a SimHash block and an anchor with y: its
		// members join y's buckets; its own keys make new ones.
		x := full(entry(p, "x", map[int]uint64{1: shared}), 0x0123456789abcdee, anchor, key("x", 7), key("x", 8))
		rx := insert(t, s, x)[0]
		wantCands(t, "x", rx, "y/lsh")
		if err := recordVerdict(ctx, s, "x", []byte("vx")); err != nil {
			t.Fatal(err)
		}
		k1, f1 := footprint(t, s)
		if k1 <= k0 && f1 <= f0 {
			t.Fatalf("footprint %d keys %d fields before x, %d and %d after: x stored nothing?", k0, f0, k1, f1)
		}
		removed, err := s.Remove(ctx, []string{"x", "unknown"})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(removed, []bool{true, false}) {
			t.Errorf("Remove(x, unknown) = %v, want [true false]", removed)
		}
		if k, f := footprint(t, s); k != k0 || f != f0 {
			t.Errorf("after Remove(x): %d keys %d fields, want %d and %d as before x was inserted (with x: %d, %d)", k, f, k0, f0, k1, f1)
		}
		// A remove read twice is harmless.
		if removed, err := s.Remove(ctx, []string{"x"}); err != nil || removed[0] {
			t.Errorf("Remove(x) again = %v, %v; want [false], nil", removed, err)
		}
		if k, f := footprint(t, s); k != k0 || f != f0 {
			t.Errorf("after a second Remove(x): %d keys %d fields, want %d and %d", k, f, k0, f0)
		}
		if v, err := s.Verdicts(ctx, seqsOf(t, s, "x", "y")); err != nil || v[0] != nil || string(v[1]) != "vy" {
			t.Errorf("Verdicts(x, y) = %q, %v; want nil and vy", v, err)
		}
		// x re-sent is new: its copy finds y only, no lane names x.
		r := insert(t, s, x)[0]
		if r.Replay || r.Copy != "" || r.IMatch != "" || r.Verdict != nil {
			t.Errorf("x again: %+v; want a new document, no copy, no I-Match hit", r)
		}
		wantCands(t, "x again", r, "y/lsh")
		// A copy of x's content and I-Match digest finds x again, not the
		// removed one.
		c := full(entry(p, "c", nil), 1)
		c.Content, c.IMatch = x.Content, x.IMatch
		rc := insert(t, s, c)[0]
		if rc.Copy != "x" || rc.CopySeq != r.Seq {
			t.Errorf("copy of x: copy %q seq %d, want x seq %d", rc.Copy, rc.CopySeq, r.Seq)
		}
	})

	t.Run("common-exemplar", func(t *testing.T) {
		// A common key whose exemplar is removed keeps its mark and count
		// but names no removed document: the next document to find it
		// has no candidate from it and becomes its exemplar.
		s := open(t, storeOpts{commonDocs: 2})
		hot := key("hot", 0)
		insert(t, s, entry(p, "d0", map[int]uint64{0: hot}), entry(p, "d1", map[int]uint64{0: hot}))
		if r := insert(t, s, entry(p, "d2", map[int]uint64{0: hot}))[0]; r.Common != 1 {
			t.Fatalf("d2: common %d, want 1", r.Common)
		} else {
			wantCands(t, "d2", r, "d0/lsh")
		}
		if removed, err := s.Remove(ctx, []string{"d0"}); err != nil || !removed[0] {
			t.Fatalf("Remove(d0) = %v, %v", removed, err)
		}
		r := insert(t, s, entry(p, "d3", map[int]uint64{0: hot}))[0]
		if r.Common != 1 || len(r.Candidates) != 0 {
			t.Errorf("d3: common %d, candidates %v; want 1 and none", r.Common, ids(r.Candidates))
		}
		r = insert(t, s, entry(p, "d4", map[int]uint64{0: hot}))[0]
		wantCands(t, "d4", r, "d3/lsh")
	})

	t.Run("generations", func(t *testing.T) {
		// A document carried into a later generation is removed from
		// every generation.
		clk := newFakeClock()
		s := open(t, storeOpts{retention: 20 * time.Second, generation: 10 * time.Second, refresh: true, clock: clk.Now})
		shared := key("g-shared", 0)
		insert(t, s, full(entry(p, "base", nil), 5, key("base", 1)))
		k0, f0 := footprint(t, s)
		a := full(entry(p, "a", map[int]uint64{0: shared}), 7, key("a", 1))
		insert(t, s, a)
		clk.Advance(10 * time.Second)
		wantCands(t, "b", insert(t, s, entry(p, "b", map[int]uint64{0: shared}))[0], "a/lsh")
		if removed, err := s.Remove(ctx, []string{"a", "b"}); err != nil || !slices.Equal(removed, []bool{true, true}) {
			t.Fatalf("Remove(a, b) = %v, %v", removed, err)
		}
		k, f := footprint(t, s)
		if b.name == "memory" {
			if k != k0 {
				t.Errorf("memory after Remove: %d entries, want %d", k, k0)
			}
			return
		}
		// The new generation's base is found only in its own clock: its
		// keys are the older generation's, as before.
		if k != k0 || f != f0 {
			t.Errorf("after Remove(a, b): %d keys %d fields, want %d and %d", k, f, k0, f0)
		}
	})

	t.Run("revise", func(t *testing.T) {
		s := open(t, storeOpts{})
		insert(t, s, entry(p, "a", nil), entry(p, "b", nil))
		if err := recordVerdict(ctx, s, "a", []byte("unique")); err != nil {
			t.Fatal(err)
		}
		got, err := s.ReviseVerdicts(ctx, seqsOf(t, s, "a", "a", "b", "unknown"),
			[][]byte{[]byte("other"), []byte("unique"), nil, nil},
			[][]byte{[]byte("x"), []byte("dup"), []byte("dupb"), []byte("y")})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []bool{false, true, true, false}) {
			t.Errorf("ReviseVerdicts = %v, want [false true true false]", got)
		}
		v, err := s.Verdicts(ctx, seqsOf(t, s, "a", "b"))
		if err != nil || string(v[0]) != "dup" || string(v[1]) != "dupb" {
			t.Errorf("Verdicts = %q, %v; want dup, dupb", v, err)
		}
		// The first verdict recorded stays first-wins for RecordVerdict.
		if err := recordVerdict(ctx, s, "b", []byte("late")); err != nil {
			t.Fatal(err)
		}
		if r := insert(t, s, entry(p, "b", nil))[0]; !r.Replay || string(r.Verdict) != "dupb" {
			t.Errorf("replay of b: replay %v verdict %q, want dupb", r.Replay, r.Verdict)
		}
	})
}

// BenchmarkKeysRecordBytes measures what the keys records (what Remove
// needs) cost in Redis: the MEMORY USAGE of every f hash, which carries
// them (featKeys; the documents have no features, so the f records are
// framed keys records alone), per document, at 30 bands with an I-Match
// and a content digest (the web profile), with 0 and 50 anchors; the
// record bytes are those of the keys records. b.N is ignored: 20,000
// documents are stored once.
//
//	go test ./index/ -run '^$' -bench KeysRecordBytes -benchtime 1x
func BenchmarkKeysRecordBytes(b *testing.B) {
	addr := redistest.StartServer(b)
	p := Params{Hash: "fnv1a64+splitmix64/v1", K: 128, Bands: 30, Rows: 4, Shingle: 5, Seed: 1}
	for _, na := range []int{0, 50} {
		b.Run(fmt.Sprintf("anchors=%d", na), func(b *testing.B) {
			ns := fmt.Sprintf("kb%d", na)
			s := openRedis(b, RedisConfig{Addrs: []string{addr}, Namespace: ns, Params: p})
			const n = 20000
			docs := make([]Entry, 0, 500)
			for i := range n {
				id := fmt.Sprintf("https://example.org/page/%07d", i)
				e := full(entry(p, id, nil), 0, anchors(id, na)...)
				e.HasSimHash, e.Features = false, nil
				docs = append(docs, e)
				if len(docs) == cap(docs) {
					if _, err := s.LookupInsert(context.Background(), docs); err != nil {
						b.Fatal(err)
					}
					docs = docs[:0]
				}
			}
			c := redis.NewClient(&redis.Options{Addr: addr})
			defer c.Close()
			ctx := context.Background()
			keys, err := c.Keys(ctx, ns+":v8:{0}f*").Result()
			if err != nil {
				b.Fatal(err)
			}
			var total, raw int64
			for _, k := range keys {
				u, err := c.MemoryUsage(ctx, k, 0).Result()
				if err != nil {
					b.Fatal(err)
				}
				total += u
				vals, err := c.HVals(ctx, k).Result()
				if err != nil {
					b.Fatal(err)
				}
				for _, v := range vals {
					_, kr, _ := unframeFeatures([]byte(v))
					raw += int64(len(kr))
				}
			}
			b.ReportMetric(float64(total)/n, "redis-bytes/doc")
			b.ReportMetric(float64(raw)/n, "record-bytes/doc")
		})
	}
}

// checkGroupsRecord checks the version 4 keys record of e: it decodes to
// the groups of e's bands and the distinct groups of its anchors,
// computed here from the keys, with the digests of the version 3 record
// v3; it is smaller than v3; KeysRecordSizes splits it; damaged records
// are errors.
func checkGroupsRecord(t *testing.T, r *Redis, e *Entry, v3 []byte) {
	t.Helper()
	v4 := r.encodeKeys(e)
	if v4[0] != keysGroupsVersion {
		t.Fatalf("record version %d, want %d", v4[0], keysGroupsVersion)
	}
	got, err := r.decodeKeyOps(e.ID, v4)
	if err != nil {
		t.Fatal(err)
	}
	var bands, passage []uint64
	for _, k := range e.Bands {
		bands = append(bands, k>>(64-maxGroupBits))
	}
	for _, a := range e.Anchors {
		k := anchorKeys(nil, []uint64{a})[0]
		// The top 22 bits, below the field's top 6 bits.
		passage = append(passage, (k>>(fieldBits-passageSplitBits)&(1<<passageSplitBits-1))<<maxGroupBits|k>>(64-maxGroupBits))
	}
	slices.Sort(passage)
	passage = slices.Compact(passage)
	if !got.groups || !slices.Equal(got.bands, bands) || !slices.Equal(got.anchors, passage) {
		t.Errorf("version 4: groups %v %x %x, want %x %x", got.groups, got.bands, got.anchors, bands, passage)
	}
	old, err := r.decodeKeyOps(e.ID, v3)
	if err != nil {
		t.Fatal(err)
	}
	if old.groups || fmt.Sprint(got.e) != fmt.Sprint(old.e) {
		t.Errorf("version 4 entry %+v, version 3 %+v", got.e, old.e)
	}
	if len(v4) >= len(v3) {
		t.Errorf("version 4 record %d bytes, version 3 %d", len(v4), len(v3))
	}
	t.Logf("%d distinct passage groups: version 3 %d bytes, version 4 %d", len(passage), len(v3), len(v4))
	h, bk, d, a, err := KeysRecordSizes(v4, r.p.Bands)
	if err != nil || h != 3 || bk != (maxGroupBits*r.p.Bands+7)/8 || h+bk+d+a != len(v4) {
		t.Errorf("KeysRecordSizes of version 4: %d %d %d %d (%v), record %d bytes", h, bk, d, a, err, len(v4))
	}
	for cut := range len(v4) {
		if _, err := r.decodeKeyOps(e.ID, v4[:cut]); err == nil {
			t.Fatalf("version 4 record cut at %d of %d bytes decoded", cut, len(v4))
		}
		if _, _, _, _, err := KeysRecordSizes(v4[:cut], r.p.Bands); err == nil {
			t.Fatalf("KeysRecordSizes of a version 4 record cut at %d of %d bytes: no error", cut, len(v4))
		}
	}
	if _, err := r.decodeKeyOps(e.ID, append(slices.Clone(v4), 0)); err == nil {
		t.Errorf("version 4 record with a trailing byte decoded")
	}
	bad := slices.Clone(v4)
	bad[2]++
	if _, err := r.decodeKeyOps(e.ID, bad); err == nil {
		t.Errorf("version 4 record of another group width decoded")
	}
}

// TestKeyOpsRecord checks Redis's keys record (version 2): it decodes to
// the ops the version-1 record of the same entry gives, at the smallest,
// the default and the largest group counts, with and without the
// optional keys; it is smaller; and damaged records are errors, not
// panics.
func TestKeyOpsRecord(t *testing.T) {
	p := Params{Hash: "fnv1a64+splitmix64/v1", K: 128, Bands: 30, Rows: 4, Shingle: 5, Seed: 1, SimHashK: 3}
	for _, capacity := range []int{1, DefaultCapacity, 1 << 40} {
		r, err := newRedis(RedisConfig{Addrs: []string{"127.0.0.1:1"}, Params: p, Capacity: capacity})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for _, tt := range []struct {
			name    string
			e       Entry
			anchors int
		}{
			{"bands", entry(p, "a", nil), 0},
			{"all", full(entry(p, "b", nil), 0x0123456789abcdef, anchors("b", 50)...), 50},
			{"duplicate anchors", full(entry(p, "c", nil), 7, append(anchors("c", 3), anchors("c", 3)...)...), 3},
		} {
			t.Run(fmt.Sprintf("capacity=%d/%s", capacity, tt.name), func(t *testing.T) {
				v1, v2, v3 := encodeKeys(&tt.e), r.encodeKeysV2(&tt.e), r.encodeKeysV3(&tt.e)
				want, err := r.decodeKeyOps(tt.e.ID, v1)
				if err != nil {
					t.Fatal(err)
				}
				got, err := r.decodeKeyOps(tt.e.ID, v2)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.bands, want.bands) || !slices.Equal(got.anchors, want.anchors) || len(got.anchors) != tt.anchors {
					t.Errorf("ops %x %x, want %x %x", got.bands, got.anchors, want.bands, want.anchors)
				}
				want.e.Bands, want.e.Anchors = nil, nil
				if fmt.Sprint(got.e) != fmt.Sprint(want.e) {
					t.Errorf("entry %+v, want %+v", got.e, want.e)
				}
				packed, err := r.decodeKeyOps(tt.e.ID, v3)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(packed.bands, want.bands) || !slices.Equal(packed.anchors, slices.Sorted(slices.Values(want.anchors))) ||
					fmt.Sprint(packed.e) != fmt.Sprint(want.e) {
					t.Errorf("version 3: ops %x %x, want %x %x", packed.bands, packed.anchors, want.bands, want.anchors)
				}
				if len(v3) >= len(v2) {
					t.Errorf("version 3 record %d bytes, version 2 %d", len(v3), len(v2))
				}
				t.Logf("%d anchors: version 1 %d bytes, version 2 %d, version 3 %d", tt.anchors, len(v1), len(v2), len(v3))
				for ti, v := range got.bands {
					g, f := r.opOf(ti, v)
					if wg, wf := r.legacyOp(ti, tt.e.Bands[ti]); g != wg || f != wf {
						t.Errorf("band %d: op (%x, %x), want (%x, %x)", ti, g, f, wg, wf)
					}
				}
				digests := 0
				if tt.e.HasIMatch {
					digests = 8 + 20 + 16
				}
				for _, rec := range []struct {
					b []byte
					w int
				}{{v1, 8}, {v2, r.opsWidth()}, {v3, 0}} {
					h, bk, d, a, err := KeysRecordSizes(rec.b, p.Bands)
					wantB, wantA := rec.w*p.Bands, 1+rec.w*tt.anchors
					if rec.w == 0 {
						wantB = (r.opBits()*p.Bands + 7) / 8
						wantA = len(v3) - 3 - wantB - digests
					}
					if err != nil || h+bk+d+a != len(rec.b) || bk != wantB || d != digests || a != wantA {
						t.Errorf("KeysRecordSizes of version %d: %d %d %d %d (%v), record %d bytes", rec.b[0], h, bk, d, a, err, len(rec.b))
					}
					if _, _, _, _, err := KeysRecordSizes(rec.b[:len(rec.b)-1], p.Bands); err == nil {
						t.Errorf("KeysRecordSizes of a cut version %d record: no error", rec.b[0])
					}
				}
				if len(v2) >= len(v1) && r.opsWidth() < 8 {
					t.Errorf("version 2 record %d bytes, version 1 %d", len(v2), len(v1))
				}
				checkGroupsRecord(t, r, &tt.e, v3)
				for _, rec := range [][]byte{v2, v3} {
					for cut := range len(rec) {
						if _, err := r.decodeKeyOps(tt.e.ID, rec[:cut]); err == nil {
							t.Fatalf("version %d record cut at %d of %d bytes decoded", rec[0], cut, len(rec))
						}
					}
					if _, err := r.decodeKeyOps(tt.e.ID, append(slices.Clone(rec), 0)); err == nil && rec[0] == keysPackedVersion {
						t.Errorf("version %d record with a trailing byte decoded", rec[0])
					}
					bad := slices.Clone(rec)
					bad[2]++
					if _, err := r.decodeKeyOps(tt.e.ID, bad); err == nil {
						t.Errorf("version %d record of another op width decoded", rec[0])
					}
				}
			})
		}
	}
}

// footprint counts the entries the store holds, for tests: ids, bucket
// slots (one map and big map), lane entries, and live documents.
func (m *Memory) footprint() (n int) {
	m.genMu.RLock()
	defer m.genMu.RUnlock()
	for _, g := range m.gens {
		for s := range g.stripes {
			m.locks[s].Lock()
			gs := &g.stripes[s]
			n += len(gs.ids) + gs.one.len() + len(gs.imatch) + len(gs.copies)
			for f := range gs.big.keys {
				if _, ok := gs.one.get(f); !ok {
					n++ // a SimHash bucket
				}
			}
			m.locks[s].Unlock()
		}
	}
	return n
}
