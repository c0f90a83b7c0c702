package service

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/poll"
	"github.com/neardup/neardup/internal/synth"
)

// Issue 38, point 2: a Redis Cluster failover is survived. Over a real
// 3+3 cluster (cluster-node-timeout 5 s), one master is SIGSTOPped for
// 30 s: its replica is promoted while it is frozen, and the member must
// decide again within 10 s of the promotion (the slot map reloaded, the
// frozen node's hung connections abandoned at index.timeout), not wait
// for the old master to come back. When it does come back (now a
// replica, answering MOVED for its old slots) the member follows the
// redirects and never stops. Every planted duplicate is found.
func TestServeClusterFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30 s freeze: run by make unit, not by the race run (-short)")
	}
	t.Parallel()
	nodes := redistest.StartReplicatedCluster(t)
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.Addr
	}
	cl := startKafka(t, 3)
	c := loadConfig(t, cl.Brokers, "index.url", "redis+cluster://"+strings.Join(addrs, ",")+"?namespace=failover")
	in := start(t, c, openStore(t, c))
	in.waitReady(t, http.StatusOK, 30*time.Second)

	docs := synth.Corpus(synth.Config{Docs: 900, Seed: 38, Contain: true})
	third := len(docs) / 3
	cl.Produce(t, inTopic, docMessages(t, docs[:third])...)
	waitEvents(t, cl, idsOf(docs[:third]), time.Minute)

	// Freeze the master of the first node's slots; its replica is the
	// one whose master it is.
	victim := nodes[0]
	ctx := context.Background()
	var replica *redistest.Server
	for _, n := range nodes[1:] {
		if role, m, err := n.Role(ctx); err == nil && role == "slave" && m == victim.Addr {
			replica = n
		}
	}
	if replica == nil {
		t.Fatalf("no replica of %s", victim.Addr)
	}
	victim.Freeze()
	frozen := time.Now()
	thawed := false
	thaw := func() {
		if !thawed {
			victim.Thaw()
			thawed = true
		}
	}
	t.Cleanup(thaw)
	cl.Produce(t, inTopic, docMessages(t, docs[third:2*third])...)

	// The promotion: the replica reports itself master.
	poll.Until(t, time.Until(frozen.Add(25*time.Second)), func() error {
		if role, _, err := replica.Role(ctx); err != nil || role != "master" {
			return fmt.Errorf("replica %s not promoted since %s froze: role %q, %v", replica.Addr, victim.Addr, role, err)
		}
		return nil
	})
	promoted := time.Now()
	t.Logf("replica %s promoted %v after %s froze", replica.Addr, promoted.Sub(frozen).Round(100*time.Millisecond), victim.Addr)

	// Within 10 s of the promotion, with the old master still frozen,
	// every document produced meanwhile is decided.
	waitEvents(t, cl, idsOf(docs[:2*third]), 10*time.Second)
	t.Logf("decided again %v after the promotion", time.Since(promoted).Round(100*time.Millisecond))
	in.waitReady(t, http.StatusOK, 10*time.Second)
	in.checkRunning(t)

	// The old master comes back after 30 s frozen, as a replica. The
	// sleep is the scenario: the fault is held for 30 s.
	time.Sleep(time.Until(frozen.Add(30 * time.Second)))
	thaw()
	cl.Produce(t, inTopic, docMessages(t, docs[2*third:])...)
	evs := waitEvents(t, cl, idsOf(docs), time.Minute)
	checkPlanted(t, docs, firstVerdicts(t, evs))
	in.checkRunning(t)
	if err := in.stop(t); err != nil {
		t.Fatal(err)
	}
}
