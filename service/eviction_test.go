package service

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/poll"
)

// Issue 38, point 7: a Redis whose maxmemory-policy is not noeviction
// would evict index keys when full, silently forgetting documents. serve
// checks the policy of every server holding the index (every master of a
// cluster) at start and periodically: not ready naming the server and
// its policy, neardup_index_evicting_servers counting them, until the
// policy is noeviction again; index.allow_eviction keeps the member
// ready (the metric still counts).
func TestServeIndexEviction(t *testing.T) {
	t.Parallel()
	fast := func(o *Options) { o.EvictionInterval = 200 * time.Millisecond }
	setPolicy := func(t *testing.T, addr, policy string) {
		c := redis.NewClient(&redis.Options{Addr: addr})
		defer c.Close()
		if err := c.ConfigSet(context.Background(), "maxmemory-policy", policy).Err(); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("single", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t, redistest.Options{Args: []string{"--maxmemory-policy", "allkeys-lru"}})
		cl := startKafka(t, 1)
		c := loadConfig(t, cl.Brokers, "index.url", "redis://"+srv.Addr+"/0?namespace=evict")
		in := start(t, c, openStore(t, c), fast)
		in.waitReady(t, http.StatusServiceUnavailable, 30*time.Second)
		poll.Until(t, 30*time.Second, func() error {
			_, body := in.httpGet(t, "/readyz")
			if !strings.Contains(body, "not ready") {
				t.Fatalf("/readyz %q with maxmemory-policy allkeys-lru", body)
			}
			if !strings.Contains(body, "maxmemory-policy allkeys-lru on "+srv.Addr) {
				return fmt.Errorf("/readyz %q does not name the policy", body)
			}
			return nil
		})
		waitGauge(t, in, "neardup_index_evicting_servers", 1, 10*time.Second)
		setPolicy(t, srv.Addr, "noeviction")
		in.waitReady(t, http.StatusOK, 30*time.Second)
		waitGauge(t, in, "neardup_index_evicting_servers", 0, 10*time.Second)
		if err := in.stop(t); err != nil {
			t.Fatal(err)
		}

		// The documented override: ready, still counted.
		setPolicy(t, srv.Addr, "volatile-lru")
		c2 := loadConfig(t, cl.Brokers, "index.url", "redis://"+srv.Addr+"/0?namespace=evict", "index.allow_eviction", "true")
		in2 := start(t, c2, openStore(t, c2), fast)
		waitGauge(t, in2, "neardup_index_evicting_servers", 1, 30*time.Second)
		in2.waitReady(t, http.StatusOK, 30*time.Second)
		if err := in2.stop(t); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		addrs := redistest.StartCluster(t)
		cl := startKafka(t, 1)
		c := loadConfig(t, cl.Brokers, "index.url", "redis+cluster://"+strings.Join(addrs, ",")+"?namespace=evict")
		in := start(t, c, openStore(t, c), fast)
		in.waitReady(t, http.StatusOK, 30*time.Second)
		setPolicy(t, addrs[1], "volatile-ttl") // one master of three
		body := in.waitReady(t, http.StatusServiceUnavailable, 30*time.Second)
		if !strings.Contains(body, "maxmemory-policy volatile-ttl on "+addrs[1]) {
			t.Errorf("/readyz %q does not name the master and its policy", body)
		}
		waitGauge(t, in, "neardup_index_evicting_servers", 1, 10*time.Second)
		setPolicy(t, addrs[1], "noeviction")
		in.waitReady(t, http.StatusOK, 30*time.Second)
		if err := in.stop(t); err != nil {
			t.Fatal(err)
		}
	})
}
