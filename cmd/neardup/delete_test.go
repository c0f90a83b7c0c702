package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index/redistest"
)

// neardup delete removes a document from a Redis index: the index holds
// what it held before the document was stored (DBSIZE and every hash's
// length, the clock hash aside), deleting again says not found, and the
// document scanned again is new (unique, not a replay); the same from
// --from with JSON lines and plain lines; usage mistakes exit 2. On a
// single node and on a 3-master cluster.
func TestDeleteFromCLI(t *testing.T) {
	t.Run("redis", func(t *testing.T) {
		addr := redistest.StartServer(t)
		testDeleteFromCLI(t, "redis://"+addr+"/0?namespace=del", []string{addr})
	})
	t.Run("cluster", func(t *testing.T) {
		addrs := redistest.StartCluster(t)
		testDeleteFromCLI(t, "redis+cluster://"+strings.Join(addrs, ",")+"?namespace=del", addrs)
	})
}

func testDeleteFromCLI(t *testing.T, ix string, addrs []string) {
	dir := t.TempDir()
	copyTexts(t, dir, "pg15.txt", "pg2701.txt", "pg11.txt")
	// pg15 and pg2701 are two editions of Moby Dick; pg11 is Alice.
	moby, moby2, alice := filepath.Join(dir, "pg15.txt"), filepath.Join(dir, "pg2701.txt"), filepath.Join(dir, "pg11.txt")
	ctx := context.Background()
	// DBSIZE and the fields of every hash but the clock hashes (namespace
	// fingerprint, generation, seq counter), summed over the masters.
	state := func() [2]int {
		t.Helper()
		var st [2]int
		for _, a := range addrs {
			c := redis.NewClient(&redis.Options{Addr: a})
			n, err := c.DBSize(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			keys, err := c.Keys(ctx, "*").Result()
			if err != nil {
				t.Fatal(err)
			}
			st[0] += int(n)
			for _, k := range keys {
				if strings.HasSuffix(k, "}c") {
					continue
				}
				l, err := c.HLen(ctx, k).Result()
				if err != nil {
					t.Fatal(err)
				}
				st[1] += int(l)
			}
			c.Close()
		}
		return st
	}
	scan := func(path string) event {
		t.Helper()
		code, out, errOut := neardup(t, "scan", "--emit", "all", "--index", ix, path)
		if code != 0 {
			t.Fatalf("scan %s: exit %d: %s", path, code, errOut)
		}
		evs := events(t, out)
		if len(evs) != 1 {
			t.Fatalf("scan %s: %d events", path, len(evs))
		}
		return evs[0]
	}
	type line struct {
		ID       string `json:"id"`
		Kind     string `json:"kind"`
		NotFound bool   `json:"not_found"`
	}
	del := func(args ...string) []line {
		t.Helper()
		code, out, errOut := neardup(t, append([]string{"delete", "--index", ix}, args...)...)
		if code != 0 {
			t.Fatalf("delete %v: exit %d: %s", args, code, errOut)
		}
		var lines []line
		for _, s := range strings.Split(strings.TrimSpace(out), "\n") {
			var l line
			if err := json.Unmarshal([]byte(s), &l); err != nil {
				t.Fatalf("delete output %q: %v", s, err)
			}
			lines = append(lines, l)
		}
		return lines
	}

	scan(alice)
	s0 := state()
	if ev := scan(moby); ev.Kind != "unique" {
		t.Fatalf("moby: %+v", ev)
	}
	s1 := state()
	if got := del(moby); len(got) != 1 || got[0] != (line{moby, "deleted", false}) {
		t.Errorf("delete moby: %+v", got)
	}
	if s := state(); s != s0 {
		t.Errorf("after delete: dbsize, fields %v; before moby %v, with it %v", s, s0, s1)
	} else {
		t.Logf("dbsize, fields: before moby %v, with it %v, after delete %v", s0, s1, s)
	}
	if got := del(moby); len(got) != 1 || !got[0].NotFound {
		t.Errorf("delete moby again: %+v, want not_found", got)
	}
	// The other edition is unique now; moby scanned again is new and
	// finds it.
	if ev := scan(moby2); ev.Kind != "unique" {
		t.Errorf("other edition after the delete: %+v, want unique", ev)
	}
	if ev := scan(moby); ev.Kind == "unique" || ev.DuplicateOf != moby2 {
		t.Errorf("moby again: %+v, want a duplicate of %s", ev, moby2)
	}
	// --from: JSON lines and plain lines, blank lines skipped.
	list := filepath.Join(t.TempDir(), "ids")
	j, _ := json.Marshal(map[string]string{"id": moby})
	if err := os.WriteFile(list, []byte(string(j)+"\n\n"+moby2+"\nnever-stored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := del("--from", list)
	want := []line{{moby, "deleted", false}, {moby2, "deleted", false}, {"never-stored", "deleted", true}}
	if len(got) != len(want) {
		t.Fatalf("delete --from: %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("delete --from line %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if s := state(); s != s0 {
		t.Errorf("after delete --from: dbsize, fields %v, want %v", s, s0)
	}
	for _, args := range [][]string{
		{"delete", "--index", ix},
		{"delete", "--index", "memory", "x"},
		{"delete", "--index", "memory://", "x"},
		{"delete", "--index", ix, "--from", filepath.Join(dir, "missing")},
		{"delete", "--index", ix, ""},
	} {
		if code, _, _ := neardup(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}
