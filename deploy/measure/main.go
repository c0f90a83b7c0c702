// Command measure runs neardup serve as the Kubernetes kit configures it
// and reports what sizing needs: documents/s, CPU per document of neardup
// and of redis-server, neardup's peak resident set, and Redis memory per
// document. It is how the figures of docs/operations.md, "Capacity", and
// the Deployment's resource requests were measured:
//
//	cd deploy && go run ./measure -docs 20000
//	cd deploy && go run ./measure -docs 20000 -set NEARDUP_SKETCH_SIMHASH_K=3
//
// With -bytes, every document's text is its synthetic text repeated to
// that many bytes: -bytes 16776192 (sketch.max_bytes less 1 KiB) is the
// stream of largest documents the kit accepts, the memory budget's worst
// case (docs/operations.md, "Memory budget"):
//
//	cd deploy && go run ./measure -docs 24 -bytes 16776192
//
// The broker is kfake in this process; neardup serve (built from the
// repository with CGO_ENABLED=0, as in the image) and redis-server run as
// child processes, so each one's CPU and memory are its own. The documents
// are those of neardup bench serve (synthetic, ~4.9 KB, 10 % exact, near
// and partial copies each), all produced before neardup starts.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"sigs.k8s.io/yaml"

	"github.com/neardup/neardup/internal/synth"
)

type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, " ") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	docs := flag.Int("docs", 20000, "documents to decide")
	partitions := flag.Int("partitions", 6, "partitions of the input topic")
	index := flag.String("index", "local-redis", "local-redis (a redis-server from PATH) or memory")
	size := flag.Int("bytes", 0, "if > 0, each document's text is repeated to this many bytes")
	memLimit := flag.String("gomemlimit", "512MiB", "GOMEMLIMIT of neardup serve (the kit sets the container limit, 512Mi); empty: none")
	var sets setFlags
	flag.Var(&sets, "set", "NEARDUP_KEY=value on top of the ConfigMap (repeatable)")
	flag.Parse()
	if *memLimit != "" {
		sets = append([]string{"GOMEMLIMIT=" + *memLimit}, sets...)
	}
	if err := run(*docs, *partitions, *index, *size, sets); err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(1)
	}
}

