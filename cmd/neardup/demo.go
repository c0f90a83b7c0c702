//go:build !nodev

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sync/errgroup"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/synth"
	"github.com/neardup/neardup/pipeline"
	"github.com/neardup/neardup/service"
)

// Demo topics.
const (
	demoInput  = "neardup.documents"
	demoEvents = "neardup.events"
	demoDead   = "neardup.dead-letters"
)

// runDemo implements "neardup demo": the service end to end on an
// embedded Kafka-protocol broker, with a crawl whose duplicates are known.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	docs := fs.Int("docs", 5000, "documents in the generated crawl")
	instances := fs.Int("instances", 2, "service instances in the consumer group")
	partitions := fs.Int("partitions", 6, "partitions of the input topic")
	seed := fs.Uint64("seed", 1, "seed of the generated crawl")
	ixURL := fs.String("index", "memory", "index shared by the instances: memory (in process) or a redis:// URL")
	namespace := fs.String("namespace", "", "key prefix in a redis:// index (default: a new neardup-demo-TIME namespace for each run; never the service's default namespace unless named here)")
	verbose := fs.Bool("v", false, "print the service logs")
	keyBy := fs.String("key", "source", "Kafka key of each record: source (an original and its copies share a key, hence a partition and its order) or id (each document its own key, as a crawler keying by URL does: copies may be decided before their original; see docs/operations.md, \"Keying records\")")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: neardup demo [flags]

Starts an in-process Kafka-protocol broker (franz-go's kfake), produces a
generated crawl with planted exact, near and partial duplicates (and a few
malformed records) into a multi-partition topic, runs the real service
(the consumer, pipeline and sink of 'neardup serve') as several instances
of one consumer group over one shared index, reads the output topics back,
and prints what was found against what was planted. Nothing to install.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *docs < 10 || *instances < 1 || *partitions < 1 {
		return usagef("want --docs >= 10, --instances >= 1, --partitions >= 1")
	}
	if *keyBy != "source" && *keyBy != "id" {
		return usagef("--key %q: want source or id", *keyBy)
	}

	kc, err := kfake.NewCluster(
		kfake.NumBrokers(1),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return net.Listen(network, "127.0.0.1:0") }),
		kfake.SeedTopics(int32(*partitions), demoInput),
		kfake.SeedTopics(int32(*partitions), demoEvents),
		kfake.SeedTopics(1, demoDead),
	)
	if err != nil {
		return fmt.Errorf("start broker: %w", err)
	}
	defer kc.Close()
	brokers := kc.ListenAddrs()[0]
	fmt.Fprintf(stdout, "embedded Kafka broker (kfake) on %s\n", brokers)

	// The crawl: exact and near copies, and partial ones (a passage of an
	// original making 3–20% of another text), keyed by site (an original and its
	// copies share a key, hence a partition and its order).
	crawl := synth.Corpus(synth.Config{Docs: *docs, Seed: *seed, MinWords: 1400, MaxWords: 2000, Embed: [2]float64{0.03, 0.2}})
	malformed := demoMalformed()
	if err := demoProduce(ctx, brokers, crawl, malformed, *keyBy == "source"); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "produced %d documents (%s) and %d malformed records to %q (%d partitions)\n",
		len(crawl), plantedSummary(crawl), len(malformed), demoInput, *partitions)

	o := &config.Overrides{}
	for _, kv := range [][2]string{
		{"kafka.brokers", brokers}, {"kafka.input_topic", demoInput}, {"kafka.output_topic", demoEvents},
		{"kafka.dead_letter_topic", demoDead}, {"kafka.group", "neardup-demo"}, {"pipeline.emit", "all"},
		{"index.url", *ixURL}, {"http.addr", "127.0.0.1:0"}, {"http.admin_addr", ""}, {"log.format", "text"},
	} {
		o.Add(kv[0], kv[1])
	}
	// The demo's crawl is synthetic: written into a real index's namespace
	// it would become the first-seen original of whatever matches it. So
	// each run writes into a new namespace of its own, unless told.
	ns := *namespace
	if ns == "" {
		ns = "neardup-demo-" + time.Now().UTC().Format("20060102T150405.000000000")
	}
	o.Add("index.namespace", ns)
	cfg, err := config.Load("", nil, o)
	if err != nil {
		return err
	}
	pc, store, err := openIndex(ctx, &cfg, index.Options{})
	if err != nil {
		return err
	}
	defer store.Close()

	logOut := io.Discard
	if *verbose {
		logOut = stderr
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	work, stop := context.WithCancel(ctx)
	defer stop()
	g, gctx := errgroup.WithContext(work)
	start := time.Now()
	for i := range *instances {
		c := cfg
		if i > 0 {
			c.HTTP.Addr = "" // one endpoint serves every instance's metrics
		}
		c.Kafka.ClientID = "neardup-demo-" + strconv.Itoa(i+1)
		svc, err := service.New(ctx, service.Options{
			Config: &c, Pipeline: pc, Store: store,
			Registerer: prometheus.WrapRegistererWith(prometheus.Labels{"instance": strconv.Itoa(i + 1)}, reg),
			Gatherer:   reg,
			Logger:     slog.New(slog.NewTextHandler(logOut, nil)).With("instance", i+1),
			Version:    buildVersion(),
		})
		if err != nil {
			stop()
			_ = g.Wait()
			return err
		}
		if a := svc.Addr(); a != "" {
			fmt.Fprintf(stdout, "metrics while it runs: http://%s/metrics (also /healthz, /readyz)\n", a)
		}
		g.Go(func() error { return svc.Run(gctx) })
	}
	where := ""
	if !index.IsMemory(*ixURL) {
		where = fmt.Sprintf(", namespace %q (remove it afterwards: %s)", ns, cleanupCommand(*ixURL, ns))
	}
	fmt.Fprintf(stdout, "%d service instances in consumer group %q, index %s%s\n", *instances, "neardup-demo", index.RedactURL(*ixURL), where)

	ids := make(map[string]bool, len(crawl))
	for _, d := range crawl {
		ids[d.ID] = true
	}
	res, readErr := demoRead(gctx, brokers, ids, len(malformed), time.Minute)
	elapsed := time.Since(start)
	stop()
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if readErr != nil {
		return readErr
	}
	demoReport(stdout, crawl, res, len(malformed), elapsed)
	return nil
}

