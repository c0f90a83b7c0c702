package deploy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/segmentio/kafka-go"
	corev1 "k8s.io/api/core/v1"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/kafkatest"
	"github.com/neardup/neardup/internal/poll"
	"github.com/neardup/neardup/internal/synth"
)

// exported is what a running instance's /metrics showed: for each series
// name (histograms as name_bucket, name_sum, name_count), its labels and
// the values seen for each.
type exported map[string]map[string]map[string]bool

func (e exported) add(name string, labels map[string]string) {
	if e[name] == nil {
		e[name] = map[string]map[string]bool{}
	}
	for k, v := range labels {
		if e[name][k] == nil {
			e[name][k] = map[string]bool{}
		}
		e[name][k][v] = true
	}
}

// scrapeInto adds one scrape of http://addr/metrics to e.
func scrapeInto(t *testing.T, addr string, e exported) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if m.GetHistogram() != nil {
				e.add(name+"_sum", labels)
				e.add(name+"_count", labels)
				labels["le"] = "+Inf"
				e.add(name+"_bucket", labels)
				continue
			}
			if m.GetSummary() != nil {
				e.add(name+"_sum", labels)
				e.add(name+"_count", labels)
				labels["quantile"] = "0.5"
			}
			e.add(name, labels)
		}
	}
}

// liveMetrics runs the neardup binary as neardup serve, configured by the
// Kubernetes ConfigMap (brokers, listen address and index URL replaced by
// the test's), against an in-process Kafka broker (kfake) and a real
// redis-server; it feeds it documents with duplicates and a malformed
// record, scrapes /metrics, then freezes Redis until the index error
// series appear and scrapes again. The series seen in either scrape are
// what the service exports.
func liveMetrics(t *testing.T) exported {
	t.Helper()
	requireTool(t, "redis-server", "apt-get install redis-server (make deps installs it)")
	var cm corev1.ConfigMap
	strict(t, "configmap.yaml", readFile(t, "kubernetes/configmap.yaml"), &cm)
	input, events, dead := cm.Data["NEARDUP_KAFKA_INPUT_TOPIC"], cm.Data["NEARDUP_KAFKA_OUTPUT_TOPIC"], cm.Data["NEARDUP_KAFKA_DEAD_LETTER_TOPIC"]
	cl := kafkatest.Start(t, kafkatest.Topic(input, 6), kafkatest.Topic(events, 3), kafkatest.Topic(dead, 1))
	redis := redistest.Start(t, redistest.Options{})

	docs := synth.Corpus(synth.Config{Docs: 300, Seed: 15, Contain: true})
	var msgs []kafka.Message
	for _, d := range docs {
		v, _ := json.Marshal(map[string]string{"id": d.ID, "text": d.Text})
		msgs = append(msgs, kafka.Message{Key: []byte(d.ID), Value: v})
	}
	msgs = append(msgs, kafka.Message{Key: []byte("bad"), Value: []byte("{not json")})
	cl.Produce(t, input, msgs...)

	env := []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range cm.Data {
		switch k {
		case "NEARDUP_KAFKA_BROKERS", "NEARDUP_HTTP_ADDR":
		default:
			env = append(env, k+"="+v)
		}
	}
	env = append(env, "NEARDUP_KAFKA_BROKERS="+cl.Brokers, "NEARDUP_HTTP_ADDR=127.0.0.1:0", "NEARDUP_HTTP_ADMIN_ADDR=127.0.0.1:0",
		"NEARDUP_INDEX_URL=redis://"+redis.Addr+"/0", "NEARDUP_INDEX_TIMEOUT=1s",
		"NEARDUP_PIPELINE_EMIT=all") // an event per document, to wait for
	cmd := exec.Command(neardupBin, "serve")
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 1000)
	go func() { // owned: ends when the process closes stderr
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // the test reads only the first lines
			}
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	addr := ""
	for addr == "" {
		select {
		case l := <-lines:
			var rec map[string]any
			if json.Unmarshal([]byte(l), &rec) == nil {
				addr, _ = rec["http"].(string)
			}
		case err := <-exited:
			t.Fatalf("neardup serve exited: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("neardup serve logged no listen address")
		}
	}
	if got := cl.WaitFor(t, events, len(docs), 2*time.Minute, nil); len(got) < len(docs) {
		t.Fatalf("%d events for %d documents", len(got), len(docs))
	}
	cl.WaitFor(t, dead, 1, 30*time.Second, nil)
	waitFor(t, "ready", func() bool { return httpStatus(addr+"/readyz") == http.StatusOK })
	// Commits and the lag gauges follow on their own intervals.
	waitFor(t, "an offset commit and the lag series", func() bool {
		e := exported{}
		scrapeInto(t, addr, e)
		return e["neardup_offset_commits_total"] != nil && e["neardup_consumer_lag_records"] != nil
	})
	e := exported{}
	scrapeInto(t, addr, e)

	// The index away: errors and retries by operation, index_up 0.
	redis.Freeze()
	more := synth.Corpus(synth.Config{Docs: 20, Seed: 16})
	msgs = msgs[:0]
	for _, d := range more {
		v, _ := json.Marshal(map[string]string{"id": d.ID, "text": d.Text})
		msgs = append(msgs, kafka.Message{Key: []byte(d.ID), Value: v})
	}
	cl.Produce(t, input, msgs...)
	waitFor(t, "index errors", func() bool {
		f := exported{}
		scrapeInto(t, addr, f)
		return f["neardup_index_errors_total"] != nil && f["neardup_index_retries_total"] != nil
	})
	scrapeInto(t, addr, e)
	redis.Thaw()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("neardup serve after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("neardup serve did not stop within 30s of SIGTERM")
	}
	exited <- nil // for the cleanup
	return e
}

func httpStatus(url string) int {
	resp, err := http.Get("http://" + url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// waitFor polls cond for up to a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Until(t, time.Minute, func() error {
		if !cond() {
			return fmt.Errorf("no %s", what)
		}
		return nil
	})
}

// summary lists the exported names, for failure messages.
func (e exported) summary() string {
	var names []string
	for n := range e {
		if strings.HasPrefix(n, "neardup_") {
			names = append(names, n)
		}
	}
	return strings.Join(names, " ")
}