func run(n, partitions int, index string, size int, sets []string) error {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "neardup-measure-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "neardup")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/neardup")
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v\n%s", err, out)
	}

	var cm struct{ Data map[string]string }
	b, err := os.ReadFile("kubernetes/configmap.yaml")
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(b, &cm); err != nil {
		return err
	}
	input := cm.Data["NEARDUP_KAFKA_INPUT_TOPIC"]
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(partitions), input),
		kfake.SeedTopics(int32(partitions), cm.Data["NEARDUP_KAFKA_OUTPUT_TOPIC"]), kfake.SeedTopics(1, cm.Data["NEARDUP_KAFKA_DEAD_LETTER_TOPIC"]),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return net.Listen(network, "127.0.0.1:0") }),
		kfake.BrokerConfigs(map[string]string{"message.max.bytes": strconv.Itoa(max(size+1<<20, 1<<20))}))
	if err != nil {
		return err
	}
	defer kc.Close()
	brokers := strings.Join(kc.ListenAddrs(), ",")

	url := "memory"
	var rdb *redis.Client
	var redisPID int
	if index == "local-redis" {
		var stop func()
		url, rdb, redisPID, stop, err = startRedis(tmp)
		if err != nil {
			return err
		}
		defer stop()
	}

	corpus := synth.Corpus(synth.Config{Docs: n, Seed: 2026, MinWords: 900, MaxWords: 1150, Contain: true})
	var bytes int
	pc, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.DefaultProduceTopic(input), kgo.ProducerLinger(time.Millisecond),
		kgo.ProducerBatchMaxBytes(int32(max(size+1<<20, 1<<20))))
	if err != nil {
		return err
	}
	var recs []*kgo.Record
	for _, d := range corpus {
		text := d.Text
		if size > 0 {
			text = strings.Repeat(d.Text+" ", size/(len(d.Text)+1)+1)[:size]
		}
		v, _ := json.Marshal(map[string]string{"id": d.ID, "text": text})
		bytes += len(v)
		rec := &kgo.Record{Key: []byte(d.ID), Value: v}
		if size > 0 { // one at a time: the process holds one large record
			if err := pc.ProduceSync(ctx, rec).FirstErr(); err != nil {
				return err
			}
			continue
		}
		recs = append(recs, rec)
	}
	if err := pc.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return err
	}
	pc.Close()
	recs, corpus = nil, nil
	fmt.Printf("%d documents produced, mean record %.1f KB, %d partitions, index %s\n", n, float64(bytes)/float64(n)/1024, partitions, index)

	var mem0, redisCPU0 float64
	if rdb != nil {
		mem0, redisCPU0 = redisInfo(ctx, rdb)
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range cm.Data {
		env = append(env, k+"="+v)
	}
	env = append(env, "NEARDUP_KAFKA_BROKERS="+brokers, "NEARDUP_HTTP_ADDR=127.0.0.1:0", "NEARDUP_INDEX_URL="+url)
	env = append(env, sets...)
	cmd := exec.Command(bin, "serve")
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	addr, err := listenAddr(stderr)
	if err != nil {
		return err
	}
	go func() { // owned by the process: ends when it closes stderr
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
		}
	}()

	var first time.Time
	var cpuFirst float64
	for {
		decided, err := decided(addr)
		if err != nil {
			return err
		}
		if decided > 0 && first.IsZero() {
			first, cpuFirst = time.Now(), procCPU(cmd.Process.Pid)
		}
		if decided >= float64(n) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	elapsed := time.Since(first)
	cpu := procCPU(cmd.Process.Pid) - cpuFirst
	hwm := procStatus(cmd.Process.Pid, "VmHWM")
	fmt.Printf("neardup serve: %.0f docs/s, CPU %.0f µs/doc, peak resident set %.0f MiB\n",
		float64(n)/elapsed.Seconds(), cpu/float64(n)*1e6, hwm/1024)
	if rdb != nil {
		mem1, redisCPU1 := redisInfo(ctx, rdb)
		fmt.Printf("redis-server: CPU %.0f µs/doc (of the whole run, PID %d), used_memory %.0f B/doc (%.1f MB for %d documents)\n",
			(redisCPU1-redisCPU0)/float64(n)*1e6, redisPID, (mem1-mem0)/float64(n), (mem1-mem0)/1e6, n)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	return cmd.Wait()
}

// listenAddr reads log lines until the one naming the metrics endpoint.
func listenAddr(stderr interface{ Read([]byte) (int, error) }) (string, error) {
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil {
			if a, ok := rec["http"].(string); ok {
				return a, nil
			}
		}
	}
	return "", fmt.Errorf("neardup serve exited before listening")
}

// decided is the sum of neardup_documents_total.
func decided(addr string) (float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, err
	}
	var sum float64
	if mf := mfs["neardup_documents_total"]; mf != nil {
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum, nil
}

// procCPU is a process's user + system CPU seconds (/proc/PID/stat).
func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

// procStatus is a kB field of /proc/PID/status (VmHWM: peak resident set).
func procStatus(pid int, field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb
		}
	}
	return 0
}

func startRedis(dir string) (url string, rdb *redis.Client, pid int, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, 0, nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return "", nil, 0, nil, fmt.Errorf("redis-server (apt-get install redis-server): %w", err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	rdb = redis.NewClient(&redis.Options{Addr: addr})
	stop = func() { rdb.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() }
	for deadline := time.Now().Add(10 * time.Second); rdb.Ping(context.Background()).Err() != nil; {
		if time.Now().After(deadline) {
			stop()
			return "", nil, 0, nil, fmt.Errorf("redis-server did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "redis://" + addr + "/0", rdb, cmd.Process.Pid, stop, nil
}

// redisInfo returns used_memory (bytes) and used CPU seconds.
func redisInfo(ctx context.Context, rdb *redis.Client) (mem, cpu float64) {
	info, err := rdb.Info(ctx, "memory", "cpu").Result()
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(info, "\r\n") {
		k, v, _ := strings.Cut(l, ":")
		f, _ := strconv.ParseFloat(v, 64)
		switch k {
		case "used_memory":
			mem = f
		case "used_cpu_sys", "used_cpu_user":
			cpu += f
		}
	}
	return mem, cpu
}
