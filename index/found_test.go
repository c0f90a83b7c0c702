package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// foundRecords is one kind of found record (found.go) as the conformance
// suite's shared part sees it.
type foundRecords struct {
	name string // "sources", "templates"
	kind string // the Redis record hash kind
	// rec returns a record found by by whose body holds vals (sorted,
	// distinct).
	rec    func(by uint64, vals ...uint32) []byte
	read   func(ctx context.Context, s Store, seqs []uint64) ([][]byte, error)
	record func(ctx context.Context, s Store, seqs []uint64, recs [][]byte) ([]bool, error)
	// invalid are records of the kind that a write refuses.
	invalid map[string][]byte
}

var sourceRecords = foundRecords{
	name: "sources", kind: "s",
	rec:  func(by uint64, vals ...uint32) []byte { return AppendSource(nil, by, vals) },
	read: func(ctx context.Context, s Store, seqs []uint64) ([][]byte, error) { return s.Sources(ctx, seqs) },
	record: func(ctx context.Context, s Store, seqs []uint64, r [][]byte) ([]bool, error) {
		return s.RecordSources(ctx, seqs, r)
	},
	invalid: map[string][]byte{
		"torn":     {0, 0, 0, 0, 0, 1, 1, 2, 3},
		"unsorted": AppendSource(nil, 1, []uint32{3, 2}),
		"long":     make([]byte, MaxSourceBytes+4),
	},
}

var templateRecords = foundRecords{
	name: "templates", kind: "t",
	rec: func(by uint64, vals ...uint32) []byte {
		var body []byte
		for _, v := range vals {
			body = binary.BigEndian.AppendUint32(body, v)
		}
		return AppendTemplate(nil, by, body)
	},
	read: func(ctx context.Context, s Store, seqs []uint64) ([][]byte, error) { return s.Templates(ctx, seqs) },
	record: func(ctx context.Context, s Store, seqs []uint64, r [][]byte) ([]bool, error) {
		return s.RecordTemplates(ctx, seqs, r)
	},
	invalid: map[string][]byte{
		"long": AppendTemplate(nil, 1, make([]byte, MaxTemplateBytes)),
	},
}

// readFound reads records of kind k of ids or fails.
func (k foundRecords) readIDs(t *testing.T, s Store, ids ...string) [][]byte {
	t.Helper()
	got, err := k.read(context.Background(), s, seqsOf(t, s, ids...))
	if err != nil {
		t.Fatalf("%s(%v): %v", k.name, ids, err)
	}
	if len(got) != len(ids) {
		t.Fatalf("%s(%v): %d records", k.name, ids, len(got))
	}
	return got
}

// recordIDs writes records of kind k for ids or fails.
func (k foundRecords) recordIDs(t *testing.T, s Store, ids []string, recs ...[]byte) []bool {
	t.Helper()
	stored, err := k.record(context.Background(), s, seqsOf(t, s, ids...), recs)
	if err != nil {
		t.Fatalf("record %s(%v): %v", k.name, ids, err)
	}
	return stored
}

// sameRecords reports whether got is want, nil (not stored) and empty (no
// record) told apart.
func sameRecords(got, want [][]byte) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) || (want[i] == nil) != (got[i] == nil) {
			return false
		}
	}
	return true
}

