package servebench

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/neardup/neardup/bench/corpus"
	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/consumer"
	"github.com/neardup/neardup/pipeline"
	"github.com/neardup/neardup/service"
	"github.com/neardup/neardup/sink"
)

// ErrUsage marks an error in the options (a caller's usage error).
var ErrUsage = errors.New("servebench: bad options")

// RunBroker runs an in-memory Kafka-protocol broker (kfake) with topics of
// partitions partitions, prints its address to stdout and serves until ctx
// ends or stdin closes (the process that started it ended).
func RunBroker(ctx context.Context, partitions int, topics []string, stdin io.Reader, stdout io.Writer) error {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(partitions),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return net.Listen(network, "127.0.0.1:0") }),
		kfake.SeedTopics(int32(partitions), topics...))
	if err != nil {
		return err
	}
	defer kc.Close()
	fmt.Fprintln(stdout, kc.ListenAddrs()[0])
	eof := make(chan struct{})
	go func() { // owned: ends with stdin, which the parent holds
		_, _ = io.Copy(io.Discard, stdin)
		close(eof)
	}()
	select {
	case <-ctx.Done():
	case <-eof:
	}
	return nil
}

// Options are the settings of one run.
type Options struct {
	// Docs is the documents of the throughput run, LatencyDocs those of
	// the latency run (each at least 100).
	Docs, LatencyDocs int
	// Partitions of the input topic.
	Partitions int
	// Rate is the fraction of the sustained rate the latency run
	// produces at, in (0, 1].
	Rate float64
	// ProfileDir, when set, gets a CPU profile of each throughput run,
	// and the output says where the time went.
	ProfileDir string
	// Corpus names the documents (bench/corpus.Open: real, real:DUP,
	// sites, generated or a corpus file); Seed seeds it (0: its default);
	// DataDir is the shared data folder ("": found by internal/dataset).
	Corpus  string
	Seed    uint64
	DataDir string
	// Overrides and ConfigPath configure the service as in serve (default
	// web profile).
	Overrides  *config.Overrides
	ConfigPath string
	// Indexes are the index kinds: memory, local-redis (a redis-server
	// from PATH on a free port), local-cluster (three as a Redis Cluster)
	// or a redis:// URL.
	Indexes []string
	// Version is the build version the stored records carry.
	Version string
	// BrokerCommand is the command line that runs RunBroker in a process
	// of its own and prints its address (the topics and --partitions N are
	// appended).
	BrokerCommand []string
}

// benchFlags are the settings of one bench serve run.
type benchFlags = Options

// Run measures the service end to end for each index kind and prints the
// figures and the table to stdout.
func Run(ctx context.Context, o Options, stdout io.Writer) error {
	if o.Docs < 100 || o.LatencyDocs < 100 || o.Rate <= 0 || o.Rate > 1 {
		return fmt.Errorf("%w: want --docs and --latency-docs >= 100 and 0 < --rate <= 1", ErrUsage)
	}
	if len(o.BrokerCommand) == 0 {
		return fmt.Errorf("%w: no broker command", ErrUsage)
	}
	c, err := corpus.Open(o.Corpus, o.Docs+o.LatencyDocs, o.Seed, o.DataDir)
	if err != nil {
		return err
	}
	if len(c.Docs) < o.Docs+100 {
		return fmt.Errorf("%w: corpus %s has %d documents, want --docs + at least 100", ErrUsage, o.Corpus, len(c.Docs))
	}
	docs := make([]benchDoc, len(c.Docs))
	for i, d := range c.Docs {
		docs[i] = benchDoc{ID: d.ID, Text: d.Text, Key: c.Truth[i].Groups[0]}
	}
	fmt.Fprintf(stdout, "corpus %s: %v; %d cores (GOMAXPROCS)\n", c.Name, c.Stats(), runtime.GOMAXPROCS(0))
	var results []benchResult
	for _, kind := range o.Indexes {
		r, err := benchIndex(ctx, strings.TrimSpace(kind), docs, o, stdout)
		if err != nil {
			return fmt.Errorf("bench %s: %w", kind, err)
		}
		results = append(results, r)
	}
	benchTable(stdout, results)
	return nil
}

// benchDoc is a document to produce: Key is its record key (a copy's is
// its original's, so that a cluster shares a partition).
type benchDoc struct{ ID, Text, Key string }

