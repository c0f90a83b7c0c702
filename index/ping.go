package index

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Ping reports whether the store can serve calls: nil, ErrClosed, or the
// context's error.
func (m *Memory) Ping(ctx context.Context) error {
	if m.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

// Ping checks that the server answers; a failure wraps ErrUnavailable.
//
// In cluster mode it checks every master the namespace uses, where the
// namespace uses it: one EXISTS of each shard's clock key, routed by its
// slot, in one pipeline. A master that is down fails to answer, and a slot
// that no master serves (the cluster lost coverage: every node answers
// CLUSTERDOWN, though each still answers PING) fails too; the error names
// the shard key and the master it maps to.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.check(ctx); err != nil {
		return err
	}
	cc, ok := r.c.(*redis.ClusterClient)
	if !ok {
		return r.wrap(ctx, "ping", r.c.Ping(ctx).Err())
	}
	cmds, err := cc.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range r.clock {
			p.Exists(ctx, k)
		}
		return nil
	})
	if err == nil {
		return nil
	}
	for i, c := range cmds {
		if c.Err() == nil {
			continue
		}
		at := "no master"
		if m, merr := cc.MasterForKey(ctx, r.clock[i]); merr == nil {
			at = "master " + m.Options().Addr
		}
		err = fmt.Errorf("shard %d (key %s, %s): %w", i, r.clock[i], at, c.Err())
		break
	}
	return r.wrap(ctx, "ping", err)
}
