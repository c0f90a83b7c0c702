package index

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index/redistest"
)

// TestRedisPingClusterMasterDown: on a three-master cluster, Ping is nil
// while every master answers, and fails (ErrUnavailable, naming the
// master) once one of them is shut down, whichever it is: readiness must
// not read one shard only.
func TestRedisPingClusterMasterDown(t *testing.T) {
	addrs := redistest.StartCluster(t)
	down := addrs[len(addrs)-1]
	r := openRedis(t, RedisConfig{Addrs: addrs[:1], Cluster: true, Namespace: "ping", Params: testParams, MaxClockAhead: -1, Capacity: 4096})
	ctx := context.Background()
	if err := r.Ping(ctx); err != nil {
		t.Fatalf("Ping with every master up: %v", err)
	}
	c := redis.NewClient(&redis.Options{Addr: down, MaxRetries: -1})
	defer c.Close()
	// The server closes the connection as it exits (go-redis reads that
	// as success); whether it is gone is checked next.
	if err := c.ShutdownNoSave(ctx).Err(); err != nil {
		t.Logf("SHUTDOWN NOSAVE %s: %v", down, err)
	}
	if c.Ping(ctx).Err() == nil {
		t.Fatalf("%s still answers after SHUTDOWN NOSAVE", down)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := r.Ping(pctx)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Ping with master %s down: %v, want ErrUnavailable", down, err)
	}
	if !strings.Contains(err.Error(), down) {
		t.Errorf("Ping's error %q does not name the master that is down (%s)", err, down)
	}
}

// TestRedisPingClusterSlotsUncovered: a master that no longer serves its
// slots (they are unassigned: cluster_state:fail, every key command
// answers CLUSTERDOWN) still answers PING; Ping must fail all the same.
func TestRedisPingClusterSlotsUncovered(t *testing.T) {
	addrs := redistest.StartCluster(t)
	r := openRedis(t, RedisConfig{Addrs: addrs, Cluster: true, Namespace: "ping", Params: testParams, MaxClockAhead: -1, Capacity: 4096})
	ctx := context.Background()
	if err := r.Ping(ctx); err != nil {
		t.Fatalf("Ping with every slot served: %v", err)
	}
	c := redis.NewClient(&redis.Options{Addr: addrs[0]})
	defer c.Close()
	removed, err := redistest.UnassignSlots(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	owner := addrs[0]
	if len(removed) == 0 {
		t.Fatalf("%s serves no slots", owner)
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING %s after its slots were removed: %v", owner, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := r.Ping(pctx); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Ping with the slots of %s unassigned: %v, want ErrUnavailable", owner, err)
	}
}
