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
// With -kind, the documents are another stream (at -bytes each): real
// text (the Project Gutenberg e-texts of the evaluation data, read in
// place, each document a different window of them, so that neighbours are
// near and partial copies that verification compares), random one-letter
// words (letters: the most tokens per byte), or pathological
// HTML: 16 MiB of <p>x</p>, nesting 199,000 deep, real text in 195,000
// paragraphs, or the largest page readability parses (html-dom: 4 MiB in
// 49,000 paragraphs). -budget runs every kind at
// sketch.max_bytes and prints each peak resident set against the
// Deployment's memory limit: the memory budget's benchmark
// (docs/operations.md, "Memory budget"):
//
//	cd deploy && go run ./measure -budget
//
// The broker is kfake in this process; neardup serve (built from the
// repository with CGO_ENABLED=0, as in the image) and redis-server run as
// child processes, so each one's CPU and memory are its own. The documents
// are those of neardup bench serve (synthetic, ~4.9 KB, 10 % exact, near
// and partial copies each), all produced before neardup starts.
package main

import (
	"bufio"
	"bytes"
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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/neardup/neardup/internal/dataset"
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
	kind := flag.String("kind", "synth", "documents: "+strings.Join(kinds, ", ")+" (all but synth need -bytes)")
	prebuilt := flag.String("bin", "", "a neardup binary to run instead of building the repository's (e.g. another revision's, for a before/after)")
	budget := flag.Bool("budget", false, "memory budget: every kind at sketch.max_bytes less 1 KiB, -docs each (8 unless set), peak resident set against the Deployment's limit")
	memLimit := flag.String("gomemlimit", "kit", "GOMEMLIMIT of neardup serve: kit (the Deployment's), a value, or empty: none")
	var sets setFlags
	flag.Var(&sets, "set", "NEARDUP_KEY=value on top of the ConfigMap (repeatable)")
	flag.Parse()
	if *memLimit == "kit" {
		d, err := deployment()
		if err != nil {
			fmt.Fprintln(os.Stderr, "measure:", err)
			os.Exit(1)
		}
		*memLimit = ""
		for _, e := range d.Env {
			if e.Name == "GOMEMLIMIT" {
				*memLimit = e.Value
			}
		}
	}
	if *memLimit != "" {
		sets = append([]string{"GOMEMLIMIT=" + *memLimit}, sets...)
	}
	if !*budget && *kind != "synth" && *size <= 0 {
		fmt.Fprintln(os.Stderr, "measure: -kind", *kind, "needs -bytes")
		os.Exit(2)
	}
	docsSet := false
	flag.Visit(func(f *flag.Flag) { docsSet = docsSet || f.Name == "docs" })
	if *budget && !docsSet {
		*docs = 8
	}
	if err := measure(*prebuilt, *docs, *partitions, *index, *size, *kind, *budget, sets); err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(1)
	}
}

// measure builds neardup and runs one stream, or with budget every kind.
func measure(bin string, n, partitions int, index string, size int, kind string, budget bool, sets []string) error {
	tmp, err := os.MkdirTemp("", "neardup-measure-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if bin == "" {
		bin = filepath.Join(tmp, "neardup")
		build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/neardup")
		build.Dir = ".."
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("build: %v\n%s", err, out)
		}
	}
	var cm struct{ Data map[string]string }
	b, err := os.ReadFile("kubernetes/configmap.yaml")
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(b, &cm); err != nil {
		return err
	}
	if !budget {
		_, err := run(bin, tmp, cm.Data, n, partitions, index, size, kind, sets)
		return err
	}
	limit, err := containerLimit()
	if err != nil {
		return err
	}
	maxBytes := 16 << 20 // sketch.max_bytes: the default unless set
	for _, kv := range append([]string{"NEARDUP_SKETCH_MAX_BYTES=" + cm.Data["NEARDUP_SKETCH_MAX_BYTES"]}, sets...) {
		if v, ok := strings.CutPrefix(kv, "NEARDUP_SKETCH_MAX_BYTES="); ok && v != "" {
			if maxBytes, err = strconv.Atoi(v); err != nil {
				return fmt.Errorf("NEARDUP_SKETCH_MAX_BYTES=%s: want a number of bytes", v)
			}
		}
	}
	type row struct {
		kind string
		peak float64
	}
	var rows []row
	for _, k := range kinds {
		fmt.Printf("\n== %s: %d documents of %d bytes\n", k, n, maxBytes-1024)
		peak, err := run(bin, tmp, cm.Data, n, partitions, index, maxBytes-1024, k, sets)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		rows = append(rows, row{k, peak})
	}
	fmt.Printf("\nmemory budget: %d documents of sketch.max_bytes (%d MiB) per stream, container limit %d MiB (deploy/kubernetes/deployment.yaml), %s\n",
		n, maxBytes>>20, limit>>20, strings.Join(sets, " "))
	fmt.Printf("%-10s %12s %8s\n", "stream", "peak RSS", "of limit")
	over := false
	for _, r := range rows {
		fmt.Printf("%-10s %8.0f MiB %7.0f%%\n", r.kind, r.peak/(1<<20), 100*r.peak/float64(limit))
		over = over || r.peak > float64(limit)
	}
	if over {
		return fmt.Errorf("a stream peaked over the container limit")
	}
	return nil
}

