package index

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// call is one script invocation.
type call struct {
	s    *redis.Script
	keys []string
	args []any
	cmd  *redis.Cmd
}

// run sends the calls in one round trip (a pipeline when more than one)
// with EVALSHA, and again with EVAL those the server did not know.
func (r *Redis) run(ctx context.Context, calls []*call) error {
	defer r.markSeen(calls)
	evalSha, eval := redis.Cmdable.EvalSha, (*redis.Script).Eval
	if r.ro {
		evalSha, eval = redis.Cmdable.EvalShaRO, (*redis.Script).EvalRO
	}
	if len(calls) == 1 {
		c := calls[0]
		c.cmd = evalSha(r.c, ctx, c.s.Hash(), c.keys, c.args...)
		if redis.HasErrorPrefix(c.cmd.Err(), "NOSCRIPT") {
			c.cmd = eval(c.s, ctx, r.c, c.keys, c.args...)
		}
		return c.cmd.Err()
	}
	pipe := r.c.Pipeline()
	for _, c := range calls {
		c.cmd = evalSha(pipe, ctx, c.s.Hash(), c.keys, c.args...)
	}
	_, _ = pipe.Exec(ctx)
	var retry []*call
	for _, c := range calls {
		if redis.HasErrorPrefix(c.cmd.Err(), "NOSCRIPT") {
			retry = append(retry, c)
		}
	}
	if len(retry) > 0 {
		pipe := r.c.Pipeline()
		for _, c := range retry {
			c.cmd = eval(c.s, ctx, pipe, c.keys, c.args...)
		}
		_, _ = pipe.Exec(ctx)
	}
	for _, c := range calls {
		if err := c.cmd.Err(); err != nil {
			return err
		}
	}
	return nil
}

// retryable reports whether a server error means "try again later". On
// Redis Cluster that includes the redirects (MOVED, ASK) go-redis did not
// get to the end of within its MaxRedirects: the slot map is changing
// (a failover, a resharding) and the next attempt, after the map is
// reloaded, goes to the right node.
func retryable(err error) bool {
	for _, p := range [...]string{"LOADING", "CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN", "READONLY", "BUSY", "OOM", "NOREPLICAS", "MOVED", "ASK"} {
		if redis.HasErrorPrefix(err, p) {
			return true
		}
	}
	return false
}

// wrap classifies err: the caller's cancellation, ErrParamsMismatch,
// ErrClosed, ErrUnavailable for anything transient (network, timeouts,
// retryable server replies), or a plain wrapped error.
func (r *Redis) wrap(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	cerr := ctx.Err()
	if dl, ok := ctx.Deadline(); ok && cerr == nil && !time.Now().Before(dl) {
		cerr = context.DeadlineExceeded // the socket deadline fired first
	}
	if cerr != nil {
		if errors.Is(cerr, context.DeadlineExceeded) {
			return fmt.Errorf("index: %s: %w: %w", op, ErrUnavailable, cerr)
		}
		return fmt.Errorf("index: %s: %w", op, cerr)
	}
	if r.closed.Load() || errors.Is(err, redis.ErrClosed) {
		return fmt.Errorf("index: %s: %w", op, ErrClosed)
	}
	if redis.HasErrorPrefix(err, "NDCLOCK") {
		return fmt.Errorf("index: %s: %w: %s", op, ErrUnavailable, strings.TrimPrefix(err.Error(), "NDCLOCK "))
	}
	if redis.HasErrorPrefix(err, "NDLOST") {
		return fmt.Errorf("index: %s: namespace %q: %w: %s", op, r.ns, ErrIndexLost, strings.TrimPrefix(err.Error(), "NDLOST "))
	}
	if redis.HasErrorPrefix(err, "NDPARAMS") {
		return fmt.Errorf("index: namespace %q: %w: %s; configured: %s", r.ns, ErrParamsMismatch,
			strings.TrimPrefix(err.Error(), "NDPARAMS "), r.fp)
	}
	var rerr redis.Error
	if errors.As(err, &rerr) && !retryable(err) {
		return fmt.Errorf("index: %s: %w", op, err)
	}
	r.reloadSlots()
	return fmt.Errorf("index: %s: %w: %w", op, ErrUnavailable, err)
}

// reloadSlots asks a cluster client to reload its slot map in the
// background (go-redis's ReloadState: one CLUSTER SLOTS, at most one at
// a time): go-redis reloads it by itself only on a redirect it reads
// (MOVED, READONLY) or once a minute, and a master that stopped
// answering sends no redirect, so without this every call would go on
// waiting on the frozen master for up to a minute after its replica was
// promoted. Every unavailable call asks again, so a reload that read the
// map just before the promotion is followed by one after it.
func (r *Redis) reloadSlots() {
	if cc, ok := r.c.(*redis.ClusterClient); ok {
		cc.ReloadState(context.Background())
	}
}

