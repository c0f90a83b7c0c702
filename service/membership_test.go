package service

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/poll"
	"github.com/neardup/neardup/internal/synth"
	"github.com/neardup/neardup/pipeline"
)

// memberEnv, set to "key=value;key=value..." configuration overrides,
// makes the test binary run one service member until it is killed
// (runMember), so that a test can SIGKILL a member: a member that dies
// without leaving its group, as a crashed pod does.
const memberEnv = "NEARDUP_TEST_MEMBER"

// runMember runs a service with a memory index from the overrides in
// memberEnv, prints "ready" on stdout once it has joined, and runs until
// killed. It returns the exit code.
func runMember() int {
	o := &config.Overrides{}
	for _, kv := range strings.Split(os.Getenv(memberEnv), ";") {
		k, v, _ := strings.Cut(kv, "=")
		o.Add(k, v)
	}
	c, err := config.Load("", nil, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	pc, err := pipeline.FromConfig(&c, "test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	probe, err := pipeline.New(pc, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	st, err := newMemoryIndex(probe)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	reg := prometheus.NewRegistry()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	svc, err := New(context.Background(), Options{Config: &c, Pipeline: pc, Store: st, Registerer: reg, Gatherer: reg, Logger: log, Version: "member"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() { // owned by the process, which only ends by a signal
		if poll.Wait(10*time.Minute, svc.Ready) {
			fmt.Println("ready")
		}
	}()
	if err := svc.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startMember starts a member in a child process with the configuration
// overrides kv (on top of the test defaults) and waits until it is ready.
func startMember(t *testing.T, brokers string, kv ...string) *exec.Cmd {
	t.Helper()
	pairs := []string{"kafka.brokers=" + brokers, "kafka.input_topic=" + inTopic, "kafka.output_topic=" + outTopic,
		"kafka.dead_letter_topic=" + deadTopic, "kafka.group=neardup-test", "pipeline.emit=all", "http.addr=127.0.0.1:0",
		"kafka.commit_interval=100ms"}
	for i := 0; i+1 < len(kv); i += 2 {
		pairs = append(pairs, kv[i]+"="+kv[i+1])
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), memberEnv+"="+strings.Join(pairs, ";"))
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ready := make(chan bool, 1)
	go func() { // ends when the child's stdout closes
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- true
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("member process not ready after 30s")
	}
	return cmd
}

// Issue 24, point 3: a member that dies without leaving its group (its
// process SIGKILLed) held its partitions for the session timeout, 45 s
// by default, with no key to change it. With the default
// kafka.session_timeout (10 s) and kafka.rebalance_timeout (20 s), its
// partitions are taken over and every record on them is decided within
// 30 s of the kill.
func TestServeMemberKilledReassignedWithin30s(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a member process for about 30 s")
	}
	cl := startKafka(t, 6)
	c := loadConfig(t, cl.Brokers)
	a := start(t, c, memoryStore(t, c))
	a.waitReady(t, http.StatusOK, 30*time.Second)
	victim := startMember(t, cl.Brokers)
	// The survivor gives half of its partitions to the victim.
	poll.Until(t, 30*time.Second, func() error {
		if n := len(metricLag(t, a)); n != 3 {
			return fmt.Errorf("survivor owns %d partitions after the victim joined, want 3", n)
		}
		return nil
	})
	if err := victim.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	docs := synth.Corpus(synth.Config{Docs: 600, Seed: 61})
	cl.Produce(t, inTopic, docMessages(t, docs)...)
	waitEvents(t, cl, idsOf(docs), 30*time.Second-time.Since(killed))
	t.Logf("every record decided %v after the kill", time.Since(killed).Round(100*time.Millisecond))
	if err := a.stop(t); err != nil {
		t.Fatal(err)
	}
}

// newMemoryIndex opens a memory index for p's parameters.
func newMemoryIndex(p *pipeline.Pipeline) (index.Store, error) {
	return index.NewMemory(index.MemoryConfig{Params: p.IndexParams()})
}
