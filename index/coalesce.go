package index

import (
	"context"
	"sync"
)

// coalescer merges concurrent LookupInsert calls on a single node into
// shared round trips, like a group commit: while one round is in flight,
// later calls queue up, and when it returns, one of them leads the next
// round with everything queued. Small concurrent batches thus reach the
// server as large script calls. It starts no goroutine: callers take turns
// as leader. Documents of one round are processed in queue order, each
// atomically, exactly as if the calls had been made one after another.
type coalescer struct {
	mu      sync.Mutex
	queue   []*pendingCall
	leading bool
	max     int // documents per round
}

type pendingCall struct {
	docs []Entry
	res  []Result
	err  error
	done chan struct{} // closed when res and err are set
	lead chan struct{} // closed when this call must lead the next round
}

// do runs docs through send, sharing round trips with concurrent callers.
// A caller whose ctx ends while queued leaves without its documents being
// sent; once its documents are in flight it returns ctx's error and the
// results are dropped (a retry is a replay).
func (c *coalescer) do(ctx context.Context, docs []Entry, send func(context.Context, []Entry) ([]Result, error)) ([]Result, error) {
	p := &pendingCall{docs: docs, done: make(chan struct{}), lead: make(chan struct{})}
	c.mu.Lock()
	c.queue = append(c.queue, p)
	if !c.leading {
		c.leading = true
		c.mu.Unlock()
		c.round(ctx, send)
	} else {
		c.mu.Unlock()
		select {
		case <-p.done:
		case <-p.lead:
			c.round(ctx, send)
		case <-ctx.Done():
			c.mu.Lock()
			select {
			case <-p.lead: // promoted meanwhile: the queue needs a leader
				c.mu.Unlock()
				c.round(context.WithoutCancel(ctx), send)
			default:
				for i, q := range c.queue {
					if q == p {
						c.queue = append(c.queue[:i], c.queue[i+1:]...)
						break
					}
				}
				c.mu.Unlock()
			}
			select {
			case <-p.done:
			default:
				return nil, ctx.Err()
			}
		}
	}
	<-p.done
	return p.res, p.err
}

// round sends the queued calls (up to max documents, at least one call)
// in one round trip, delivers their results and hands leadership to the
// first call still queued.
func (c *coalescer) round(ctx context.Context, send func(context.Context, []Entry) ([]Result, error)) {
	c.mu.Lock()
	n, docs := 0, 0
	for n < len(c.queue) && (n == 0 || docs+len(c.queue[n].docs) <= c.max) {
		docs += len(c.queue[n].docs)
		n++
	}
	batch := append([]*pendingCall(nil), c.queue[:n]...)
	c.queue = append(c.queue[:0], c.queue[n:]...)
	c.mu.Unlock()

	all := batch[0].docs
	if len(batch) > 1 {
		all = make([]Entry, 0, docs)
		for _, p := range batch {
			all = append(all, p.docs...)
		}
	}
	res, err := send(ctx, all)
	for _, p := range batch {
		if err == nil {
			p.res, res = res[:len(p.docs):len(p.docs)], res[len(p.docs):]
		}
		p.err = err
		close(p.done)
	}

	c.mu.Lock()
	if len(c.queue) > 0 {
		close(c.queue[0].lead)
	} else {
		c.leading = false
	}
	c.mu.Unlock()
}
