package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

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

	runFound(t, sourceRecords, open) // found_test.go

	t.Run("with-candidates", func(t *testing.T) {
		// A candidate's source record comes with the lookup (memory and a
		// single node) when the entry has common anchors; Redis Cluster
		// leaves it to Sources.
		s := open(t, storeOpts{commonDocs: 2})
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

}
