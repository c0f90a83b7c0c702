package index

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/sketch"
)

// update rewrites the golden files of this package:
//
//	go test ./index -run Golden -update
var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestKeysRecordGolden pins the keys records byte for byte: Redis's
// (version 4, keysGroupsVersion: the groups of the document's buckets)
// and the memory store's (version 1: the keys themselves), of fixed
// entries at the web profile's 30 bands, with and without the SimHash,
// I-Match and content digests and passage anchors. The bytes must be
// those of testdata/keys-records.golden and decode to the entries' keys;
// a change of the layout that keeps the version fails here.
func TestKeysRecordGolden(t *testing.T) {
	r, err := newRedis(RedisConfig{Addrs: []string{"127.0.0.1:1"}, Params: webParams})
	if err != nil {
		t.Fatal(err)
	}
	defer r.c.Close()
	mk := func(id string, sim, digests bool, anchors int) Entry {
		e := entry(webParams, id, nil)
		if sim {
			e.SimHash, e.HasSimHash = sketch.Mix64(uint64(len(id))), true
		}
		if digests {
			for i := range e.IMatch {
				e.IMatch[i] = byte(i*7 + 1)
			}
			for i := range e.Content {
				e.Content[i] = byte(i*11 + 3)
			}
			e.HasIMatch, e.HasContent = true, true
		}
		for i := range anchors {
			e.Anchors = append(e.Anchors, key(id+"/golden-anchor", i))
		}
		return e
	}
	entries := []Entry{
		mk("bands-only", false, false, 0),
		mk("digests", true, true, 0),
		mk("anchors", false, false, 50),
		mk("everything", true, true, 50),
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "# keys records at %d bands: Redis version %d (keysGroupsVersion), memory version %d (keysVersion); the bytes in hex\n",
		webParams.Bands, keysGroupsVersion, keysVersion)
	for _, e := range entries {
		for _, rec := range []struct {
			kind string
			b    []byte
		}{{"redis", r.encodeKeys(&e)}, {"memory", encodeKeys(&e)}} {
			k, err := r.decodeKeyOps(e.ID, rec.b)
			if err != nil {
				t.Fatalf("%s %s: %v", rec.kind, e.ID, err)
			}
			if k.e.HasSimHash != e.HasSimHash || k.e.SimHash != e.SimHash || k.e.IMatch != e.IMatch || k.e.Content != e.Content || len(k.bands) != len(e.Bands) {
				t.Errorf("%s %s: decodes to other digests or bands", rec.kind, e.ID)
			}
			if rec.kind == "redis" {
				for i, g := range k.bands {
					if want, _ := r.bucketOp(i, e.Bands[i]); g != want {
						t.Errorf("redis %s: band %d decodes to group %x, want %x", e.ID, i, g, want)
					}
				}
				var groups []uint64
				for _, a := range anchorKeys(nil, e.Anchors) {
					g, _ := r.bucketOp(r.p.passageTable(), a)
					groups = append(groups, g)
				}
				slices.Sort(groups)
				if !slices.Equal(k.anchors, slices.Compact(groups)) {
					t.Errorf("redis %s: decodes to other passage groups", e.ID)
				}
			}
			fmt.Fprintf(&out, "== %s %s %d bytes\n", rec.kind, e.ID, len(rec.b))
			h := hex.EncodeToString(rec.b)
			for len(h) > 0 {
				n := min(len(h), 96)
				out.WriteString(h[:n] + "\n")
				h = h[n:]
			}
		}
	}
	// An exact copy's record: its content digest alone (flags 4|8), as
	// the lookup script writes it (Redis) and the memory store does.
	cp := mk("exact-copy", false, true, 0)
	for _, rec := range []struct {
		kind string
		b    []byte
	}{{"redis", append(append([]byte{keysGroupsVersion, 4 | laneOnly, maxGroupBits}, cp.Content[:]...), 0)}, {"memory", encodeLaneKeys(&cp)}} {
		k, err := r.decodeKeyOps(cp.ID, rec.b)
		if err != nil {
			t.Fatalf("%s lane-only record: %v", rec.kind, err)
		}
		if len(k.bands) != 0 || len(k.anchors) != 0 || !k.e.HasContent || k.e.Content != cp.Content || k.e.HasIMatch || k.e.HasSimHash {
			t.Errorf("%s lane-only record decodes to %+v", rec.kind, k)
		}
		fmt.Fprintf(&out, "== %s %s (lane only) %d bytes\n%s\n", rec.kind, cp.ID, len(rec.b), hex.EncodeToString(rec.b))
	}
	path := "testdata/keys-records.golden"
	if *update {
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./index -run Golden -update writes it)", err)
	}
	if got := out.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs from what this build writes, first at line %d:\nwrites: %s\ngolden: %s\n(a layout change needs a new keys record version; -update only once it has one)", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs: %d lines, golden %d", path, len(gl), len(wl))
	}
}