// runFound is the conformance suite's part shared by source and template
// records: the lower finder's record is kept whatever the order of the
// writes, invalid records are refused, a record goes and expires with its
// document, and a read-only store records nothing.
func runFound(t *testing.T, k foundRecords, open func(*testing.T, storeOpts) Store) {
	p := testParams
	ctx := context.Background()
	r1 := func(vals ...uint32) []byte { return k.rec(1, vals...) }

	t.Run("record-and-read", func(t *testing.T) {
		s := open(t, storeOpts{})
		var docs []Entry
		for i := range 40 { // more ids than one call's shard batch in cluster mode
			docs = append(docs, entry(p, fmt.Sprintf("s%d", i), nil))
		}
		insert(t, s, docs...)
		ids := []string{"s0", "nope", "s1", "s0"}
		recs := [][]byte{r1(1, 2, 3), r1(4), r1(5), r1(9)}
		for i := 2; i < 40; i++ {
			ids, recs = append(ids, fmt.Sprintf("s%d", i)), append(recs, r1(uint32(i)))
		}
		for i, ok := range k.recordIDs(t, s, ids, recs...) {
			if ok != (ids[i] != "nope") {
				t.Errorf("stored[%d] (%s) = %v", i, ids[i], ok)
			}
		}
		// A replay of the batch changes nothing: of two records of one
		// finder the first wins; a later finder's record is not kept, an
		// earlier finder's replaces what a later one wrote.
		k.recordIDs(t, s, []string{"s1", "s0", "s2"}, r1(6), r1(7), k.rec(2, 8))
		insert(t, s, entry(p, "t0", nil), entry(p, "t1", nil))
		k.recordIDs(t, s, []string{"t0"}, k.rec(2, 10))
		k.recordIDs(t, s, []string{"t0", "t1", "t1"}, k.rec(1, 9), k.rec(5, 11), k.rec(4, 12))
		got := k.readIDs(t, s, "s0", "s1", "s2", "s39", "nope", "t0", "t1")
		want := [][]byte{r1(1, 2, 3), r1(5), r1(2), r1(39), nil, k.rec(1, 9), k.rec(4, 12)}
		if !sameRecords(got, want) {
			t.Errorf("%s = %x, want %x (the earliest finder's record, the first of one finder's)", k.name, got, want)
		}
	})

	t.Run("invalid", func(t *testing.T) {
		s := open(t, storeOpts{})
		insert(t, s, entry(p, "a", nil))
		seqs := seqsOf(t, s, "a")
		cases := map[string][][]byte{
			"count":       nil,
			"empty":       {{}},
			"finder only": {appendFinder(nil, 1)},
			"no finder":   {append(appendFinder(nil, 0), r1(5)[finderBytes:]...)},
		}
		for name, rec := range k.invalid {
			cases[name] = [][]byte{rec}
		}
		for name, recs := range cases {
			if _, err := k.record(ctx, s, seqs, recs); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: record %s = %v, want ErrInvalid", name, k.name, err)
			}
		}
		if got := k.readIDs(t, s, "a"); got[0] == nil || len(got[0]) != 0 {
			t.Errorf("%s(a) after invalid calls = %x, want none (empty)", k.name, got[0])
		}
	})

	t.Run("remove", func(t *testing.T) {
		// A record goes with its document: Remove leaves no field of it,
		// and the id inserted again has none.
		s := open(t, storeOpts{})
		insert(t, s, entry(p, "y", nil))
		k.recordIDs(t, s, []string{"y"}, r1(1))
		k0, f0 := footprint(t, s)
		insert(t, s, entry(p, "x", nil))
		k.recordIDs(t, s, []string{"x"}, r1(2, 3))
		if removed, err := s.Remove(ctx, []string{"x"}); err != nil || !removed[0] {
			t.Fatalf("Remove(x) = %v, %v", removed, err)
		}
		if k, f := footprint(t, s); k != k0 || f != f0 {
			t.Errorf("after Remove(x): %d keys %d fields, want %d and %d as before x", k, f, k0, f0)
		}
		insert(t, s, entry(p, "x", nil))
		if got := k.readIDs(t, s, "x", "y"); !sameRecords(got, [][]byte{{}, r1(1)}) {
			t.Errorf("%s(x inserted again, y) = %x, want none and %x", k.name, got, r1(1))
		}
	})

	t.Run("retention", func(t *testing.T) {
		// A record lives as long as its document: carried along when a
		// match refreshes it, gone when it expires.
		clk := newFakeClock()
		s := open(t, storeOpts{retention: 10 * time.Second, generation: 5 * time.Second, refresh: true, clock: clk.Now})
		a, c := entry(p, "a", nil), entry(p, "c", nil)
		insert(t, s, a, c)
		k.recordIDs(t, s, []string{"a", "c"}, r1(1), r1(2))
		checkRecordExpiry(t, s, k.kind)
		clk.Advance(9 * time.Second)
		wantCands(t, "b at +9s", insert(t, s, entry(p, "b", map[int]uint64{0: a.Bands[0]}))[0], "a/lsh")
		checkRecordExpiry(t, s, k.kind)
		clk.Advance(8 * time.Second) // +17 s: a lives on thanks to b's match, c is gone
		if got := k.readIDs(t, s, "a", "c"); !bytes.Equal(got[0], r1(1)) || got[1] != nil {
			t.Errorf("%s(a, c) at +17s = %x, want %x and none", k.name, got, r1(1))
		}
	})

	t.Run("read-only", func(t *testing.T) {
		s := open(t, storeOpts{})
		insert(t, s, entry(p, "a", nil))
		ro := ReadOnly(s)
		if stored := k.recordIDs(t, ro, []string{"a"}, r1(1)); !stored[0] {
			t.Fatalf("read-only record %s = %v", k.name, stored)
		}
		if _, err := k.record(ctx, ro, seqsOf(t, s, "a"), [][]byte{{}}); !errors.Is(err, ErrInvalid) {
			t.Errorf("read-only record %s of an empty record = %v, want ErrInvalid", k.name, err)
		}
		if got := k.readIDs(t, ro, "a"); got[0] == nil || len(got[0]) != 0 {
			t.Errorf("a read-only store recorded %x", got[0])
		}
	})
}

// checkRecordExpiry checks, on Redis, that every record hash of kind
// expires with its documents' meta records: it is given the expiry of the
// meta record hash of the same seqs.
func checkRecordExpiry(t *testing.T, s Store, kind string) {
	t.Helper()
	r, ok := s.(*Redis)
	if !ok {
		return
	}
	ctx := context.Background()
	var mu sync.Mutex
	var keys []string
	scan := func(c redis.Cmdable) error {
		ks, err := c.Keys(ctx, r.ns+":*}"+kind+"*").Result()
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
		t.Fatalf("no record hash of kind %q stored", kind)
	}
	for _, k := range keys {
		i := strings.LastIndex(k, "}"+kind)
		m := k[:i] + "}m" + k[i+2:]
		se, err1 := r.c.ExpireTime(ctx, k).Result()
		me, err2 := r.c.ExpireTime(ctx, m).Result()
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		// A record hash holds up to 64 documents of its shard: the meta
		// records' hash may outlive this kind's for a later document that
		// recorded none, never the other way round.
		if se <= 0 || se > me {
			t.Errorf("%s expires at %v, its meta records %s at %v", k, se, m, me)
		}
	}
}
