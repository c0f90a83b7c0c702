package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/kafkatest"
	"github.com/neardup/neardup/internal/synth"
)

// redisTarget is a Redis index for a check test: a single node or a
// three-master cluster, its URL and a client per master.
type redisTarget struct {
	name    string
	url     string
	masters []*redis.Client
}

func startTargets(t *testing.T, ns string) []redisTarget {
	t.Helper()
	node := redistest.StartServer(t)
	cl := redistest.StartCluster(t)
	return []redisTarget{
		{"node", "redis://" + node + "/0?namespace=" + ns, redistest.Masters(t, []string{node})},
		{"cluster", "redis+cluster://" + strings.Join(cl, ",") + "?namespace=" + ns, redistest.Masters(t, cl)},
	}
}

func (r redisTarget) dbsize(t *testing.T) int64 { return redistest.Snapshot(t, r.masters).DBSize }

func (r redisTarget) flushAll(t *testing.T) {
	t.Helper()
	for _, c := range r.masters {
		if err := c.FlushAll(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// Issue 37, point 1: neardup check writes nothing, anywhere. After
// FLUSHALL the serving members stop (the index is lost); a check must not
// bring the namespace back (on main it did, and every member resumed
// deciding against an empty index that nobody accepted): it fails, DBSIZE
// stays 0 and the member stays stopped. On a single node and a cluster.
func TestCheckAfterFlushAllLeavesMembersStopped(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a serve process against a node and a cluster, about 20 s")
	}
	dir := t.TempDir()
	doc := filepath.Join(dir, "doc.txt")
	g := synth.NewGenerator(3, 5000)
	if err := os.WriteFile(doc, []byte(g.Text(g.Words(300))), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tg := range startTargets(t, "lost") {
		t.Run(tg.name, func(t *testing.T) {
			cl := kafkatest.Start(t, kafkatest.Topic("crawl", 2), kafkatest.Topic("neardup.events", 2), kafkatest.Topic("neardup.dead-letters", 1))
			addr := freeAddr(t)
			p := startServe(t, []string{
				"NEARDUP_KAFKA_BROKERS=" + cl.Brokers, "NEARDUP_KAFKA_INPUT_TOPIC=crawl", "NEARDUP_HTTP_ADDR=" + addr,
				"NEARDUP_PIPELINE_EMIT=all", "NEARDUP_INDEX_URL=" + tg.url, "NEARDUP_INDEX_TIMEOUT=500ms",
				"NEARDUP_KAFKA_COMMIT_INTERVAL=100ms",
			})
			docs := synth.Corpus(synth.Config{Docs: 20, Seed: 37})
			produceDocs(t, cl, "crawl", docs)
			p.waitLog("neardup serve starting")
			cl.WaitFor(t, "neardup.events", len(docs), time.Minute, nil)

			tg.flushAll(t)
			p.waitLog("index lost")
			code, _, errOut := neardup(t, "check", "--quiet", "--index", tg.url, doc)
			// The server holds nothing: check cannot tell a lost index from
			// a mistyped namespace, and says both (exit 2, as for a
			// namespace that does not exist).
			if code != 2 || !strings.Contains(errOut, "does not exist") || !strings.Contains(errOut, "restarted without its data") {
				t.Errorf("check after FLUSHALL: exit %d, %q; want 2 saying the namespace does not exist and the server may have lost its data", code, errOut)
			}
			if n := tg.dbsize(t); n != 0 {
				t.Errorf("DBSIZE %d after check, want 0: check re-created the namespace", n)
			}
			// The sleep is the scenario: longer than the members' probe
			// interval, so a member that wrongly resumed would show it.
			time.Sleep(3 * time.Second)
			if code, body := httpDo(t, "GET", addr, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "index lost") {
				t.Errorf("/readyz %d %q after check, want 503 naming the loss: the member resumed", code, body)
			}
			more := synth.Corpus(synth.Config{Docs: 3, Seed: 38})
			for i := range more {
				more[i].ID = "after-" + more[i].ID
			}
			produceDocs(t, cl, "crawl", more)
			time.Sleep(time.Second) // the scenario: a wrong decision is given a second to show
			if n := len(cl.ReadAll(t, "neardup.events")); n != len(docs) {
				t.Errorf("%d events after check, want %d: the member decided against an empty index", n, len(docs))
			}
			if n := tg.dbsize(t); n != 0 {
				t.Errorf("DBSIZE %d at the end, want 0", n)
			}
			// A member that cannot decide cannot drain either: it is
			// killed (startServe's cleanup), not stopped.
		})
	}
}

// Issue 37, point 1: after a generation turnover (a new generation no
// member has written, an older layout's clock beside the namespace) one
// check wrote the clock, swept expiries (115 keys deleted, 562 writes on
// main) and marked the older layout superseded (stopping its fleet). Now
// rdb_changes_since_last_save and every key's value and expiry stay as
// they were; --from with a Redis index is bad usage; a stored id gets its
// stored verdict.
func TestCheckWritesNothingAfterTurnover(t *testing.T) {
	stored, checked := t.TempDir(), t.TempDir()
	g := synth.NewGenerator(37, 5000)
	texts := make([]string, 4)
	for i := range texts {
		texts[i] = g.Text(g.Words(300 + 50*i))
		if err := os.WriteFile(filepath.Join(stored, fmt.Sprint("s", i, ".txt")), []byte(texts[i]), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A near copy of s1, and s2 itself under its stored id.
	if err := os.WriteFile(filepath.Join(checked, "near.txt"), []byte(texts[1]+" "+g.Text(g.Words(8))), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tg := range startTargets(t, "turn") {
		t.Run(tg.name, func(t *testing.T) {
			// Generations of gen, kept for two: the check must run after
			// the turnover and before the stored documents expire, so the
			// scan, the wait past the turnover and the check must fit in
			// two generations. A run slower than that (a loaded machine,
			// -race) is not a finding: it is tried again, in a namespace
			// of its own, with generations twice as long.
			var before, after redistest.State
			var out, url string
			for attempt, gen := 0, time.Second; ; attempt, gen = attempt+1, 2*gen {
				ns := fmt.Sprint("turn", attempt)
				url = strings.Replace(tg.url, "namespace=turn", "namespace="+ns, 1) + fmt.Sprintf("&retention=%s&generation=%s", 2*gen, gen)
				start := time.Now()
				if code, _, errOut := neardup(t, "scan", "--quiet", "--index", url, stored); code != 0 {
					t.Fatalf("scan into Redis: exit %d: %s", code, errOut)
				}
				for _, c := range tg.masters { // an older build's layout beside it
					_ = c.HSet(context.Background(), ns+":v"+strconv.Itoa(index.SchemaVersion-1)+":{0}c", "f", "an older fingerprint").Err()
				}
				// The sleep is the scenario: the clock moves into the next
				// generation, which nobody has written.
				time.Sleep(gen + gen/5)
				before = redistest.Snapshot(t, tg.masters)
				var code int
				var errOut string
				code, out, errOut = neardup(t, "check", "--index", url, checked, filepath.Join(stored, "s2.txt"))
				if code != 0 {
					t.Fatalf("check: exit %d: %s", code, errOut)
				}
				after = redistest.Snapshot(t, tg.masters)
				// Redis expires keys at whole seconds, and a generation's
				// keys may expire up to a second before two generations
				// have passed: a key that could have expired between the
				// snapshots makes the run too slow to tell, like a run
				// longer than two generations.
				expiring := before.Soonest > 0 && time.Now().Unix() >= before.Soonest-1
				if took := time.Since(start); took < 2*gen && !expiring {
					break
				} else if gen >= 8*time.Second {
					t.Fatalf("scan, turnover and check took %v with generations of %v (a key expiring at %d): too slow to test", took, gen, before.Soonest)
				} else {
					t.Logf("scan, turnover and check took %v with generations of %v (a key expiring at %d, now %d): again with %v",
						took, gen, before.Soonest, time.Now().Unix(), 2*gen)
				}
			}
			if after.DBSize != before.DBSize || after.Changes != before.Changes {
				t.Errorf("check after a turnover: DBSIZE %d → %d, rdb_changes_since_last_save %d → %d; want both unchanged",
					before.DBSize, after.DBSize, before.Changes, after.Changes)
			}
			if changed := before.Diff(after); len(changed) > 0 {
				t.Errorf("check changed %d keys: %v", len(changed), changed[:min(len(changed), 8)])
			}
			got := map[string]event{}
			for _, ev := range events(t, out) {
				got[filepath.Base(ev.ID)] = ev
			}
			if ev := got["near.txt"]; ev.Kind != "near" || filepath.Base(ev.DuplicateOf) != "s1.txt" {
				t.Errorf("near.txt: %+v, want a near duplicate of s1.txt", ev)
			}
			if ev := got["s2.txt"]; ev.Kind != "unique" || !ev.Replay {
				t.Errorf("s2.txt (stored): %+v, want its stored verdict, unique, as a replay", ev)
			}
			if code, _, errOut := neardup(t, "check", "--index", url, "--from", stored, checked); code != 2 || !strings.Contains(errOut, "memory index") {
				t.Errorf("check --from with a Redis index: exit %d %q, want 2 (bad usage)", code, errOut)
			}
		})
	}
}
