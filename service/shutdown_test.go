package service

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/neardup/neardup/internal/synth"
)

// Issue 24, point 6: SIGTERM while the brokers were frozen (connections
// open, no answer) did not exit within 40 s, though shutdown is bounded
// by kafka.shutdown_timeout. Now Run returns within
// kafka.shutdown_timeout + 5 s whatever the brokers do, with
// ErrShutdownDeadline when records in flight were abandoned.
func TestServeShutdownBrokerFrozen(t *testing.T) {
	cl := startKafka(t, 3)
	c := loadConfig(t, cl.Brokers, "kafka.shutdown_timeout", "2s")
	in := start(t, c, memoryStore(t, c))
	in.waitReady(t, http.StatusOK, 30*time.Second)
	docs := synth.Corpus(synth.Config{Docs: 300, Seed: 71})
	cl.Produce(t, inTopic, docMessages(t, docs[:100])...)
	waitEvents(t, cl, idsOf(docs[:100]), time.Minute)
	cl.Produce(t, inTopic, docMessages(t, docs[100:])...)

	// Frozen: every request is read and never answered.
	var frozen atomic.Bool
	frozen.Store(true)
	cl.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		cl.KeepControl()
		return nil, nil, frozen.Load()
	})
	t.Cleanup(func() { frozen.Store(false) })
	// The sleep is the scenario: the broker stays frozen half a second,
	// so requests pile up unanswered before the shutdown.
	time.Sleep(500 * time.Millisecond)

	t0 := time.Now()
	in.cancel()
	var err error
	select {
	case err = <-in.done:
		in.done <- err
	case <-time.After(time.Minute):
		t.Fatal("no exit within a minute of the shutdown with the brokers frozen")
	}
	took := time.Since(t0)
	t.Logf("Run returned %v after %v", err, took.Round(100*time.Millisecond))
	if limit := 2*time.Second + 5*time.Second; took > limit {
		t.Errorf("shutdown took %v with the brokers frozen, want at most kafka.shutdown_timeout + 5s = %v", took, limit)
	}
	if err != nil && !errors.Is(err, ErrShutdownDeadline) {
		t.Errorf("Run: %v, want nil or ErrShutdownDeadline", err)
	}
	// The clients' closes, abandoned at the deadline, end once the
	// brokers answer (or their requests time out).
	frozen.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := in.WaitClosed(ctx); err != nil {
		t.Errorf("clients still closing 30s after Run returned: %v", err)
	}
}
