package pipeline

import (
	"context"

	"golang.org/x/sync/errgroup"
)

// Stream is the loop of both commands that decide a stream, scan (files)
// and serve (Kafka): read fills the items channel until its input ends (or
// its context does; Stream closes the channel when read returns), [Run]
// decides the items, and write receives each Output in input order. The
// three run concurrently; the first error cancels the context the others
// run under, and Stream returns it once all three have returned. Items not
// written when Stream fails were not decided: a caller must not
// acknowledge them. Every goroutine Stream starts has exited when it
// returns.
//
// read gets a context that ends on any failure; a caller that stops
// reading earlier (an interrupt that drains what was read) derives its own
// from it.
func (p *Pipeline) Stream(ctx context.Context, read func(context.Context, chan<- Item) error, write func(Output) error) error {
	items := make(chan Item, 64)
	outs := make(chan Output, 64)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(items)
		return read(gctx, items)
	})
	g.Go(func() error {
		defer close(outs)
		return p.Run(gctx, items, outs)
	})
	g.Go(func() error {
		for o := range outs {
			if err := write(o); err != nil {
				return err
			}
		}
		return nil
	})
	return g.Wait()
}
