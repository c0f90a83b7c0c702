package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/segmentio/kafka-go"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/poll"
	"github.com/neardup/neardup/internal/synth"
	"github.com/neardup/neardup/pipeline"
)

// redisState counts what the index holds on a Redis node or cluster: the
// keys (DBSIZE, less the shards' clock hashes, whose Seq counter only
// grows) and the fields of those hashes (less the o-fields that count
// documents full buckets turned away, and the marks a delete leaves in an
// id hash: '-' and the removed document's origin, index.Entry.Origin).
// Deletes must bring both back.
func redisState(t *testing.T, addrs []string, cluster bool) (dbsize, keys, fields int) {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	count := func(c *redis.Client) error {
		n, err := c.DBSize(ctx).Result()
		if err != nil {
			return err
		}
		var cur uint64
		var k, f int
		for {
			ks, next, err := c.Scan(ctx, cur, "*", 1000).Result()
			if err != nil {
				return err
			}
			for _, key := range ks {
				if strings.HasSuffix(key, "}c") {
					continue
				}
				hv, err := c.HGetAll(ctx, key).Result()
				if err != nil {
					return fmt.Errorf("%s: %w", key, err)
				}
				idHash := strings.Contains(key, "}i")
				kept := 0
				for field, v := range hv {
					if !(len(field) == 5 && field[0] == 'o') && !(idHash && strings.HasPrefix(v, "-")) {
						kept++
					}
				}
				if kept > 0 {
					k++
					f += kept
				}
			}
			if cur = next; cur == 0 {
				break
			}
		}
		mu.Lock()
		dbsize, keys, fields = dbsize+int(n), keys+k, fields+f
		mu.Unlock()
		return nil
	}
	var err error
	if cluster {
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
		defer cc.Close()
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return count(c) })
	} else {
		c := redis.NewClient(&redis.Options{Addr: addrs[0]})
		defer c.Close()
		err = count(c)
	}
	if err != nil {
		t.Fatalf("redis state: %v", err)
	}
	return dbsize, keys, fields
}

// fullEvent is an event as the tests read it, deleted events included.
type fullEvent struct {
	ID          string `json:"id"`
	Kind        string `json:"kind"`
	DuplicateOf string `json:"duplicate_of"`
	Replay      bool   `json:"replay"`
	NotFound    bool   `json:"not_found"`
}

