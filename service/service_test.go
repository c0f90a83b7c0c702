package service

import (
	"testing"
	"time"

	"github.com/neardup/neardup/internal/synth"
)

// Scenario (a): planted duplicates over 6 partitions; every planted
// duplicate is reported with the right cluster and nothing else is; after
// a graceful stop every offset is committed.
func TestServePlantedDuplicates(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1500
	}
	cl := startKafka(t, 6)
	docs := synth.Corpus(synth.Config{Docs: n, Seed: 7, Contain: true})
	cl.Produce(t, inTopic, docMessages(t, docs)...)
	c := loadConfig(t, cl.Brokers)
	in := start(t, c, memoryStore(t, c))
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	t0 := time.Now()
	evs := waitEvents(t, cl, ids, 3*time.Minute)
	t.Logf("%d documents decided in %v", len(docs), time.Since(t0))
	checkPlanted(t, docs, firstVerdicts(t, evs))
	if err := in.stop(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	committed := cl.Committed(t, "neardup-test", inTopic)
	total := int64(0)
	for _, off := range committed {
		total += off
	}
	if total != int64(len(docs)) {
		t.Errorf("committed offsets sum to %d, want %d (%v)", total, len(docs), committed)
	}
}
