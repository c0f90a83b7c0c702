package index

import (
	"context"

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

// Ping checks that the server answers (in cluster mode, every master); a
// failure wraps ErrUnavailable.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.check(ctx); err != nil {
		return err
	}
	var err error
	if cc, ok := r.c.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			return c.Ping(ctx).Err()
		})
	} else {
		err = r.c.Ping(ctx).Err()
	}
	return r.wrap(ctx, "ping", err)
}