// TestServeTombstone: a tombstone (the document's key, a null value) on
// the input topic removes the document from the index, memory, single
// Redis node and a real three-master cluster: the index is back to what
// it held before the document (DBSIZE and hash lengths, apart from the
// counters redisState leaves out), a `deleted` event is produced, a
// second tombstone says not_found, a copy of the text under a new id is
// unique, and the document re-sent is new (an exact copy of that copy).
func TestServeTombstone(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"memory", "redis", "cluster"} {
		t.Run(backend, func(t *testing.T) {
			cl := startKafka(t, 1)
			var addrs []string
			kv := []string{"kafka.unique_topic", uniqueTopic}
			switch backend {
			case "redis":
				addrs = []string{redistest.StartServer(t)}
				kv = append(kv, "index.url", "redis://"+addrs[0]+"/0?namespace=del")
			case "cluster":
				addrs = redistest.StartCluster(t)
				kv = append(kv, "index.url", "redis+cluster://"+strings.Join(addrs, ",")+"?namespace=del")
			}
			c := loadConfig(t, cl.Brokers, kv...)
			st := openStore(t, c)
			if backend == "memory" {
				st = memoryStore(t, c)
			}
			in := start(t, c, st)
			defer in.stop(t)

			docs := synth.Corpus(synth.Config{Docs: 40, Seed: 5})
			var y, x synth.Doc
			for _, d := range docs {
				if d.Kind == synth.Original && y.ID == "" {
					y = d
				} else if d.Kind == synth.Original && x.ID == "" {
					x = d
				}
			}
			msg := func(id, text string) kafka.Message {
				v, err := json.Marshal(map[string]string{"id": id, "text": text})
				if err != nil {
					t.Fatal(err)
				}
				return kafka.Message{Key: []byte(id), Value: v}
			}
			tombstone := kafka.Message{Key: []byte(x.ID), Value: nil}
			events := func(n int) []fullEvent {
				t.Helper()
				msgs := cl.WaitFor(t, outTopic, n, time.Minute, nil)
				if len(msgs) < n {
					t.Fatalf("%d events, want %d", len(msgs), n)
				}
				var out []fullEvent
				for _, m := range msgs {
					var ev fullEvent
					if err := json.Unmarshal(m.Value, &ev); err != nil {
						t.Fatalf("event %s: %v", m.Value, err)
					}
					out = append(out, ev)
				}
				return out
			}
			state := func() [3]int {
				if addrs == nil {
					return [3]int{}
				}
				d, k, f := redisState(t, addrs, backend == "cluster")
				return [3]int{d, k, f}
			}

			cl.Produce(t, inTopic, msg(y.ID, y.Text))
			events(1)
			s0 := state()
			cl.Produce(t, inTopic, msg(x.ID, x.Text))
			if ev := events(2)[1]; ev.ID != x.ID || ev.Kind != pipeline.KindUnique {
				t.Fatalf("x: %+v, want unique", ev)
			}
			s1 := state()
			if addrs != nil && s1 == s0 {
				t.Fatalf("x stored nothing? state %v before and after", s0)
			}
			cl.Produce(t, inTopic, tombstone)
			if ev := events(3)[2]; ev.ID != x.ID || ev.Kind != pipeline.KindDeleted || ev.NotFound {
				t.Errorf("tombstone of x: %+v, want deleted, found", ev)
			}
			// The index is back to what it held before x (the keys left
			// out are counters: see redisState).
			if s := state(); [2]int(s[1:]) != [2]int(s0[1:]) {
				t.Errorf("after the tombstone: %v keys, fields %v; before x %v, with x %v (dbsize, keys, fields)", s[1], s[2], s0, s1)
			} else {
				t.Logf("dbsize, keys, fields: before x %v, with x %v, after its tombstone %v", s0, s1, s)
			}
			cl.Produce(t, inTopic, tombstone)
			if ev := events(4)[3]; ev.ID != x.ID || ev.Kind != pipeline.KindDeleted || !ev.NotFound {
				t.Errorf("second tombstone of x: %+v, want deleted, not_found", ev)
			}
			if s := state(); [2]int(s[1:]) != [2]int(s0[1:]) {
				t.Errorf("after the second tombstone: %v, want %v", s, s0)
			}
			cl.Produce(t, inTopic, msg("copy-of-"+x.ID, x.Text), msg(x.ID, x.Text))
			evs := events(6)
			if ev := evs[4]; ev.Kind != pipeline.KindUnique {
				t.Errorf("a copy of the deleted x: %+v, want unique", ev)
			}
			if ev := evs[5]; ev.ID != x.ID || ev.Replay || ev.Kind != pipeline.KindExact || ev.DuplicateOf != "copy-of-"+x.ID {
				t.Errorf("x re-sent after its delete: %+v, want a new document, exact copy of copy-of-%s", ev, x.ID)
			}
			if dead := cl.ReadAll(t, deadTopic); len(dead) != 0 {
				t.Errorf("%d dead letters, e.g. %s", len(dead), dead[0].Value)
			}
			// The unique topic: y, x, the tombstone of x twice (the second
			// found nothing, but goes on: at least once), the copy and
			// nothing for x re-sent (an exact copy).
			var got []string
			for _, m := range cl.WaitFor(t, uniqueTopic, 5, time.Minute, nil) {
				s := string(m.Key)
				if m.Value == nil {
					s += " tombstone"
				}
				got = append(got, s)
			}
			slices.Sort(got)
			want := []string{"copy-of-" + x.ID, x.ID, x.ID + " tombstone", x.ID + " tombstone", y.ID}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("unique topic: %q, want %q", got, want)
			}
		})
	}
}

