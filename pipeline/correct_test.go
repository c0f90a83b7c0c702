package pipeline

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/synth"
)

// On a real 3-master Redis Cluster, a correction is recorded (issue 24).
// The order that makes one is produced deterministically, as a member
// that fails half-way produces it: the first attempt at `early` registers
// its id and records and then fails before its bucket entries (its
// connection's ACL user may not touch bucket keys); `later`, a near
// duplicate, is then admitted and, finding nothing, is unique; `early`
// read again is a replay without a verdict, decided again, and finds
// `later`, a document with a higher Seq: a correction. A replay of
// `later` must then return the correction, not unique (before, it said
// unique again).
func TestClusterCorrectionsRecorded(t *testing.T) {
	addrs := redistest.StartCluster(t)
	ctx := context.Background()
	const ns = "corr"
	// A user that may touch the clock, ids, records and lanes, and no
	// bucket key ("<ns>:v<SchemaVersion>:{tag}b…"), on every master.
	v := ns + ":v" + strconv.Itoa(index.SchemaVersion) + ":{*}"
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		err := c.Do(ctx, "ACL", "SETUSER", "halfway", "on", ">pw", "+@all", "resetkeys",
			"~"+v+"c", "~"+v+"i*", "~"+v+"m*", "~"+v+"f*", "~"+v+"k*",
			"~"+v+"v*", "~"+v+"e*", "~"+v+"l*").Err()
		c.Close()
		if err != nil {
			t.Fatalf("ACL SETUSER on %s: %v", a, err)
		}
	}
	cfg := testConfig(t, "web")
	probe, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	open := func(user string) index.Store {
		ix, err := index.Open(ctx, "redis+cluster://"+user+strings.Join(addrs, ","), index.Options{Params: probe.IndexParams(), Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	g := synth.NewGenerator(17, 5000)
	text := g.Text(g.Words(400))
	early := Item{Doc: Document{ID: "early", Text: []byte(text)}}
	later := Item{Doc: Document{ID: "later", Text: []byte(text + " " + g.Text(g.Words(20)))}}

	// 1. early's first attempt fails after registering.
	pl, err := New(cfg, open("halfway:pw@"))
	if err != nil {
		t.Fatal(err)
	}
	in, out := make(chan Item, 1), make(chan Output, 1)
	in <- early
	close(in)
	if err := pl.Run(ctx, in, out); err == nil || !strings.Contains(err.Error(), "can't access") {
		t.Fatalf("early's first attempt: %v, want a failure to access the bucket keys", err)
	}
	ix := open("")
	probe, perr := New(cfg, nil)
	if perr != nil {
		t.Fatal(perr)
	}
	if v, err := ix.Verdicts(ctx, storedSeqs(t, ix, probe.IndexParams(), "early")); err != nil || len(v[0]) != 0 {
		t.Fatalf("early after its failed attempt: verdict %q, %v; want none", v, err)
	}
	// 2. later finds nothing.
	if ev := run(t, cfg, func(*Pipeline) index.Store { return ix }, []Item{later})[0].Event; ev == nil || ev.Kind != KindUnique {
		t.Fatalf("later: %+v, want unique", ev)
	}
	// 3. early again finds later: a correction.
	o := run(t, cfg, func(*Pipeline) index.Store { return ix }, []Item{early})[0]
	if o.Event == nil || o.Event.Kind != KindUnique || len(o.Corrections) != 1 {
		t.Fatalf("early again: %+v, %d corrections; want unique with a correction", o.Event, len(o.Corrections))
	}
	c := o.Corrections[0]
	if c.ID != "later" || c.DuplicateOf != "early" || c.Kind == KindUnique {
		t.Fatalf("correction %+v, want later a duplicate of early", c)
	}
	// 4. later replayed returns the correction.
	ev := run(t, cfg, func(*Pipeline) index.Store { return ix }, []Item{later})[0].Event
	if ev == nil || !ev.Replay || ev.Kind != c.Kind || ev.DuplicateOf != "early" || ev.Cluster != "early" {
		t.Errorf("later replayed: %+v; want the recorded correction: %s of early, cluster early", ev, c.Kind)
	}
}
