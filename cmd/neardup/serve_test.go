package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/internal/kafkatest"
	"github.com/neardup/neardup/internal/synth"
)

// TestMain lets the test binary stand in for the neardup command, so a
// test can run it as a real process (signals, environment, exit code).
func TestMain(m *testing.M) {
	if os.Getenv("NEARDUP_TEST_AS_COMMAND") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// asCommand returns the test binary set up to run as "neardup args...".
func asCommand(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append([]string{"NEARDUP_TEST_AS_COMMAND=1", "PATH=" + os.Getenv("PATH")}, env...)
	return cmd
}

// neardup serve runs from environment variables alone, logs JSON, serves
// its endpoints, decides the documents, and on SIGTERM finishes, commits
// and exits 0 within the shutdown deadline.
func TestServeCommandEnvOnlyAndSIGTERM(t *testing.T) {
	cl := kafkatest.Start(t, kafkatest.Topic("crawl", 3), kafkatest.Topic("neardup.events", 3), kafkatest.Topic("neardup.dead-letters", 1))
	docs := synth.Corpus(synth.Config{Docs: 200, Seed: 8, Contain: true})
	produceDocs(t, cl, "crawl", docs)

	cmd := asCommand(t, []string{
		"NEARDUP_KAFKA_BROKERS=" + cl.Brokers, "NEARDUP_KAFKA_INPUT_TOPIC=crawl", "NEARDUP_HTTP_ADDR=127.0.0.1:0", "NEARDUP_HTTP_ADMIN_ADDR=127.0.0.1:0",
		"NEARDUP_PIPELINE_EMIT=all", "NEARDUP_KAFKA_SASL_PASSWORD=never-printed-77",
	}, "serve")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	// The first log line is JSON and names the endpoint.
	lines := logLines(stderr)
	var all []string
	addr := ""
	for addr == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve exited: %s", strings.Join(all, "\n"))
			}
			all = append(all, l)
			var rec map[string]any
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				t.Fatalf("log line is not JSON: %q", l)
			}
			if a, ok := rec["http"].(string); ok {
				addr = a
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no start-up log line: %s", strings.Join(all, "\n"))
		}
	}
	got := cl.WaitFor(t, "neardup.events", len(docs), time.Minute, nil)
	if len(got) < len(docs) {
		t.Fatalf("%d events for %d documents", len(got), len(docs))
	}
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz %d %s", resp.StatusCode, body)
	}

	t0 := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for l := range lines {
		all = append(all, l)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) || err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, strings.Join(all, "\n"))
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	logs := strings.Join(all, "\n")
	if strings.Contains(logs, "never-printed-77") {
		t.Error("the SASL password appears in the logs")
	}
	// The start-up log shows the thresholds the run uses, the profile's,
	// not the 0 that stands for them.
	if !strings.Contains(logs, `"verify.jaccard":"0.5"`) || !strings.Contains(logs, `"sketch.bands":"30"`) {
		t.Errorf("the start-up log does not show the effective verify.jaccard and sketch.bands:\n%s", logs)
	}
	total := int64(0)
	for _, off := range cl.Committed(t, "neardup", "crawl") {
		total += off
	}
	if total != int64(len(docs)) {
		t.Errorf("committed %d of %d after SIGTERM", total, len(docs))
	}
}

// Missing required keys are usage errors that name the key and its
// environment variable.
func TestServeCommandConfigErrors(t *testing.T) {
	for _, tt := range []struct {
		env  []string
		want string
	}{
		{nil, "NEARDUP_KAFKA_BROKERS"},
		{[]string{"NEARDUP_KAFKA_BROKERS=127.0.0.1:1"}, "NEARDUP_KAFKA_INPUT_TOPIC"},
		{[]string{"NEARDUP_KAFKA_BROKERS=127.0.0.1:1", "NEARDUP_KAFKA_INPUT_TOPIC=a", "NEARDUP_KAFKA_OUTPUT_TOPIC=a"}, "kafka.output_topic"},
		{[]string{"NEARDUP_KAFKA_BROKERS=127.0.0.1:1", "NEARDUP_KAFKA_INPUT_TOPIC=a", "NEARDUP_KAFKA_SASL_MECHANISM=gssapi"}, "kafka.sasl.mechanism"},
	} {
		out, err := asCommand(t, tt.env, "serve").CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != exitUsage || !strings.Contains(string(out), tt.want) {
			t.Errorf("env %v: %v, output %q; want exit 2 naming %s", tt.env, err, out, tt.want)
		}
	}
}

// The JSON log writes durations as "10s", not integer nanoseconds.
func TestLoggerDurations(t *testing.T) {
	var b strings.Builder
	newLogger(&b, config.Log{Format: "json", Level: "info"}).Info("x", "deadline", 10*time.Second)
	if !strings.Contains(b.String(), `"deadline":"10s"`) {
		t.Errorf("log line %s", b.String())
	}
}

// produceDocs produces docs to topic as JSON records keyed by their ids,
// as a crawler would.
func produceDocs(t *testing.T, cl *kafkatest.Cluster, topic string, docs []synth.Doc) {
	t.Helper()
	msgs := make([]kafka.Message, 0, len(docs))
	for _, d := range docs {
		v, _ := json.Marshal(map[string]string{"id": d.ID, "text": d.Text})
		msgs = append(msgs, kafka.Message{Key: []byte(d.ID), Value: v})
	}
	cl.Produce(t, topic, msgs...)
}

// logLines sends each line a process writes to r (its standard error) on
// the returned channel, closed when r ends; the goroutine that reads is
// owned by the process: it ends when the process closes r.
func logLines(r io.Reader) <-chan string {
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return lines
}