// callDeadline bounds every command and pipeline of a cluster client,
// with go-redis's own retries and redirects inside it, to d (the
// configured timeout, index.timeout): a master that stops answering
// holds its connections open, and each of go-redis's attempts would wait
// a whole read timeout on it. Calls whose context is marked untimed (the
// store's opening) are not bounded.
type callDeadline time.Duration

// untimed marks a context whose calls callDeadline leaves alone.
type untimed struct{}

func (d callDeadline) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Value(untimed{}) != nil {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, time.Duration(d))
}

func (d callDeadline) DialHook(next redis.DialHook) redis.DialHook { return next }

func (d callDeadline) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		ctx, cancel := d.bound(ctx)
		defer cancel()
		return next(ctx, cmd)
	}
}

func (d callDeadline) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		ctx, cancel := d.bound(ctx)
		defer cancel()
		return next(ctx, cmds)
	}
}

// decoder reads the big-endian records of script replies.
type decoder struct {
	s   string
	p   int
	bad bool
}

func (d *decoder) take(n int) string {
	if d.bad || d.p+n > len(d.s) {
		d.bad = true
		return ""
	}
	v := d.s[d.p : d.p+n]
	d.p += n
	return v
}

func (d *decoder) uint(n int) uint64 {
	var v uint64
	for _, c := range []byte(d.take(n)) {
		v = v<<8 | uint64(c)
	}
	return v
}

func (d *decoder) u8() byte    { return byte(d.uint(1)) }
func (d *decoder) u16() uint16 { return uint16(d.uint(2)) }
func (d *decoder) u32() uint32 { return uint32(d.uint(4)) }
func (d *decoder) u48() uint64 { return d.uint(6) }

// str reads an i32-length-prefixed string ("" for −1).
func (d *decoder) str() string {
	n := int32(d.u32())
	if n < 0 {
		return ""
	}
	return d.take(int(n))
}

// bytes reads an i32-length-prefixed string as bytes, nil for −1.
func (d *decoder) bytes() []byte {
	n := int32(d.u32())
	if n < 0 {
		return nil
	}
	return []byte(d.take(int(n)))
}

// bySeqShard builds calls of script s grouping seqs by their record shard
// (seq mod S; the one shard of a single node), at most 4·Batch seqs per
// call; idx[c] lists the positions in seqs of call c's seqs. A Seq of 0,
// or beyond what any store assigns, names no document: it goes to shard 0,
// where it is found not stored.
func (r *Redis) bySeqShard(seqs []uint64, s *redis.Script, add func(args []any, i int) []any) ([]*call, [][]int) {
	byShard := make([][]int, r.shards)
	for i, seq := range seqs {
		sh := int(seq % uint64(r.shards))
		byShard[sh] = append(byShard[sh], i)
	}
	return shardCallsOf(r, s, sweepBudget, byShard, 4*r.batch, add)
}

// byIDShard builds calls of script s grouping ids by the shard of their id
// group, at most Batch ids per call; idx[c] lists the positions in ids of
// call c's ids.
func (r *Redis) byIDShard(ids []string, s *redis.Script, add func(args []any, i int) []any) ([]*call, [][]int) {
	byShard := make([][]int, r.shards)
	for i, id := range ids {
		sh := r.shardOfGroup(r.idGroup(id))
		byShard[sh] = append(byShard[sh], i)
	}
	if add == nil {
		add = func(args []any, _ int) []any { return args }
	}
	return shardCallsOf(r, s, sweepBudget, byShard, r.batch, add)
}

// shardCalls cuts the parts of each shard (perShard[sh]) into calls of script
// s with at most r.batch parts each: the shard's header with budget, then
// what add appends for each part, in order. owners[c] are the parts of
// calls[c].
func shardCalls[P any](r *Redis, s *redis.Script, budget int, perShard [][]P, add func(args []any, p P) []any) (calls []*call, owners [][]P) {
	return shardCallsOf(r, s, budget, perShard, r.batch, add)
}

// shardCallsOf is shardCalls with at most per parts per call.
func shardCallsOf[P any](r *Redis, s *redis.Script, budget int, perShard [][]P, per int, add func(args []any, p P) []any) (calls []*call, owners [][]P) {
	for sh, parts := range perShard {
		for lo := 0; lo < len(parts); lo += per {
			chunk := parts[lo:min(lo+per, len(parts))]
			args := r.header(sh, budget)
			for _, p := range chunk {
				args = add(args, p)
			}
			calls = append(calls, &call{s: s, keys: []string{r.clock[sh]}, args: args})
			owners = append(owners, chunk)
		}
	}
	return calls, owners
}