// benchResult is one index kind's figures.
type benchResult struct {
	index                string
	docs                 int
	rate, cpuUS, redisUS float64 // docs/s; µs of CPU per document
	redisCmds            float64 // Redis commands per document
	scanRate, scanCPU    float64
	scanRedisUS          float64
	latencyRate          float64
	p50, p99, pmax       time.Duration
	profile              []profileShare
	scanProfile          []profileShare
}

// benchIndex runs the three measurements with one index kind.
func benchIndex(ctx context.Context, kind string, docs []benchDoc, bf benchFlags, log io.Writer) (benchResult, error) {
	res := benchResult{index: kind, docs: bf.Docs}
	brokers, stopBroker, err := startBenchBroker(ctx, bf.BrokerCommand, bf.Partitions, "docs-a", "events-a", "docs-b", "events-b", "dead")
	if err != nil {
		return res, err
	}
	defer stopBroker()
	url, rdb, stopRedis, err := benchRedis(ctx, kind)
	if err != nil {
		return res, err
	}
	defer stopRedis()

	load := func(ns, input, output, group, emit string) (*config.Config, error) {
		o := &config.Overrides{}
		for _, kv := range [][2]string{
			{"kafka.brokers", brokers}, {"kafka.input_topic", input}, {"kafka.output_topic", output},
			{"kafka.dead_letter_topic", "dead"}, {"kafka.group", group}, {"index.url", url}, {"index.namespace", ns},
			{"http.addr", ""}, {"http.admin_addr", ""}, {"pipeline.emit", emit},
		} {
			o.Add(kv[0], kv[1])
		}
		o.Append(bf.Overrides)
		c, err := config.Load(bf.ConfigPath, os.Environ(), o)
		return &c, err
	}
	ta, tb := docs[:bf.Docs], docs[bf.Docs:]

	// 1. Throughput: everything produced first.
	fmt.Fprintf(log, "[%s] producing %d documents\n", kind, len(ta))
	if err := benchProduce(ctx, brokers, "docs-a", ta, 0); err != nil {
		return res, err
	}
	c, err := load("bench-a", "docs-a", "events-a", "bench-a", "duplicates")
	if err != nil {
		return res, err
	}
	m, err := benchService(ctx, c, bf.Version, len(ta), rdb, filepath.Join(bf.ProfileDir, "serve-"+sanitize(kind)+".pprof"), bf.ProfileDir != "")
	if err != nil {
		return res, err
	}
	res.rate, res.cpuUS, res.redisUS, res.redisCmds, res.profile = m.rate, m.cpuUS, m.redisUS, m.redisCmds, m.profile
	fmt.Fprintf(log, "[%s] serve: %.0f docs/s, %.0f µs CPU/doc (+ redis-server %.0f)\n", kind, res.rate, res.cpuUS, res.redisUS)
	if len(m.commands) > 0 {
		fmt.Fprintf(log, "[%s] serve: Redis commands per document: %s\n", kind, formatCommands(m.commands))
	}

	// 2. The same documents through scan's path.
	c, err = load("bench-scan", "docs-a", "events-a", "bench-scan", "duplicates")
	if err != nil {
		return res, err
	}
	sm, err := benchScan(ctx, c, bf.Version, ta, rdb, filepath.Join(bf.ProfileDir, "scan-"+sanitize(kind)+".pprof"), bf.ProfileDir != "")
	if err != nil {
		return res, err
	}
	res.scanRate, res.scanCPU, res.scanRedisUS, res.scanProfile = sm.rate, sm.cpuUS, sm.redisUS, sm.profile
	fmt.Fprintf(log, "[%s] scan:  %.0f docs/s, %.0f µs CPU/doc (+ redis-server %.0f)\n", kind, res.scanRate, res.scanCPU, res.scanRedisUS)

	// 3. Latency at a fraction of the sustained rate.
	res.latencyRate = bf.Rate * res.rate
	c, err = load("bench-b", "docs-b", "events-b", "bench-b", "all")
	if err != nil {
		return res, err
	}
	res.p50, res.p99, res.pmax, err = benchLatency(ctx, c, bf.Version, brokers, tb, res.latencyRate)
	if err != nil {
		return res, err
	}
	fmt.Fprintf(log, "[%s] latency at %.0f docs/s: p50 %v, p99 %v, max %v\n", kind, res.latencyRate, res.p50, res.p99, res.pmax)
	return res, nil
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// startBenchBroker starts "neardup bench broker" as a child process and
// returns its address.
func startBenchBroker(ctx context.Context, command []string, partitions int, topics ...string) (string, func(), error) {
	args := append(slices.Clone(command[1:]), "--partitions", strconv.Itoa(partitions))
	cmd := exec.CommandContext(ctx, command[0], append(args, topics...)...)
	cmd.Env = os.Environ()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		stdin.Close()
		_ = cmd.Wait()
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("broker: %w", err)
	}
	return strings.TrimSpace(line), stop, nil
}

