package index

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Namespaces lists the index namespaces of this schema version that the
// Redis server (every master of a cluster) named by rawURL holds, sorted,
// reading keys only (SCAN for each namespace's clock hash, which every
// stored namespace has), for messages that tell a namespace that was never
// written (a typo) from one whose data the server lost. It reads for at
// most budget and reports whether it read the whole key space; it writes
// nothing.
func Namespaces(ctx context.Context, rawURL string, o Options, budget time.Duration) (names []string, complete bool, err error) {
	cfg, mem, err := parseURL(rawURL, o)
	if err != nil {
		return nil, false, err
	}
	if mem {
		return nil, true, nil
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	var c redis.UniversalClient
	if cfg.Cluster {
		c = redis.NewClusterClient(&redis.ClusterOptions{Addrs: cfg.Addrs, Username: cfg.Username, Password: cfg.Password,
			TLSConfig: cfg.TLS, DialTimeout: cfg.DialTimeout, ReadTimeout: cfg.ReadTimeout, WriteTimeout: cfg.WriteTimeout})
	} else {
		c = redis.NewClient(&redis.Options{Addr: cfg.Addrs[0], Username: cfg.Username, Password: cfg.Password, DB: cfg.DB,
			TLSConfig: cfg.TLS, DialTimeout: cfg.DialTimeout, ReadTimeout: cfg.ReadTimeout, WriteTimeout: cfg.WriteTimeout})
	}
	defer c.Close()
	marker := ":v" + strconv.Itoa(SchemaVersion) + ":{"
	var mu sync.Mutex
	found := map[string]bool{}
	scan := func(ctx context.Context, node redis.Cmdable) error {
		var cursor uint64
		for {
			keys, next, err := node.Scan(ctx, cursor, "*"+marker+"*}c", 1000).Result()
			if err != nil {
				return err
			}
			mu.Lock()
			for _, k := range keys {
				if i := strings.LastIndex(k, marker); i > 0 {
					found[k[:i]] = true
				}
			}
			mu.Unlock()
			if cursor = next; cursor == 0 {
				return nil
			}
		}
	}
	if cc, ok := c.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return scan(ctx, node) })
	} else {
		err = scan(ctx, c)
	}
	for ns := range found {
		names = append(names, ns)
	}
	slices.Sort(names)
	switch {
	case err == nil:
		return names, true, nil
	case ctx.Err() != nil && len(names) > 0:
		return names, false, nil // the budget ran out: what was found
	}
	return names, false, fmt.Errorf("index: list namespaces: %w: %w", ErrUnavailable, err)
}
