package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Masters returns a client for each master among addrs (the one server
// of a single node, the masters of a cluster), closed when the test ends.
func Masters(t testing.TB, addrs []string) []*redis.Client {
	t.Helper()
	var out []*redis.Client
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		t.Cleanup(func() { c.Close() })
		role, err := c.Do(context.Background(), "ROLE").Slice()
		if err != nil {
			t.Fatalf("redistest: ROLE of %s: %v", a, err)
		}
		if len(role) > 0 && role[0] == "master" {
			out = append(out, c)
		}
	}
	return out
}

// State is what a set of masters holds, to tell whether anything wrote:
// every key's value (DUMP) and absolute expiry, and the sums of DBSIZE
// and of rdb_changes_since_last_save (Redis's count of writes, which
// grows with every change whether or not the server saves).
type State struct {
	Keys            map[string]string
	DBSize, Changes int64
	// Soonest is the earliest absolute expiry of any key, in Unix
	// seconds (0: no key expires). A key expiring between two snapshots
	// is deleted by Redis, not by what ran between them: a test that
	// compares snapshots needs them both taken before Soonest.
	Soonest int64
}

// Snapshot reads the State of masters.
func Snapshot(t testing.TB, masters []*redis.Client) State {
	t.Helper()
	ctx := context.Background()
	s := State{Keys: map[string]string{}}
	for _, c := range masters {
		n, err := c.DBSize(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		s.DBSize += n
		info, err := c.Info(ctx, "persistence").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(l, "rdb_changes_since_last_save:"); ok {
				k, _ := strconv.ParseInt(v, 10, 64)
				s.Changes += k
			}
		}
		keys, err := c.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			d, err := c.Dump(ctx, k).Result()
			if errors.Is(err, redis.Nil) {
				continue // expired since KEYS listed it: not there
			}
			if err != nil {
				t.Fatal(err)
			}
			e, err := c.ExpireTime(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			s.Keys[k] = fmt.Sprintf("%x@%d", d, e/time.Second)
			if at := int64(e / time.Second); at > 0 && (s.Soonest == 0 || at < s.Soonest) {
				s.Soonest = at
			}
		}
	}
	return s
}

// Diff lists the keys created, deleted or changed from s to t, sorted.
func (s State) Diff(t State) []string {
	var d []string
	for k, v := range s.Keys {
		if w, ok := t.Keys[k]; !ok {
			d = append(d, k+" deleted")
		} else if w != v {
			d = append(d, k+" changed")
		}
	}
	for k := range t.Keys {
		if _, ok := s.Keys[k]; !ok {
			d = append(d, k+" created")
		}
	}
	slices.Sort(d)
	return d
}

// UnassignSlots removes the slots the cluster node c is connected to
// serves as a master (CLUSTER DELSLOTSRANGE): the node still answers
// PING, the cluster is down for those slots. It returns the ranges
// removed (none when the node serves no slots).
func UnassignSlots(ctx context.Context, c *redis.Client) ([]redis.SlotRange, error) {
	_, port, err := net.SplitHostPort(c.Options().Addr)
	if err != nil {
		return nil, err
	}
	shards, err := c.ClusterShards(ctx).Result()
	if err != nil {
		return nil, err
	}
	for _, s := range shards {
		if !slices.ContainsFunc(s.Nodes, func(n redis.Node) bool { return n.Role == "master" && strconv.FormatInt(n.Port, 10) == port }) {
			continue
		}
		for _, r := range s.Slots {
			if err := c.Do(ctx, "CLUSTER", "DELSLOTSRANGE", r.Start, r.End).Err(); err != nil {
				return nil, fmt.Errorf("CLUSTER DELSLOTSRANGE %d %d: %w", r.Start, r.End, err)
			}
		}
		return s.Slots, nil
	}
	return nil, nil
}
