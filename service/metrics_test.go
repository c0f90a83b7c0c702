package service

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/segmentio/kafka-go"

	"github.com/neardup/neardup/internal/poll"
	"github.com/neardup/neardup/internal/synth"
)

// documentedMetrics returns the metric names docs/metrics.md lists.
func documentedMetrics(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var names []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(neardup_[a-z0-9_]+)`").FindAllStringSubmatch(string(b), -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			names = append(names, m[1])
		}
	}
	if len(names) < 20 {
		t.Fatalf("docs/metrics.md lists %d metrics", len(names))
	}
	return names
}

// scrape fetches and parses /metrics of a running instance.
func scrape(t *testing.T, in *instance) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + in.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// A running instance exports every documented metric, the counters move
// with the traffic, and no label carries a document id.
func TestServeMetrics(t *testing.T) {
	t.Parallel()
	cl := startKafka(t, 3)
	docs := synth.Corpus(synth.Config{Docs: 300, Seed: 13, Contain: true})
	msgs := append(docMessages(t, docs), kafka.Message{Key: []byte("bad"), Value: []byte("{not json")})
	cl.Produce(t, inTopic, msgs...)
	c := loadConfig(t, cl.Brokers, "kafka.unique_topic", uniqueTopic)
	in := start(t, c, memoryStore(t, c))
	waitEvents(t, cl, idsOf(docs), time.Minute)
	cl.WaitFor(t, deadTopic, 1, 30*time.Second, nil)
	moved := []struct{ name, label string }{
		{"neardup_documents_total", "unique"}, {"neardup_documents_total", "near"}, {"neardup_documents_total", "exact"},
		{"neardup_dead_letters_total", "malformed_json"}, {"neardup_candidates_per_document", ""},
		{"neardup_verifications_total", ""}, {"neardup_stage_duration_seconds", "decode"},
		{"neardup_stage_duration_seconds", "sketch"}, {"neardup_stage_duration_seconds", "index"},
		{"neardup_stage_duration_seconds", "verify"}, {"neardup_stage_duration_seconds", "produce"},
		{"neardup_end_to_end_seconds", ""}, {"neardup_rebalances_total", "assigned"},
		{"neardup_produced_records_total", "events"}, {"neardup_produced_records_total", "dead_letters"},
		{"neardup_produced_records_total", "unique"}, {"neardup_offset_commits_total", ""},
		{"neardup_index_up", ""}, {"neardup_ready", ""}, {"neardup_build_info", ""},
		{"neardup_kafka_connects_total", ""}, {"neardup_kafka_fetch_bytes_total", ""}, {"neardup_kafka_produce_bytes_total", ""},
	}
	// Wait for a commit and a health check to have moved their counters too.
	poll.Wait(30*time.Second, func() bool {
		for _, m := range moved {
			if counterValue(t, in.reg, m.name, m.label) <= 0 {
				return false
			}
		}
		return true
	})
	if code, _ := in.httpGet(t, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz %d", code)
	}
	in.waitReady(t, http.StatusOK, 10*time.Second)

	mfs := scrape(t, in)
	var exported []string
	for name := range mfs {
		exported = append(exported, name)
	}
	sort.Strings(exported)
	for _, name := range documentedMetrics(t) {
		if _, ok := mfs[name]; !ok {
			t.Errorf("documented metric %s is not exported", name)
		}
	}
	for _, m := range moved {
		if v := counterValue(t, in.reg, m.name, m.label); v <= 0 {
			t.Errorf("%s{%s} = %v after the traffic", m.name, m.label, v)
		}
	}
	if _, ok := mfs["neardup_consumer_lag_records"]; !ok {
		t.Error("no lag series for the assigned partitions")
	}
	ids := map[string]bool{}
	for _, d := range docs {
		ids[d.ID] = true
	}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if ids[l.GetValue()] {
					t.Errorf("%s has a document id in label %s", name, l.GetName())
				}
			}
		}
	}
	if testing.Verbose() {
		t.Logf("exported: %s", strings.Join(exported, " "))
	}
	if err := in.stop(t); err != nil {
		t.Fatal(err)
	}
}
