package index

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// EvictionPolicies returns the maxmemory-policy of every Redis server
// that holds the index — the server, or every master of a cluster —
// keyed by address, read with INFO memory (allowed to users that may not
// run CONFIG GET). A policy other than "noeviction" lets a full server
// evict the index's keys: documents silently forgotten, or a lost index
// when a namespace's clock key goes. A failure wraps ErrUnavailable, or
// is the server's refusal (NOPERM) as it is.
func (r *Redis) EvictionPolicies(ctx context.Context) (map[string]string, error) {
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	out := map[string]string{}
	var mu sync.Mutex
	read := func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "memory").Result()
		if err != nil {
			return fmt.Errorf("%s: %w", c.Options().Addr, err)
		}
		policy := "unknown"
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "maxmemory_policy:"); ok {
				policy = v
			}
		}
		mu.Lock()
		out[c.Options().Addr] = policy
		mu.Unlock()
		return nil
	}
	var err error
	switch c := r.c.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, read)
	case *redis.Client:
		err = read(ctx, c)
	}
	if err != nil {
		return nil, r.wrap(ctx, "eviction policy", err)
	}
	return out, nil
}
