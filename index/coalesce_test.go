package index

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// echo is a send function whose results carry each document's id (in
// Verdict), recording the rounds it saw.
type echo struct {
	mu     sync.Mutex
	rounds [][]string
	gate   chan struct{} // when set, each round waits for a value
}

func (e *echo) send(ctx context.Context, docs []Entry) ([]Result, error) {
	if e.gate != nil {
		<-e.gate
	}
	var ids []string
	out := make([]Result, len(docs))
	for i, d := range docs {
		ids = append(ids, d.ID)
		out[i].Verdict = []byte(d.ID)
	}
	e.mu.Lock()
	e.rounds = append(e.rounds, ids)
	e.mu.Unlock()
	return out, ctx.Err()
}

func TestCoalescerDelivers(t *testing.T) {
	e := &echo{}
	c := &coalescer{max: 16}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				docs := []Entry{{ID: fmt.Sprint(g, "-", i, "-a")}, {ID: fmt.Sprint(g, "-", i, "-b")}}
				res, err := c.do(context.Background(), docs, e.send)
				if err != nil || len(res) != 2 || string(res[0].Verdict) != docs[0].ID || string(res[1].Verdict) != docs[1].ID {
					t.Errorf("got %v %+v for %v", err, res, docs)
					return
				}
			}
		}()
	}
	wg.Wait()
	n := 0
	for _, r := range e.rounds {
		if len(r) > 16 {
			t.Errorf("round of %d documents, max 16", len(r))
		}
		n += len(r)
	}
	if n != 16*200*2 {
		t.Errorf("%d documents sent, want %d", n, 16*200*2)
	}
	t.Logf("%d calls in %d rounds", 16*200, len(e.rounds))
}

func TestCoalescerCancelWhileQueued(t *testing.T) {
	e := &echo{gate: make(chan struct{})}
	c := &coalescer{max: 16}
	first := make(chan error)
	go func() {
		_, err := c.do(context.Background(), []Entry{{ID: "first"}}, e.send)
		first <- err
	}()
	// Wait until the first round is in flight (the leader holds the gate).
	for {
		c.mu.Lock()
		l := c.leading && len(c.queue) == 0
		c.mu.Unlock()
		if l {
			break
		}
		runtime.Gosched()
	}
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error)
	go func() {
		_, err := c.do(ctx, []Entry{{ID: "canceled"}}, e.send)
		gone <- err
	}()
	for {
		c.mu.Lock()
		q := len(c.queue)
		c.mu.Unlock()
		if q == 1 {
			break
		}
		runtime.Gosched()
	}
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled call returned %v", err)
	}
	third := make(chan []Result)
	go func() {
		res, _ := c.do(context.Background(), []Entry{{ID: "third"}}, e.send)
		third <- res
	}()
	for {
		c.mu.Lock()
		q := len(c.queue)
		c.mu.Unlock()
		if q == 1 {
			break
		}
		runtime.Gosched()
	}
	e.gate <- struct{}{} // first round
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	e.gate <- struct{}{} // second round, led by the third call
	if res := <-third; len(res) != 1 || string(res[0].Verdict) != "third" {
		t.Fatalf("third: %+v", res)
	}
	if fmt.Sprint(e.rounds) != "[[first] [third]]" {
		t.Errorf("rounds %v: the canceled call's document was sent", e.rounds)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.leading || len(c.queue) != 0 {
		t.Errorf("coalescer left leading=%v queue=%d", c.leading, len(c.queue))
	}
}
