package index

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/neardup/neardup/index/redistest"
)

// redisBackend opens stores on addrs, each in a namespace of its own.
func redisBackend(addrs []string, cluster bool) backend {
	var n atomic.Int64
	name := "redis"
	if cluster {
		name = "cluster"
	}
	return backend{name: name, cluster: cluster, open: func(t *testing.T, o storeOpts) Store {
		cfg := RedisConfig{Addrs: addrs, Cluster: cluster, Namespace: fmt.Sprintf("t%d", n.Add(1)), Params: o.params,
			CommonDocs: o.commonDocs, MaxCandidates: o.maxCandidates, Retention: o.retention, Generation: o.generation, RefreshOnMatch: o.refresh,
			Clock: o.clock, MaxClockAhead: -1, Capacity: 4096}
		return openRedis(t, cfg)
	}}
}

func openRedis(t testing.TB, cfg RedisConfig) *Redis {
	t.Helper()
	if cfg.Params.Hash == "" {
		cfg.Params = testParams
	}
	r, err := NewRedis(context.Background(), cfg)
	if err != nil {
		t.Fatalf("NewRedis: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestRedisConformance(t *testing.T) {
	addr := redistest.StartServer(t)
	runConformance(t, redisBackend([]string{addr}, false))
}

func TestClusterConformance(t *testing.T) {
	addrs := redistest.StartCluster(t)
	runConformance(t, redisBackend(addrs, true))
}