// demoMalformed returns records the service must dead-letter.
func demoMalformed() [][]byte {
	return [][]byte{
		[]byte(`{"id": "broken", "text": `),
		[]byte(`{"text": "a document without an id"}`),
		[]byte(`{"id": "both", "text": "t", "html": "<p>h</p>"}`),
		[]byte(`{"id": "empty", "text": "  ... "}`),
		[]byte("{\"id\": \"bad\xff\", \"text\": \"invalid UTF-8 in the id\"}"),
	}
}

func demoProduce(ctx context.Context, brokers string, crawl []synth.Doc, malformed [][]byte, bySource bool) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.DefaultProduceTopic(demoInput), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	var rs []*kgo.Record
	for _, d := range crawl {
		v, err := json.Marshal(map[string]string{"id": d.ID, "url": "https://example.org/" + d.ID, "text": d.Text})
		if err != nil {
			return err
		}
		key := d.ID
		if d.Source != "" && bySource {
			key = d.Source
		}
		rs = append(rs, &kgo.Record{Key: []byte(key), Value: v})
	}
	for _, m := range malformed { // no key: the id must come from the value
		rs = append(rs, &kgo.Record{Value: m})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	return nil
}

// demoResult is what the output topics said.
type demoResult struct {
	first map[string]pipeline.Event // first verdict per id
	dead  map[string]int            // dead letters per reason
}

// demoRead reads the event and dead-letter topics until every document
// has a verdict and every malformed record a dead letter, or timeout.
func demoRead(ctx context.Context, brokers string, ids map[string]bool, malformed int, timeout time.Duration) (demoResult, error) {
	res := demoResult{first: map[string]pipeline.Event{}, dead: map[string]int{}}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumeTopics(demoEvents, demoDead),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return res, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	deadN := 0
	var quiet <-chan time.Time // after every document is decided: a last look for dead letters
	for len(res.first) < len(ids) || deadN < malformed {
		if quiet == nil && len(res.first) == len(ids) {
			quiet = time.After(2 * time.Second)
		}
		pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		fs := cl.PollFetches(pctx)
		pcancel()
		if ctx.Err() != nil {
			return res, fmt.Errorf("%d of %d documents decided, %d of %d dead letters after %v",
				len(res.first), len(ids), deadN, malformed, timeout)
		}
		select {
		case <-quiet:
			return res, nil
		default:
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Topic == demoDead {
				deadN++
				for _, h := range r.Headers {
					if h.Key == "neardup.reason" {
						res.dead[string(h.Value)]++
					}
				}
				return
			}
			var ev pipeline.Event
			if json.Unmarshal(r.Value, &ev) != nil || ev.Correction || !ids[ev.ID] {
				return
			}
			if _, ok := res.first[ev.ID]; !ok {
				res.first[ev.ID] = ev
			}
		})
	}
	return res, nil
}

