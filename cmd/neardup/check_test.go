package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index/redistest"
)

// neardup check gives the verdict scan would give a document, against
// Redis and against a memory index seeded with --from, and leaves Redis
// as it was: the same keys and not one write.
func TestCheckLeavesRedisAlone(t *testing.T) {
	// One edition of each work is stored; the other is checked.
	stored, checked := t.TempDir(), t.TempDir()
	copyTexts(t, stored, "pg15.txt", "pg11.txt", "pg1342.txt")
	copyTexts(t, checked, "pg2701.txt", "pg28885.txt", "pg42671.txt")
	// What scan says of the checked files after the stored ones.
	code, out, errOut := neardup(t, "scan", "--emit", "all", stored, checked)
	if code != 0 {
		t.Fatalf("scan: exit %d: %s", code, errOut)
	}
	want := map[string]string{}
	for _, ev := range events(t, out) {
		if filepath.Dir(ev.ID) == checked {
			want[filepath.Base(ev.ID)] = ev.Kind + " of " + filepath.Base(ev.DuplicateOf)
		}
	}
	if len(want) != 3 {
		t.Fatalf("scan: %d events for the checked files", len(want))
	}

	addr := redistest.StartServer(t)
	ix := "redis://" + addr + "/0?namespace=check"
	if code, _, errOut := neardup(t, "scan", "--index", ix, stored); code != 0 {
		t.Fatalf("scan into Redis: exit %d: %s", code, errOut)
	}
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	state := func() (int64, string) {
		n, err := c.DBSize(context.Background()).Result()
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Info(context.Background(), "persistence").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "rdb_changes_since_last_save:"); ok {
				return n, v
			}
		}
		t.Fatal("no rdb_changes_since_last_save in INFO")
		return 0, ""
	}
	keys0, writes0 := state()
	for _, run := range [][]string{
		{"check", "--index", ix, checked},
		{"check", "--from", stored, checked},
	} {
		code, out, errOut := neardup(t, run...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", run, code, errOut)
		}
		got := map[string]string{}
		for _, ev := range events(t, out) {
			got[filepath.Base(ev.ID)] = ev.Kind + " of " + filepath.Base(ev.DuplicateOf)
		}
		for f, w := range want {
			if got[f] != w {
				t.Errorf("%v: %s is %q, scan says %q", run, f, got[f], w)
			}
		}
		if !strings.Contains(out, `"not_stored":true`) || !strings.Contains(errOut, "not stored") {
			t.Errorf("%v: the output does not say the documents were not stored:\n%s\n%s", run, out, errOut)
		}
	}
	if keys1, writes1 := state(); keys1 != keys0 || writes1 != writes0 {
		t.Errorf("after check: %d keys, %s writes since the last save; before: %d keys, %s", keys1, writes1, keys0, writes0)
	}
	if code, _, _ := neardup(t, "check", "--index", ix); code != 2 {
		t.Errorf("check with no PATH: exit %d, want 2", code)
	}
}