// run decides one stream with neardup serve and returns its peak resident
// set in bytes.
func run(bin, tmp string, cmData map[string]string, n, partitions int, index string, size int, kind string, sets []string) (float64, error) {
	ctx := context.Background()
	cm := struct{ Data map[string]string }{cmData}
	gen, err := generator(kind, size)
	if err != nil {
		return 0, err
	}
	input := cm.Data["NEARDUP_KAFKA_INPUT_TOPIC"]
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(partitions), input),
		kfake.SeedTopics(int32(partitions), cm.Data["NEARDUP_KAFKA_OUTPUT_TOPIC"]), kfake.SeedTopics(1, cm.Data["NEARDUP_KAFKA_DEAD_LETTER_TOPIC"]),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return net.Listen(network, "127.0.0.1:0") }),
		kfake.BrokerConfigs(map[string]string{"message.max.bytes": strconv.Itoa(max(size+1<<20, 1<<20))}))
	if err != nil {
		return 0, err
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
			return 0, err
		}
		defer stop()
	}

	corpus := synth.Corpus(synth.Config{Docs: n, Seed: 2026, MinWords: 900, MaxWords: 1150, Contain: true})
	var bytes int
	pc, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.DefaultProduceTopic(input), kgo.ProducerLinger(time.Millisecond),
		kgo.ProducerBatchMaxBytes(int32(max(size+1<<20, 1<<20))))
	if err != nil {
		return 0, err
	}
	var recs []*kgo.Record
	for i, d := range corpus {
		field, text := gen(i, d.Text)
		v, err := record(d.ID, field, text)
		if err != nil {
			return 0, err
		}
		bytes += len(v)
		rec := &kgo.Record{Key: []byte(d.ID), Value: v}
		if size > 0 { // one at a time: the process holds one large record
			if err := pc.ProduceSync(ctx, rec).FirstErr(); err != nil {
				return 0, err
			}
			continue
		}
		recs = append(recs, rec)
	}
	if err := pc.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return 0, err
	}
	pc.Close()
	recs, corpus = nil, nil
	fmt.Printf("%d %s documents produced, mean record %.1f KB, %d partitions, index %s\n", n, kind, float64(bytes)/float64(n)/1024, partitions, index)

	var mem0, redisCPU0 float64
	if rdb != nil {
		mem0, redisCPU0 = redisInfo(ctx, rdb)
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range cm.Data {
		env = append(env, k+"="+v)
	}
	env = append(env, "NEARDUP_KAFKA_BROKERS="+brokers, "NEARDUP_HTTP_ADDR=127.0.0.1:0", "NEARDUP_HTTP_ADMIN_ADDR=127.0.0.1:0", "NEARDUP_INDEX_URL="+url)
	env = append(env, sets...)
	cmd := exec.Command(bin, "serve")
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	addr, err := listenAddr(stderr)
	if err != nil {
		return 0, err
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
			return 0, err
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
	fmt.Printf("neardup serve: %.1f docs/s, CPU %.0f µs/doc, peak resident set %.0f MiB\n",
		float64(n)/elapsed.Seconds(), cpu/float64(n)*1e6, hwm/1024)
	if rdb != nil {
		mem1, redisCPU1 := redisInfo(ctx, rdb)
		fmt.Printf("redis-server: CPU %.0f µs/doc (of the whole run, PID %d), used_memory %.0f B/doc (%.1f MB for %d documents)\n",
			(redisCPU1-redisCPU0)/float64(n)*1e6, redisPID, (mem1-mem0)/float64(n), (mem1-mem0)/1e6, n)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, err
	}
	return hwm * 1024, cmd.Wait()
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

// maxArticleBytes is extract.MaxArticleBytes (extract's dependencies are
// not this module's).
const maxArticleBytes = 4 << 20

// kinds are the streams -kind selects; -budget runs them all.
var kinds = []string{"synth", "real", "letters", "html-p", "html-deep", "html-text", "html-dom"}

// generator returns the field ("text" or "html") and body of document i
// of a kind at size bytes (synth: the synthetic text d, repeated to size
// when size > 0).
func generator(kind string, size int) (func(i int, d string) (field, body string), error) {
	switch kind {
	case "synth":
		return func(_ int, d string) (string, string) {
			if size <= 0 {
				return "text", d
			}
			return "text", strings.Repeat(d+" ", size/(len(d)+1)+1)[:size]
		}, nil
	case "letters":
		// One-letter words: the most tokens a byte of text makes.
		return func(i int, _ string) (string, string) {
			b := make([]byte, size)
			x := uint32(2166136261 + i)
			for j := 0; j+1 < size; j += 2 {
				x ^= x << 13
				x ^= x >> 17
				x ^= x << 5
				b[j], b[j+1] = 'a'+byte(x%26), ' '
			}
			return "text", string(b)
		}, nil
	case "html-p":
		p := strings.Repeat("<p>x</p>", size/8)
		return func(int, string) (string, string) { return "html", p }, nil
	case "html-deep":
		const depth = 199_000
		open, shut := strings.Repeat("<div>", depth), strings.Repeat("</div>", depth)
		fill := max(size-len(open)-len(shut), 1)
		return func(i int, d string) (string, string) {
			return "html", open + strings.Repeat(d+" ", fill/(len(d)+1)+1)[:fill] + shut
		}, nil
	}
	books, err := gutenberg()
	if err != nil {
		return nil, err
	}
	// Document i is the window of the books (repeated) at i × 1 MiB:
	// neighbours share most of their text.
	books = strings.Repeat(books, (size+len(books)-1)/len(books)+1)
	window := func(i, n int) string {
		off := (i << 20) % (len(books) - n + 1)
		return books[off : off+n]
	}
	// The record must stay within sketch.max_bytes + 64 KiB: the window
	// is shortened by what JSON escaping adds (a line break is 2 bytes).
	fit := func(i, n int) string {
		t := window(i, n)
		for m := n; escaped(t) > n; t = window(i, m) {
			m -= escaped(t) - n
		}
		return t
	}
	switch kind {
	case "real":
		return func(i int, _ string) (string, string) { return "text", fit(i, size) }, nil
	case "html-text", "html-dom":
		// html-text: real text in 195,000 paragraphs; html-dom: the
		// largest page readability parses, within its element and byte
		// limits (extract.MaxArticleBytes, 50,000 elements).
		paras := 195_000
		if kind == "html-dom" {
			paras, size = 49_000, min(size, maxArticleBytes)
		}
		per := max(size/paras-len("<p></p>"), 1)
		return func(i int, _ string) (string, string) {
			text := strings.NewReplacer("<", " ", ">", " ", "&", " ").Replace(fit(i, paras*per))
			var b strings.Builder
			b.Grow(size)
			for j := 0; j+per <= len(text); j += per {
				b.WriteString("<p>")
				b.WriteString(text[j : j+per])
				b.WriteString("</p>")
			}
			return "html", b.String()
		}, nil
	}
	return nil, fmt.Errorf("-kind %q: want one of %s", kind, strings.Join(kinds, ", "))
}

// gutenberg returns the e-texts of the gutenberg-editions data set,
// concatenated (read in place: NEARDUP_DATA or shared/data beside the
// repository).
func gutenberg() (string, error) {
	root := dataset.Root()
	if root == "" {
		return "", fmt.Errorf("evaluation data not found: set NEARDUP_DATA")
	}
	files, err := filepath.Glob(filepath.Join(root, "gutenberg-editions", "texts", "*.txt"))
	if err != nil || len(files) == 0 {
		return "", fmt.Errorf("gutenberg-editions texts not found under %s: %v", root, err)
	}
	var b strings.Builder
	for _, f := range files {
		t, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		b.Write(t)
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// escaped is the length of s as a JSON string's contents.
func escaped(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20:
			n += 5
		}
	}
	return n
}

// record is a document's JSON record, without HTML escaping (json.Marshal
// would triple the size of an HTML body).
func record(id, field, body string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]string{"id": id, field: body}); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// deployment returns the Deployment's neardup container.
func deployment() (corev1.Container, error) {
	b, err := os.ReadFile("kubernetes/deployment.yaml")
	if err != nil {
		return corev1.Container{}, err
	}
	var d appsv1.Deployment
	if err := yaml.Unmarshal(b, &d); err != nil {
		return corev1.Container{}, err
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "neardup" {
			return c, nil
		}
	}
	return corev1.Container{}, fmt.Errorf("deployment.yaml: no neardup container")
}

// containerLimit is the memory limit of the Deployment's neardup container.
func containerLimit() (int64, error) {
	c, err := deployment()
	if err != nil {
		return 0, err
	}
	if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
		return q.Value(), nil
	}
	return 0, fmt.Errorf("deployment.yaml: no memory limit on the neardup container")
}