func plantedSummary(crawl []synth.Doc) string {
	n := map[synth.Kind]int{}
	for _, d := range crawl {
		n[d.Kind]++
	}
	return fmt.Sprintf("%d originals, %d exact, %d near, %d partial copies planted", n[synth.Original], n[synth.Exact], n[synth.Near], n[synth.Partial])
}

// demoReport prints found against planted, per kind.
func demoReport(w io.Writer, crawl []synth.Doc, res demoResult, malformed int, elapsed time.Duration) {
	type row struct{ planted, found, reported, correct int }
	rows := map[string]*row{}
	for _, k := range []string{pipeline.KindExact, pipeline.KindNear, pipeline.KindPartial} {
		rows[k] = &row{}
	}
	falsePos, late := 0, 0
	for _, d := range crawl {
		ev := res.first[d.ID]
		if d.Kind == synth.Original && ev.Kind != pipeline.KindUnique {
			late++ // decided after a copy of it: the copy is first seen
		}
		if d.Kind != synth.Original {
			r := rows[string(d.Kind)]
			r.planted++
			if ev.Kind == string(d.Kind) && ev.DuplicateOf == d.Source {
				r.found++
			}
		}
		if r, ok := rows[ev.Kind]; ok {
			r.reported++
			if d.Kind != synth.Original && ev.Kind == string(d.Kind) && ev.DuplicateOf == d.Source {
				r.correct++
			}
		}
		if ev.Kind != pipeline.KindUnique && (d.Kind == synth.Original || ev.DuplicateOf != d.Source) {
			falsePos++
		}
	}
	ratio := func(a, b int) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.3f", float64(a)/float64(b))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tplanted\treported\tfound\tprecision\trecall\t")
	for _, k := range []string{pipeline.KindExact, pipeline.KindNear, pipeline.KindPartial} {
		r := rows[k]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t\n", k, r.planted, r.reported, r.found, ratio(r.correct, r.reported), ratio(r.found, r.planted))
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\nfound = reported with the planted kind and the planted original as duplicate_of; %d reported pairs were not planted\n", falsePos)
	fmt.Fprintf(w, "originals decided after a copy of theirs (first seen is first decided): %d\n", late)
	reasons := make([]string, 0, len(res.dead))
	for _, r := range slices.Sorted(maps.Keys(res.dead)) {
		reasons = append(reasons, fmt.Sprintf("%s %d", r, res.dead[r]))
	}
	fmt.Fprintf(w, "dead letters: %d of %d malformed records, by reason: %s\n", sum(res.dead), malformed, strings.Join(reasons, ", "))
	fmt.Fprintf(w, "%d documents decided in %v: %.0f docs/s (produce → decide → event acknowledged, %d cores)\n",
		len(crawl), elapsed.Round(time.Millisecond), float64(len(crawl))/elapsed.Seconds(), numCPU())
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func numCPU() int { return runtime.GOMAXPROCS(0) }

// cleanupCommand is the shell command that removes every key of namespace
// ns from the Redis server of index URL u: redis-cli pointed at that
// server (host, port, database, TLS, user; the password from
// $REDISCLI_AUTH, never printed), on every master for a cluster.
func cleanupCommand(u, ns string) string {
	rc, mem, err := index.ParseURL(u, index.Options{})
	if err != nil || mem {
		return fmt.Sprintf("redis-cli --scan --pattern '%s:*' | xargs -r redis-cli unlink, pointed at the server of --index", ns)
	}
	h, port, err := net.SplitHostPort(rc.Addrs[0])
	if err != nil {
		h, port = rc.Addrs[0], "6379"
	}
	cli := "redis-cli -h " + shellQuote(h) + " -p " + port
	if rc.DB != 0 {
		cli += " -n " + strconv.Itoa(rc.DB)
	}
	if rc.TLS != nil {
		cli += " --tls"
	}
	if rc.Username != "" {
		cli += " --user " + shellQuote(rc.Username)
	}
	auth := ""
	if rc.Username != "" || rc.Password != "" {
		auth = "REDISCLI_AUTH=PASSWORD "
	}
	cmd := fmt.Sprintf("%s%s --scan --pattern '%s:*' | %sxargs -r %s unlink", auth, cli, ns, auth, cli)
	if rc.Cluster {
		cmd = "on every master of the cluster: " + strings.Replace(cmd, "xargs -r redis-cli", "xargs -r redis-cli -c", 1)
	}
	return cmd
}
