package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// templater is what the template records give a store (templates.go).
type templater interface {
	Templates(ctx context.Context, ids []string) ([][]byte, error)
	RecordTemplates(ctx context.Context, ids []string, recs [][]byte) ([]bool, error)
}

// templates reads Templates or fails.
func templates(t *testing.T, s Store, ids ...string) [][]byte {
	t.Helper()
	got, err := s.(templater).Templates(context.Background(), ids)
	if err != nil {
		t.Fatalf("Templates(%v): %v", ids, err)
	}
	if len(got) != len(ids) {
		t.Fatalf("Templates(%v): %d records", ids, len(got))
	}
	return got
}

// runTemplates is the conformance suite's part for template records: what
// the first write records is what every later read returns, an unknown id
// has none, and a record goes and expires with its document.
func runTemplates(t *testing.T, _ backend, open func(*testing.T, storeOpts) Store) {
	p := testParams
	ctx := context.Background()
	rec := func(b ...byte) []byte { return b }

	t.Run("record-and-read", func(t *testing.T) {
		s := open(t, storeOpts{})
		var docs []Entry
		for i := range 40 { // more ids than one call's shard batch in cluster mode
			docs = append(docs, entry(p, fmt.Sprintf("t%d", i), nil))
		}
		insert(t, s, docs...)
		ids := []string{"t0", "nope", "t1", "t0"}
		recs := [][]byte{rec(1, 2, 3), rec(4), rec(5), rec(9)}
		for i := 2; i < 40; i++ {
			ids, recs = append(ids, fmt.Sprintf("t%d", i)), append(recs, rec(byte(i)))
		}
		stored, err := s.(templater).RecordTemplates(ctx, ids, recs)
		if err != nil {
			t.Fatal(err)
		}
		for i, ok := range stored {
			if ok != (ids[i] != "nope") {
				t.Errorf("stored[%d] (%s) = %v", i, ids[i], ok)
			}
		}
		if _, err := s.(templater).RecordTemplates(ctx, []string{"t1"}, [][]byte{rec(6)}); err != nil {
			t.Fatal(err)
		}
		got := templates(t, s, "t0", "t1", "t2", "t39", "nope")
		want := [][]byte{rec(1, 2, 3), rec(5), rec(2), rec(39), nil}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) || (want[i] == nil) != (got[i] == nil) {
				t.Errorf("Templates = %x, want %x (the first of two writes wins)", got, want)
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
			{"long", []string{"a"}, [][]byte{make([]byte, MaxTemplateBytes+1)}},
		} {
			if _, err := s.(templater).RecordTemplates(ctx, tt.ids, tt.recs); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: RecordTemplates = %v, want ErrInvalid", tt.name, err)
			}
		}
		if got := templates(t, s, "a"); got[0] != nil {
			t.Errorf("Templates(a) after invalid calls = %x, want none", got[0])
		}
	})

	t.Run("remove", func(t *testing.T) {
		s := open(t, storeOpts{})
		insert(t, s, entry(p, "y", nil))
		if _, err := s.(templater).RecordTemplates(ctx, []string{"y"}, [][]byte{rec(1)}); err != nil {
			t.Fatal(err)
		}
		k0, f0 := footprint(t, s)
		insert(t, s, entry(p, "x", nil))
		if _, err := s.(templater).RecordTemplates(ctx, []string{"x"}, [][]byte{rec(2, 3)}); err != nil {
			t.Fatal(err)
		}
		if removed, err := s.Remove(ctx, []string{"x"}); err != nil || !removed[0] {
			t.Fatalf("Remove(x) = %v, %v", removed, err)
		}
		if k, f := footprint(t, s); k != k0 || f != f0 {
			t.Errorf("after Remove(x): %d keys %d fields, want %d and %d as before x", k, f, k0, f0)
		}
		insert(t, s, entry(p, "x", nil))
		if got := templates(t, s, "x", "y"); got[0] != nil || !bytes.Equal(got[1], rec(1)) {
			t.Errorf("Templates(x inserted again, y) = %x, want none and %x", got, rec(1))
		}
	})

	t.Run("retention", func(t *testing.T) {
		clk := newFakeClock()
		s := open(t, storeOpts{retention: 10 * time.Second, generation: 5 * time.Second, refresh: true, clock: clk.Now})
		a, c := entry(p, "a", nil), entry(p, "c", nil)
		insert(t, s, a, c)
		if _, err := s.(templater).RecordTemplates(ctx, []string{"a", "c"}, [][]byte{rec(1), rec(2)}); err != nil {
			t.Fatal(err)
		}
		clk.Advance(9 * time.Second)
		wantCands(t, "b at +9s", insert(t, s, entry(p, "b", map[int]uint64{0: a.Bands[0]}))[0], "a/lsh")
		clk.Advance(8 * time.Second) // +17 s: a lives on thanks to b's match, c is gone
		if got := templates(t, s, "a", "c"); !bytes.Equal(got[0], rec(1)) || got[1] != nil {
			t.Errorf("Templates(a, c) at +17s = %x, want %x and none", got, rec(1))
		}
	})

	t.Run("read-only", func(t *testing.T) {
		s := open(t, storeOpts{})
		insert(t, s, entry(p, "a", nil))
		ro := ReadOnly(s)
		if stored, err := ro.(templater).RecordTemplates(ctx, []string{"a"}, [][]byte{rec(1)}); err != nil || !stored[0] {
			t.Fatalf("read-only RecordTemplates = %v, %v", stored, err)
		}
		if got := templates(t, ro, "a"); got[0] != nil {
			t.Errorf("a read-only store recorded %x", got[0])
		}
	})
}
