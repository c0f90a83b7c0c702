package service

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/kafkatest"
	"github.com/neardup/neardup/internal/poll"
	"github.com/neardup/neardup/internal/synth"
)

// brokerLag is the group's lag per partition of topic as the brokers
// measure it, read with kafka-go: end offset − committed offset (− 0, the
// log start, when nothing is committed).
func brokerLag(t testing.TB, cl *kafkatest.Cluster, group, topic string) map[int]int64 {
	t.Helper()
	committed := cl.Committed(t, group, topic)
	out := map[int]int64{}
	for _, p := range cl.Partitions(t, topic) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		conn, err := cl.Dialer.DialLeader(ctx, "tcp", cl.Brokers, topic, p)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		end, err := conn.ReadLastOffset()
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[p] = end - max(committed[p], 0)
	}
	return out
}

// metricLag is neardup_consumer_lag_records per partition of in.
func metricLag(t testing.TB, in *instance) map[int]int64 {
	t.Helper()
	mfs, err := in.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int64{}
	for _, mf := range mfs {
		if mf.GetName() != "neardup_consumer_lag_records" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "partition" {
					p, _ := strconv.Atoi(l.GetValue())
					out[p] = int64(m.GetGauge().GetValue())
				}
			}
		}
	}
	return out
}

func sum(m map[int]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}

// Issue 24, point 2: neardup_consumer_lag_records read about a tenth of
// the lag under a backlog (partitions without a record in flight read 0),
// and the in-flight gauges never went back to 0. Now, with a backlog held
// by a frozen index, every partition's gauge is the brokers' lag (end
// offset − committed) within 5 %; once everything is decided the lag and
// in-flight gauges read 0 without any new record.
func TestServeLagAsBrokerMeasures(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	cl := startKafka(t, 6)
	c := loadConfig(t, cl.Brokers, "index.url", "redis://"+srv.Addr+"/0?namespace=lag", "index.timeout", "500ms",
		"kafka.max_inflight_records", "64")
	in := start(t, c, openStore(t, c))
	in.waitReady(t, http.StatusOK, 30*time.Second)

	// The race run (-short, make race) builds half the backlog; make unit
	// the whole.
	n, backlog := 6000, int64(4000)
	if testing.Short() {
		n, backlog = 3000, 2000
	}
	docs := synth.Corpus(synth.Config{Docs: n, Seed: 51})
	first := docs[:n/10]
	cl.Produce(t, inTopic, docMessages(t, first)...)
	waitEvents(t, cl, idsOf(first), time.Minute)

	srv.Freeze()
	cl.Produce(t, inTopic, docMessages(t, docs[n/10:])...)
	var broker, got map[int]int64
	poll.WaitEvery(30*time.Second, 200*time.Millisecond, func() bool {
		broker = brokerLag(t, cl, "neardup-test", inTopic)
		got = metricLag(t, in)
		return within(got, broker, 0.05)
	})
	if !within(got, broker, 0.05) {
		t.Errorf("lag gauge %v (sum %d), brokers' lag %v (sum %d): want every partition within 5%%", got, sum(got), broker, sum(broker))
	}
	if sum(broker) < backlog {
		t.Errorf("brokers' lag %d: the backlog did not build", sum(broker))
	}

	srv.Thaw()
	waitEvents(t, cl, idsOf(docs), 2*time.Minute)
	poll.UntilEvery(t, 30*time.Second, 200*time.Millisecond, func() error {
		got = metricLag(t, in)
		recs := counterValue(t, in.reg, "neardup_inflight_records", "")
		bytes := counterValue(t, in.reg, "neardup_inflight_bytes", "")
		if sum(got) != 0 || len(got) != 6 || recs != 0 || bytes != 0 {
			return fmt.Errorf("at idle: lag %v, in flight %v records, %v bytes; want 0 for all 6 partitions and 0 in flight", got, recs, bytes)
		}
		return nil
	})
	if err := in.stop(t); err != nil {
		t.Fatal(err)
	}
}

// within reports whether got has every partition of want within frac of
// it (and 5 records, for partitions with almost no lag).
func within(got, want map[int]int64, frac float64) bool {
	if len(got) != len(want) {
		return false
	}
	for p, w := range want {
		g, ok := got[p]
		if !ok || math.Abs(float64(g-w)) > max(frac*float64(w), 5) {
			return false
		}
	}
	return true
}