// killAfterRemove is a fault hook: the member crashes right after the
// index removed a document, before the delete's event and tombstone are
// produced and its offset committed.
type killAfterRemove struct {
	index.Store
	kill   func()
	once   sync.Once
	killed chan struct{}
}

func (k *killAfterRemove) Remove(ctx context.Context, ids []string) ([]bool, error) {
	removed, err := k.Store.Remove(ctx, ids)
	if err != nil {
		return removed, err
	}
	k.once.Do(func() { k.kill(); close(k.killed) })
	select { // nothing of it goes further
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(30 * time.Second):
		return nil, errors.New("the killed member's pipeline was not cancelled")
	}
}

// Issue 37, point 5: a member that crashes between the index's delete and
// the commit leaves the tombstone unread-as-done; the next owner reads it
// again, finds nothing left to remove (not_found), and still forwards the
// tombstone to kafka.unique_topic, so the copy downstream goes (on main
// only a delete that found the document forwarded it: the downstream copy
// stayed forever).
func TestServeTombstoneAfterCrash(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"memory", "redis"} {
		t.Run(backend, func(t *testing.T) {
			cl := startKafka(t, 1)
			kv := []string{"kafka.unique_topic", uniqueTopic}
			if backend == "redis" {
				kv = append(kv, "index.url", "redis://"+redistest.StartServer(t)+"/0?namespace=crash")
			}
			c := loadConfig(t, cl.Brokers, kv...)
			st := openStore(t, c)
			if backend == "memory" {
				st = memoryStore(t, c)
			}
			hook := &killAfterRemove{Store: st, killed: make(chan struct{})}
			first := start(t, c, hook)
			hook.kill = first.Kill
			docs := synth.Corpus(synth.Config{Docs: 1, Seed: 9})
			cl.Produce(t, inTopic, docMessages(t, docs)...)
			cl.WaitFor(t, uniqueTopic, 1, time.Minute, nil)
			cl.Produce(t, inTopic, kafka.Message{Key: []byte(docs[0].ID)})
			select {
			case <-hook.killed:
			case <-time.After(time.Minute):
				t.Fatal("the tombstone did not reach the index within a minute")
			}
			if err := first.stop(t); !errors.Is(err, ErrKilled) {
				t.Fatalf("first member: %v, want killed", err)
			}
			if n := len(cl.ReadAll(t, outTopic)); n != 1 {
				t.Fatalf("%d events from the killed member, want 1 (the document's, not the delete's)", n)
			}
			// The next owner reads the tombstone again (and the document's
			// record too when the killed member had not committed it: a
			// replay of a deleted document, itself a deleted event).
			second := start(t, c, st)
			defer second.stop(t)
			notFound := func(m kafka.Message) bool {
				var ev fullEvent
				return json.Unmarshal(m.Value, &ev) == nil && ev.NotFound
			}
			cl.WaitFor(t, outTopic, 1, time.Minute, notFound)
			evs := cl.ReadAll(t, outTopic)
			for i, m := range evs[1:] {
				var ev fullEvent
				_ = json.Unmarshal(m.Value, &ev)
				last := i == len(evs)-2
				if ev.ID != docs[0].ID || ev.Kind != pipeline.KindDeleted || ev.NotFound != last || (!last && !ev.Replay) {
					t.Errorf("event %d of the next owner: %+v; want deleted (a replay of the document's record, or last the tombstone's, not_found)", i, ev)
				}
			}
			var got []string
			for _, m := range cl.WaitFor(t, uniqueTopic, 2, 10*time.Second, nil) {
				s := string(m.Key)
				if m.Value == nil {
					s += " tombstone"
				}
				got = append(got, s)
			}
			if want := []string{docs[0].ID, docs[0].ID + " tombstone"}; !slices.Equal(got, want) {
				t.Errorf("unique topic: %q, want %q", got, want)
			}
		})
	}
}

