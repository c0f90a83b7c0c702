package service

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/neardup/neardup/internal/poll"
	"github.com/neardup/neardup/internal/synth"
)

// Issue 38, point 6: output writes held by the brokers (produce requests
// that get no answer) were invisible: /readyz stayed 200 and nothing said
// that nothing was acknowledged. Now, once the oldest unacknowledged
// record is older than kafka.produce_timeout, the member is not ready
// ("production stalled") and neardup_produce_stalled is 1; nothing behind
// it is committed; when the brokers answer again it goes on by itself,
// nothing lost.
func TestServeProductionStalled(t *testing.T) {
	t.Parallel()
	cl := startKafka(t, 2)
	var hold atomic.Bool
	release := make(chan struct{})
	hold.Store(true)
	outID := cl.TopicInfo(outTopic).TopicID // produce v13 names topics by id
	cl.ControlKey(kmsg.Produce.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		cl.KeepControl()
		if !hold.Load() {
			return nil, nil, false
		}
		for _, tp := range req.(*kmsg.ProduceRequest).Topics {
			if tp.Topic == outTopic || tp.TopicID == outID {
				cl.SleepControl(func() { <-release })
				break
			}
		}
		return nil, nil, false
	})
	c := loadConfig(t, cl.Brokers, "kafka.produce_timeout", "2s")
	in := start(t, c, memoryStore(t, c))
	docs := synth.Corpus(synth.Config{Docs: 60, Seed: 61, Contain: true})
	cl.Produce(t, inTopic, docMessages(t, docs)...)

	// Ready until the oldest held record is older than the timeout.
	poll.Until(t, 30*time.Second, func() error {
		if _, body := in.httpGet(t, "/readyz"); !strings.Contains(body, "production stalled") {
			return fmt.Errorf("/readyz %q with every output write held", body)
		}
		return nil
	})
	waitGauge(t, in, "neardup_produce_stalled", 1, 10*time.Second)
	if v := counterValue(t, in.reg, "neardup_produce_pending_seconds", ""); v < 2 {
		t.Errorf("neardup_produce_pending_seconds = %v while stalled, want > kafka.produce_timeout", v)
	}
	checkCommittedCovered(t, cl, "neardup-test", offsetsOf(t, cl))

	hold.Store(false)
	close(release)
	evs := waitEvents(t, cl, idsOf(docs), time.Minute)
	checkPlanted(t, docs, firstVerdicts(t, evs))
	in.waitReady(t, http.StatusOK, 30*time.Second)
	waitGauge(t, in, "neardup_produce_stalled", 0, 10*time.Second)
	if err := in.stop(t); err != nil {
		t.Fatal(err)
	}
}
