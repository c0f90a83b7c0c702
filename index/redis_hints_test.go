package index

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index/redistest"
)

func TestBucketHintsSeen(t *testing.T) {
	h := newBucketHints()
	type op struct {
		gen  int64
		t    int
		g    uint64
		f    uint32
		mark bool
		want bool // seen before the mark
	}
	for _, tc := range []struct {
		name string
		ops  []op
	}{
		{"marked once", []op{{1, 0, 5, 9, true, false}, {1, 0, 5, 9, false, true}}},
		{"not marked", []op{{1, 0, 6, 9, false, false}, {1, 0, 6, 9, false, false}}},
		{"other table", []op{{1, 0, 7, 9, true, false}, {1, 1, 7, 9, false, false}}},
		{"other field", []op{{1, 0, 8, 9, true, false}, {1, 0, 8, 10, false, false}}},
		{"other group", []op{{1, 0, 9, 9, true, false}, {1, 0, 10, 9, false, false}}},
		{"next generation", []op{{1, 0, 11, 9, true, false}, {2, 0, 11, 9, false, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, o := range tc.ops {
				s := h.slot(o.gen, o.t, o.g, o.f)
				if s.tag == 0 {
					t.Fatalf("op %d: tag 0 (the empty slot's)", i)
				}
				if got := h.seen(s); got != o.want {
					t.Errorf("op %d: seen = %v, want %v", i, got, o.want)
				}
				if o.mark {
					h.mark(s)
				}
			}
		})
	}
}

// TestHintRoundMarksDecided: a round hints the ops of documents it has
// already sent, and marks in the store's table only the documents decided.
func TestHintRoundMarksDecided(t *testing.T) {
	r := &Redis{p: webParams}
	hr := &hintRound{h: newBucketHints(), gen: 3, round: map[hintSlot]struct{}{}}
	var b []byte
	b = r.appendHint(b, hr, 0, 1<<63|5) // document 0
	hr.endDoc()
	b = r.appendHint(b, hr, 0, 1<<63|5) // document 1: document 0's bucket
	b = r.appendHint(b, hr, 1, 1<<63|5)
	hr.endDoc()
	b = r.appendHint(b, hr, 2, 7) // document 2
	hr.endDoc()
	if string(b) != "0100" {
		t.Fatalf("hints %q, want 0100", b)
	}
	hr.done(0, 2) // document 2 was left for another round
	next := &hintRound{h: hr.h, gen: 3, round: map[hintSlot]struct{}{}}
	var c []byte
	for _, op := range []struct {
		t   int
		key uint64
	}{{0, 1<<63 | 5}, {1, 1<<63 | 5}, {2, 7}} {
		c = r.appendHint(c, next, op.t, op.key)
	}
	if string(c) != "110" {
		t.Errorf("next round's hints %q, want 110 (documents 0 and 1 decided, 2 not)", c)
	}
	look := &hintRound{}
	if d := r.appendHint(nil, look, 0, 1<<63|5); string(d) != "0" {
		t.Errorf("look-up hint %q, want 0", d)
	}
}

// TestBucketHintsResults: the same stream of near copies into two
// namespaces of one redis-server, one store with hints and one without,
// gives the same results, and with hints fewer bucket commands.
func TestBucketHintsResults(t *testing.T) {
	addr := redistest.StartServer(t)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx := context.Background()
	var docs []Entry
	for i := range 120 {
		orig := fmt.Sprintf("o%d", i)
		docs = append(docs, withAnchors(entry(webParams, orig, nil), anchors(orig, 20)...))
		for j := range 3 { // near copies: most bands and anchors shared
			e := entry(webParams, fmt.Sprintf("o%d-c%d", i, j), nil)
			for b := range e.Bands {
				if (b+j)%5 != 0 {
					e.Bands[b] = docs[len(docs)-1-j].Bands[b]
				}
			}
			a := anchors(orig, 20)
			a[j] = key(e.ID, 99)
			docs = append(docs, withAnchors(e, a...))
		}
	}
	bucketCmds := func() int {
		info := c.Info(ctx, "commandstats").Val()
		n := 0
		for _, l := range strings.Split(info, "\r\n") {
			for _, cmd := range []string{"cmdstat_hget:", "cmdstat_hset:", "cmdstat_hsetnx:"} {
				if rest, ok := strings.CutPrefix(l, cmd+"calls="); ok {
					v, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
					n += v
				}
			}
		}
		return n
	}
	var results [2][]Result
	var cmds [2]int
	for i, noHints := range []bool{true, false} {
		s := openRedis(t, RedisConfig{Addrs: []string{addr}, Namespace: fmt.Sprint("hints", i), Params: webParams, Capacity: 4096})
		s.noHints = noHints
		if err := c.ConfigResetStat(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		for lo := 0; lo < len(docs); lo += 16 {
			res, err := s.LookupInsert(ctx, docs[lo:min(lo+16, len(docs))])
			if err != nil {
				t.Fatal(err)
			}
			results[i] = append(results[i], res...)
		}
		cmds[i] = bucketCmds()
	}
	if !reflect.DeepEqual(results[0], results[1]) {
		for i := range results[0] {
			if !reflect.DeepEqual(results[0][i], results[1][i]) {
				t.Fatalf("document %d (%s): without hints %+v, with hints %+v", i, docs[i].ID, results[0][i], results[1][i])
			}
		}
	}
	dups := 0
	for _, res := range results[1] {
		if len(res.Candidates) > 0 {
			dups++
		}
	}
	if dups < len(docs)/2 {
		t.Fatalf("%d of %d documents have candidates: the stream does not test existing buckets", dups, len(docs))
	}
	t.Logf("HGET+HSET+HSETNX: %d without hints, %d with (%d documents)", cmds[0], cmds[1], len(docs))
	if cmds[1] >= cmds[0] {
		t.Errorf("with hints %d bucket commands, without %d: want fewer", cmds[1], cmds[0])
	}
}