// benchRedis returns the index URL of kind and clients of its
// redis-servers for INFO (none for memory), starting a redis-server for
// local-redis and a 3-master Redis Cluster for local-cluster.
func benchRedis(ctx context.Context, kind string) (string, redisNodes, func(), error) {
	switch {
	case kind == "memory":
		return "memory", nil, func() {}, nil
	case kind == "local-redis":
		n, err := startBenchRedis(ctx)
		if err != nil {
			return "", nil, nil, err
		}
		return "redis://" + n.addr, redisNodes{n.client}, n.stop, nil
	case kind == "local-cluster":
		var nodes []*benchNode
		stop := func() {
			for _, n := range nodes {
				n.stop()
			}
		}
		var addrs []string
		var clients redisNodes
		for range 3 {
			n, err := startBenchRedis(ctx, "--cluster-enabled", "yes", "--cluster-node-timeout", "5000")
			if err != nil {
				stop()
				return "", nil, nil, err
			}
			nodes = append(nodes, n)
			addrs = append(addrs, n.addr)
			clients = append(clients, n.client)
		}
		args := append([]string{"--cluster", "create"}, addrs...)
		out, err := exec.CommandContext(ctx, "redis-cli", append(args, "--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput()
		if err != nil {
			stop()
			return "", nil, nil, fmt.Errorf("redis-cli --cluster create: %w\n%s", err, out)
		}
		deadline := time.Now().Add(30 * time.Second)
		for _, c := range clients {
			for {
				info, err := c.ClusterInfo(ctx).Result()
				if err == nil && strings.Contains(info, "cluster_state:ok") {
					break
				}
				if time.Now().After(deadline) {
					stop()
					return "", nil, nil, fmt.Errorf("cluster not ready: %v %q", err, info)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		return "redis+cluster://" + strings.Join(addrs, ","), clients, stop, nil
	case strings.HasPrefix(kind, "redis://"):
		opt, err := redis.ParseURL(strings.SplitN(kind, "?", 2)[0])
		if err != nil {
			return "", nil, nil, err
		}
		rdb := redis.NewClient(opt)
		return kind, redisNodes{rdb}, func() { rdb.Close() }, nil
	}
	return "", nil, nil, fmt.Errorf("%w: index kind %q: want memory, local-redis, local-cluster or a redis:// URL", ErrUsage, kind)
}

// StartRedis starts a redis-server from PATH on a free loopback port with
// persistence off and args (more of its options, such as --logfile), and
// returns its address, a client of it, and the function that stops it and
// removes its folder.
func StartRedis(ctx context.Context, args ...string) (addr string, client *redis.Client, stop func(), err error) {
	n, err := startBenchRedis(ctx, args...)
	if err != nil {
		return "", nil, nil, err
	}
	return n.addr, n.client, n.stop, nil
}

// RedisCPU returns the CPU time of the redis-servers of clients and the
// commands they have served (INFO cpu, INFO stats), summed.
func RedisCPU(clients ...*redis.Client) (time.Duration, int64) { return redisCPU(clients) }

// ProcessCPU returns this process's CPU time, user and system
// (getrusage).
func ProcessCPU() time.Duration { return processCPU() }

// benchNode is a redis-server the benchmark started.
type benchNode struct {
	addr   string
	client *redis.Client
	stop   func()
}

// startBenchRedis starts a redis-server on a free loopback port with
// persistence off (and args), and waits for it to answer.
func startBenchRedis(ctx context.Context, args ...string) (*benchNode, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir, err := os.MkdirTemp("", "neardup-bench-redis")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("redis-server", append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start redis-server (install it: apt-get install -y redis-server): %w", err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	n := &benchNode{addr: addr, client: redis.NewClient(&redis.Options{Addr: addr})}
	n.stop = func() {
		n.client.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		os.RemoveAll(dir)
	}
	deadline := time.Now().Add(10 * time.Second)
	for n.client.Ping(ctx).Err() != nil {
		if time.Now().After(deadline) {
			n.stop()
			return nil, errors.New("redis-server did not answer")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return n, nil
}

// benchProduce writes docs to topic, keyed by their source (originals and
// their copies share a partition); rate > 0 paces the writes (docs/s) and
// stamps each record when it is sent.
func benchProduce(ctx context.Context, brokers, topic string, docs []benchDoc, rate float64) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	rec := func(d benchDoc) (*kgo.Record, error) {
		v, err := json.Marshal(map[string]string{"id": d.ID, "text": d.Text})
		return &kgo.Record{Key: []byte(d.Key), Value: v, Timestamp: time.Now()}, err
	}
	if rate <= 0 {
		var rs []*kgo.Record
		for _, d := range docs {
			r, err := rec(d)
			if err != nil {
				return err
			}
			rs = append(rs, r)
		}
		return cl.ProduceSync(ctx, rs...).FirstErr()
	}
	start := time.Now()
	var perr error
	for i, d := range docs {
		due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if w := time.Until(due); w > 0 {
			time.Sleep(w)
		}
		r, err := rec(d)
		if err != nil {
			return err
		}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil && perr == nil {
				perr = err
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	return perr
}

// measured is one timed run.
type measured struct {
	rate, cpuUS, redisUS, redisCmds float64
	// commands is Redis's INFO commandstats over the run, per document.
	commands []commandStat
	profile  []profileShare
}

// commandStat is one Redis command's calls and server time (µs).
type commandStat struct {
	name        string
	calls, usec float64
}

// commandStats reads INFO commandstats of every node, summed; nil
// without a node.
func commandStats(rdb redisNodes) map[string]commandStat {
	if len(rdb) == 0 {
		return nil
	}
	out := map[string]commandStat{}
	for _, node := range rdb {
		info, err := node.Info(context.Background(), "commandstats").Result()
		if err != nil {
			return nil
		}
		for _, line := range strings.Split(info, "\n") {
			name, rest, _ := strings.Cut(strings.TrimSpace(line), ":")
			name, ok := strings.CutPrefix(name, "cmdstat_")
			if !ok {
				continue
			}
			cs := out[name]
			cs.name = name
			for _, kv := range strings.Split(rest, ",") {
				k, v, _ := strings.Cut(kv, "=")
				f, _ := strconv.ParseFloat(v, 64)
				switch k {
				case "calls":
					cs.calls += f
				case "usec":
					cs.usec += f
				}
			}
			out[name] = cs
		}
	}
	return out
}

// perDoc returns the commands run between two commandstats readings, per
// document, most calls first.
func perDoc(before, after map[string]commandStat, docs int) []commandStat {
	var out []commandStat
	for name, a := range after {
		b := before[name]
		if d := a.calls - b.calls; d > 0 && name != "info" {
			out = append(out, commandStat{name: name, calls: d / float64(docs), usec: (a.usec - b.usec) / float64(docs)})
		}
	}
	slices.SortFunc(out, func(x, y commandStat) int {
		return cmp.Or(cmp.Compare(y.calls, x.calls), strings.Compare(x.name, y.name))
	})
	return out
}

// formatCommands prints per-document command figures on one line.
func formatCommands(cs []commandStat) string {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.2f", c.name, c.calls)
		if c.name == "evalsha" || c.name == "eval" {
			fmt.Fprintf(&b, " (%.0f µs)", c.usec)
		}
	}
	return b.String()
}

// cpuMeter measures process CPU (getrusage) and redis-server CPU and
// commands (INFO) over a span.
type cpuMeter struct {
	rdb         redisNodes
	t0          time.Time
	cpu0, rcpu0 time.Duration
	cmds0       int64
	stats0      map[string]commandStat
	profPath    string
	prof        *profiler
}

func startMeter(rdb redisNodes, profPath string, profile bool) (*cpuMeter, error) {
	m := &cpuMeter{rdb: rdb, profPath: profPath}
	if profile {
		p, err := startProfile(profPath)
		if err != nil {
			return nil, err
		}
		m.prof = p
	}
	m.rcpu0, m.cmds0 = redisCPU(rdb)
	m.stats0 = commandStats(rdb)
	m.cpu0, m.t0 = processCPU(), time.Now()
	return m, nil
}

func (m *cpuMeter) stop(docs int) (measured, error) {
	el, cpu := time.Since(m.t0), processCPU()-m.cpu0
	rcpu, cmds := redisCPU(m.rdb)
	res := measured{
		rate:      float64(docs) / el.Seconds(),
		cpuUS:     float64(cpu.Microseconds()) / float64(docs),
		redisUS:   float64((rcpu - m.rcpu0).Microseconds()) / float64(docs),
		redisCmds: float64(cmds-m.cmds0) / float64(docs),
		commands:  perDoc(m.stats0, commandStats(m.rdb), docs),
	}
	if m.prof != nil {
		shares, err := m.prof.stop()
		if err != nil {
			return res, err
		}
		res.profile = shares
	}
	return res, nil
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// redisNodes are clients of every redis-server of an index (one, or the
// masters of a cluster); empty for the memory index.
type redisNodes []*redis.Client

// redisCPU returns the redis-servers' CPU time and the commands they have
// served (INFO cpu, INFO stats), summed over the nodes; zero without one.
func redisCPU(rdb redisNodes) (time.Duration, int64) {
	var cpu float64
	var cmds int64
	for _, node := range rdb {
		info, err := node.Info(context.Background(), "cpu", "stats").Result()
		if err != nil {
			return 0, 0
		}
		for _, line := range strings.Split(info, "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok {
				continue
			}
			switch k {
			case "used_cpu_sys", "used_cpu_user":
				f, _ := strconv.ParseFloat(v, 64)
				cpu += f
			case "total_commands_processed":
				n, _ := strconv.ParseInt(v, 10, 64)
				cmds += n
			}
		}
	}
	return time.Duration(cpu * float64(time.Second)), cmds
}

// benchService runs one instance until n records are complete and
// measures the span from joining the group to the last completion.
func benchService(ctx context.Context, c *config.Config, version string, n int, rdb redisNodes, profPath string, profile bool) (measured, error) {
	pc, store, err := pipeline.OpenStore(ctx, c, version)
	if err != nil {
		return measured{}, err
	}
	defer store.Close()
	svc, err := service.New(ctx, service.Options{Config: c, Pipeline: pc, Store: store, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return measured{}, err
	}
	run, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- svc.Run(run) }() // owned: waited for below
	var meter *cpuMeter
	for meter == nil {
		select {
		case err := <-done:
			return measured{}, fmt.Errorf("service stopped: %w", err)
		case <-time.After(time.Millisecond):
		}
		if svc.Ready() {
			if meter, err = startMeter(rdb, profPath, profile); err != nil {
				stop()
				<-done
				return measured{}, err
			}
		}
	}
	for svc.Completed() < int64(n) {
		select {
		case err := <-done:
			return measured{}, fmt.Errorf("service stopped after %d of %d: %w", svc.Completed(), n, err)
		case <-time.After(2 * time.Millisecond):
		}
	}
	m, merr := meter.stop(n)
	stop()
	if err := <-done; err != nil {
		return m, err
	}
	return m, merr
}

// benchScan runs docs through scan's path (JSON lines → consumer.Files →
// pipeline → events as JSON lines) on a fresh index.
func benchScan(ctx context.Context, c *config.Config, version string, docs []benchDoc, rdb redisNodes, profPath string, profile bool) (measured, error) {
	f, err := os.CreateTemp("", "neardup-bench-*.jsonl")
	if err != nil {
		return measured{}, err
	}
	defer os.Remove(f.Name())
	w := bufio.NewWriter(f)
	for _, d := range docs {
		b, _ := json.Marshal(map[string]string{"id": d.ID, "text": d.Text})
		w.Write(b)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		return measured{}, err
	}
	f.Close()
	pc, store, err := pipeline.OpenStore(ctx, c, version)
	if err != nil {
		return measured{}, err
	}
	defer store.Close()
	pl, err := pipeline.New(pc, store)
	if err != nil {
		return measured{}, err
	}
	meter, err := startMeter(rdb, profPath, profile)
	if err != nil {
		return measured{}, err
	}
	events := sink.NewLines(io.Discard)
	read := (&consumer.Files{Paths: []string{f.Name()}, MaxBytes: c.Sketch.MaxBytes}).Run
	err = pl.Stream(ctx, read, func(o pipeline.Output) error {
		if o.Event != nil {
			return events.Write(o.Event)
		}
		return nil
	})
	if err == nil {
		err = events.Flush()
	}
	if err != nil {
		return measured{}, err
	}
	return meter.stop(len(docs))
}

// benchLatency runs a fresh instance while docs are produced at rate and
// returns the percentiles of event timestamp − record timestamp.
func benchLatency(ctx context.Context, c *config.Config, version string, brokers string, docs []benchDoc, rate float64) (p50, p99, pmax time.Duration, err error) {
	pc, store, err := pipeline.OpenStore(ctx, c, version)
	if err != nil {
		return 0, 0, 0, err
	}
	defer store.Close()
	svc, err := service.New(ctx, service.Options{Config: c, Pipeline: pc, Store: store, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return 0, 0, 0, err
	}
	run, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- svc.Run(run) }() // owned: waited for below
	for !svc.Ready() {
		select {
		case err := <-done:
			return 0, 0, 0, fmt.Errorf("service stopped: %w", err)
		case <-time.After(time.Millisecond):
		}
	}
	if err := benchProduce(ctx, brokers, c.Kafka.InputTopic, docs, rate); err != nil {
		stop()
		<-done
		return 0, 0, 0, err
	}
	for svc.Completed() < int64(len(docs)) {
		select {
		case err := <-done:
			return 0, 0, 0, fmt.Errorf("service stopped: %w", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	stop()
	if err := <-done; err != nil {
		return 0, 0, 0, err
	}
	in, err := readStamps(ctx, brokers, c.Kafka.InputTopic, func(r *kgo.Record) string {
		var d struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(r.Value, &d)
		return d.ID
	}, len(docs))
	if err != nil {
		return 0, 0, 0, err
	}
	out, err := readStamps(ctx, brokers, c.Kafka.OutputTopic, func(r *kgo.Record) string { return string(r.Key) }, len(docs))
	if err != nil {
		return 0, 0, 0, err
	}
	var lat []time.Duration
	for id, t := range out {
		if t0, ok := in[id]; ok {
			lat = append(lat, t.Sub(t0))
		}
	}
	if len(lat) == 0 {
		return 0, 0, 0, errors.New("no latencies")
	}
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	return q(0.5), q(0.99), lat[len(lat)-1], nil
}

// readStamps reads n records of topic and returns each key's first
// record timestamp.
func readStamps(ctx context.Context, brokers, topic string, key func(*kgo.Record) string, n int) (map[string]time.Time, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out := map[string]time.Time{}
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("read %s: %d of %d records", topic, len(out), n)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if k := key(r); k != "" {
				if _, ok := out[k]; !ok {
					out[k] = r.Timestamp
				}
			}
		})
	}
	return out, nil
}

func benchTable(w io.Writer, rs []benchResult) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "index\tdocs\tserve docs/s\tCPU µs/doc\tredis µs/doc\tredis cmds/doc\tscan docs/s\tscan CPU µs/doc\tscan redis µs/doc\tserve/scan CPU\tlatency at\tp50\tp99\tmax\t")
	for _, r := range rs {
		ratio := "-"
		if r.scanCPU+r.scanRedisUS > 0 {
			ratio = fmt.Sprintf("%.2f", (r.cpuUS+r.redisUS)/(r.scanCPU+r.scanRedisUS))
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\t%.0f\t%.1f\t%.0f\t%.0f\t%.0f\t%s\t%.0f/s\t%v\t%v\t%v\t\n",
			r.index, r.docs, r.rate, r.cpuUS, r.redisUS, r.redisCmds, r.scanRate, r.scanCPU, r.scanRedisUS, ratio,
			r.latencyRate, r.p50.Round(100*time.Microsecond), r.p99.Round(100*time.Microsecond), r.pmax.Round(time.Millisecond))
	}
	_ = tw.Flush()
	for _, r := range rs {
		if len(r.profile) > 0 {
			fmt.Fprintf(w, "\nwhere neardup's CPU goes, %s (serve | scan):\n", r.index)
			printProfile(w, r.profile, r.scanProfile)
		}
	}
}