// Issue 38, point 5: records keyed by site, not by id: a document's
// record and its tombstone (keyed by the id) sit in different partitions,
// here each owned by one of two members. The documents' member stores them
// and is killed before committing them; the other member has deleted
// them (their tombstones) by then, takes the documents' partition over and
// reads their records again. Every deleted document stays deleted (on main
// every one was stored again; 11 of 20 in a SIGKILL run).
func TestServeDeletesSurviveCrashKeyedBySite(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"memory", "redis"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel() // each waits about 10 s for the lag gauges (the split)
			cl := startKafka(t, 2)
			// Nothing is committed before the kill (commit_interval 1h).
			kv := []string{"kafka.commit_interval", "1h"}
			if backend == "redis" {
				kv = append(kv, "index.url", "redis://"+redistest.StartServer(t)+"/0?namespace=site")
			}
			c := loadConfig(t, cl.Brokers, kv...)
			st := openStore(t, c)
			if backend == "memory" {
				st = memoryStore(t, c)
			}
			// The documents' records in the site's partition, their ids
			// (their tombstones' keys) in the other one.
			part := func(key string) int { return (&kafka.Hash{}).Balance(kafka.Message{Key: []byte(key)}, 0, 1) }
			site := "site-a"
			var msgs, tombstones []kafka.Message
			var ids []string
			g := synth.NewGenerator(77, 5000)
			for n := 0; len(ids) < 20; n++ {
				id := fmt.Sprintf("doc-%03d", n)
				if part(id) == part(site) {
					continue
				}
				v, err := json.Marshal(map[string]string{"id": id, "text": g.Text(g.Words(200))})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
				msgs = append(msgs, kafka.Message{Key: []byte(site), Value: v})
				tombstones = append(tombstones, kafka.Message{Key: []byte(id)})
			}
			a, b := start(t, c, st), start(t, c, st)
			poll.Until(t, time.Minute, func() error {
				if la, lb := metricLag(t, a), metricLag(t, b); len(la) != 1 || len(lb) != 1 {
					return fmt.Errorf("partitions not split between the members: %v, %v", la, lb)
				}
				return nil
			})
			docsOwner := a
			if _, ok := metricLag(t, b)[part(site)]; ok {
				docsOwner = b
			}
			cl.Produce(t, inTopic, msgs...)
			cl.WaitFor(t, outTopic, len(msgs), time.Minute, nil)
			cl.Produce(t, inTopic, tombstones...)
			cl.WaitFor(t, outTopic, len(msgs)+len(tombstones), time.Minute, nil)
			docsOwner.Kill()
			if err := docsOwner.stop(t); !errors.Is(err, ErrKilled) {
				t.Fatalf("the documents' member: %v, want killed", err)
			}
			// The other member reads the documents' records again.
			cl.WaitFor(t, outTopic, 2*len(msgs)+len(tombstones), time.Minute, nil)
			pc, err := pipeline.FromConfig(c, "test")
			if err != nil {
				t.Fatal(err)
			}
			probe, err := pipeline.New(pc, nil)
			if err != nil {
				t.Fatal(err)
			}
			var probes []index.Entry
			for _, id := range ids {
				probes = append(probes, index.Entry{ID: id, Bands: make([]uint64, probe.IndexParams().Bands)})
			}
			res, err := st.Lookup(context.Background(), probes)
			if err != nil {
				t.Fatal(err)
			}
			restored := 0
			for _, r := range res {
				if r.Replay {
					restored++
				}
			}
			if restored > 0 {
				t.Errorf("%d of %d deleted documents stored again", restored, len(ids))
			}
		})
	}
}
