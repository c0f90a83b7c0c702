package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/neardup/neardup/metrics"
	"github.com/neardup/neardup/stream"
)

// KafkaConfig configures a [Kafka] consumer.
type KafkaConfig struct {
	// Client holds the connection options shared with the producer:
	// seed brokers, client id, TLS, SASL, hooks.
	Client []kgo.Opt
	// Topic is the input topic; Group the consumer group.
	Topic, Group string
	// FromEnd starts a group without committed offsets at the end of the
	// topic instead of its start.
	FromEnd bool
	// MaxBytes is the document size limit (sketch.max_bytes): larger
	// records become too_large dead letters.
	MaxBytes int
	// MaxInflightRecords and MaxInflightBytes bound the records between
	// being read and being done (see [Record.Done]).
	MaxInflightRecords, MaxInflightBytes int
	// MaxRecordBytes is the largest record batch read to be dead-lettered
	// whole when it is over the fetch limit (kafka.max_record_bytes;
	// default 64 MiB, at most 1 GiB); larger ones are dead-lettered
	// unread. See oversize.go.
	MaxRecordBytes int
	// ProbeClient holds the connection options of the short-lived clients
	// that read an oversized batch (Client without metrics hooks); nil:
	// Client.
	ProbeClient []kgo.Opt
	// DrainTimeout bounds how long a revocation waits for the revoked
	// partitions' records in flight before abandoning them (at most half
	// of RebalanceTimeout, so the member rejoins in time).
	DrainTimeout time.Duration
	// SessionTimeout, RebalanceTimeout and HeartbeatInterval are the
	// group membership timings (0: franz-go's defaults, 45s, 60s, 3s);
	// InstanceID, when set, makes the membership static.
	SessionTimeout, RebalanceTimeout, HeartbeatInterval time.Duration
	InstanceID                                          string
	Metrics                                             *metrics.Metrics
	Logger                                              *slog.Logger
}

// Kafka is a consumer-group member (franz-go, cooperative-sticky
// balancing, no auto-commit) that feeds records into the pipeline and
// commits an offset only once every record before it has been reported
// done — decided, and everything it produced acknowledged (commit after
// effect, at-least-once).
//
// Records are fed in the order they are polled, which keeps each
// partition's order; the pipeline keeps input order, so verdicts come out
// in partition order while sketching and verification run in parallel.
// When partitions are revoked, the member waits up to DrainTimeout for
// their records in flight, commits what is done and gives them up;
// records of revoked partitions that finish later are never committed
// (their next owner reads them again, and a replay gets its first
// verdict). Lost partitions are given up at once.
//
// NewKafka creates the franz-go client, which runs its own goroutines
// until [Kafka.Close]. Run, Commit and Close may be called from different
// goroutines.
type Kafka struct {
	cl        *kgo.Client
	topic     string
	group     string
	fromEnd   bool
	dec       *stream.Decoder
	inflight  *inflight
	tr        *tracker
	drain     time.Duration
	m         *metrics.Metrics
	log       *slog.Logger
	joined    atomic.Bool
	closing   atomic.Bool
	commitMu  sync.Mutex // one commit at a time, so done offsets only grow
	closed    chan struct{}
	closeOnce sync.Once

	// Oversized batches (oversize.go).
	probeOpts  []kgo.Opt
	readLimit  int32 // the consumer's BrokerMaxReadBytes
	maxRecord  int32 // the probe's read limit for a batch read whole
	lastRescue time.Time
	stallMu    sync.Mutex
	stall      map[int32]time.Time // partition (−1: unknown) → last failed attempt
}

// NewKafka creates the client and joins nothing yet: the group is joined
// by the first poll in Run.
func NewKafka(cfg KafkaConfig) (*Kafka, error) {
	if cfg.Topic == "" || cfg.Group == "" {
		return nil, errors.New("consumer: kafka: topic and group are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	k := &Kafka{
		topic:    cfg.Topic,
		group:    cfg.Group,
		fromEnd:  cfg.FromEnd,
		stall:    map[int32]time.Time{},
		closed:   make(chan struct{}),
		dec:      stream.NewDecoder(cfg.MaxBytes),
		inflight: newInflight(int64(max(cfg.MaxInflightRecords, 1)), int64(max(cfg.MaxInflightBytes, 1))),
		tr:       newTracker(),
		drain:    cfg.DrainTimeout,
		m:        cfg.Metrics,
		log:      cfg.Logger,
	}
	start := kgo.NewOffset().AtStart()
	if cfg.FromEnd {
		start = kgo.NewOffset().AtEnd()
	}
	k.readLimit = int32(max(min(max(cfg.MaxInflightBytes/2, 2<<20), 1<<30), min(cfg.MaxBytes+1<<20, 1<<30)))
	if cfg.MaxRecordBytes <= 0 {
		cfg.MaxRecordBytes = 64 << 20
	}
	// The probe's response holds one batch and its headers.
	k.maxRecord = int32(min(cfg.MaxRecordBytes+1<<20, 1<<30))
	k.probeOpts = cfg.ProbeClient
	if k.probeOpts == nil {
		k.probeOpts = cfg.Client
	}
	opts := append([]kgo.Opt{}, cfg.Client...)
	opts = append(opts,
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topic),
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(start),
		kgo.FetchMaxBytes(FetchMaxBytes(cfg.MaxInflightBytes)),
		kgo.FetchMaxPartitionBytes(FetchMaxBytes(cfg.MaxInflightBytes)),
		kgo.BrokerMaxReadBytes(k.readLimit),
		kgo.OnPartitionsAssigned(k.assigned),
		kgo.OnPartitionsRevoked(k.revoked),
		kgo.OnPartitionsLost(k.lost),
	)
	if cfg.SessionTimeout > 0 {
		opts = append(opts, kgo.SessionTimeout(cfg.SessionTimeout))
	}
	if cfg.RebalanceTimeout > 0 {
		opts = append(opts, kgo.RebalanceTimeout(cfg.RebalanceTimeout))
		if k.drain > cfg.RebalanceTimeout/2 {
			k.drain = cfg.RebalanceTimeout / 2
		}
	}
	if cfg.HeartbeatInterval > 0 {
		opts = append(opts, kgo.HeartbeatInterval(cfg.HeartbeatInterval))
	}
	if cfg.InstanceID != "" {
		opts = append(opts, kgo.InstanceID(cfg.InstanceID))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("consumer: kafka: %w", err)
	}
	k.cl = cl
	return k, nil
}

// Client returns the underlying client (for pings and admin requests).
func (k *Kafka) Client() *kgo.Client { return k.cl }

// Joined reports whether the member holds a current assignment (possibly
// empty: more members than partitions).
func (k *Kafka) Joined() bool { return k.joined.Load() }

// Record is the [stream.Item] Tag of a Kafka record. Call Done when the
// record's output has been fully acknowledged.
type Record struct {
	*kgo.Record
	// Unread is, for a record batch too large to read (over
	// kafka.max_record_bytes), the size of the batch; Record then holds
	// only its topic, partition and offset.
	Unread int64
	k      *Kafka
	e      *entry
	size   int64
	once   sync.Once
}

// Done reports the record complete: its offset may now be committed once
// every earlier record of its partition is done too. Calling it again
// does nothing.
func (r *Record) Done() {
	r.once.Do(func() {
		r.k.tr.complete(r.e)
		r.k.inflight.release(r.size)
		r.k.m.InFlight(r.k.inflight.load())
		if !r.Timestamp.IsZero() {
			r.k.m.EndToEnd(time.Since(r.Timestamp))
		}
	})
}

// Run polls records and sends one item per record to out, in poll order,
// until ctx ends (it then returns nil) or the client is closed. It blocks
// while the in-flight bounds are reached. It does not close out.
func (k *Kafka) Run(ctx context.Context, out chan<- stream.Item) error {
	for {
		fs := k.cl.PollRecords(ctx, 1024)
		if fs.IsClientClosed() || ctx.Err() != nil {
			return nil
		}
		tooLarge := false
		fs.EachError(func(topic string, p int32, err error) {
			if errors.Is(err, context.Canceled) {
				return
			}
			if _, ok := responseTooLarge(err); ok {
				tooLarge = true
			}
			k.log.Warn("kafka fetch error", "topic", topic, "partition", p, "err", err)
		})
		var err error
		fs.EachRecord(func(r *kgo.Record) {
			if err != nil {
				return
			}
			k.tr.polled(r.Topic, r.Partition, r.Offset+1)
			err = k.feed(ctx, r, out)
		})
		// A batch too large to read stops its broker's fetches until it
		// is moved past; tried at most every 2s (counted from the end of
		// an attempt that moved a partition: the errors buffered while
		// it ran predate the move).
		if err == nil && tooLarge && time.Since(k.lastRescue) > 2*time.Second {
			k.lastRescue = time.Now()
			err = k.rescue(ctx, out)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// feed decodes one record and sends it on, within the in-flight bounds.
func (k *Kafka) feed(ctx context.Context, r *kgo.Record, out chan<- stream.Item) error {
	size := workingMemory(r)
	if err := k.inflight.acquire(ctx, size); err != nil {
		return err
	}
	e := k.tr.add(r)
	if e == nil { // revoked or lost meanwhile: its next owner reads it
		k.inflight.release(size)
		return nil
	}
	rec := &Record{Record: r, k: k, e: e, size: size}
	k.m.InFlight(k.inflight.load())
	part, off := r.Partition, r.Offset
	ct := contentType(r)
	it := stream.Item{Source: stream.Source{Topic: r.Topic, Partition: &part, Offset: &off}, Tag: rec,
		// Decoded by the pipeline's workers (the dead letter carries the
		// record itself).
		Lazy: func() (stream.Document, error) { return k.dec.DecodeRecord(r.Key, r.Value, ct) }}
	if r.Value == nil {
		// A tombstone (the key with a null value): delete the document.
		it.Lazy, it.Delete, it.Doc.ID = nil, true, string(r.Key)
	}
	select {
	case out <- it:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// contentType returns the record's content-type header, if any.
func contentType(r *kgo.Record) string {
	for _, h := range r.Headers {
		if strings.EqualFold(h.Key, "content-type") {
			return string(h.Value)
		}
	}
	return ""
}

func (k *Kafka) assigned(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
	for topic, ps := range assigned {
		k.tr.assign(topic, ps)
		if len(ps) > 0 {
			k.log.Info("partitions assigned", "topic", topic, "partitions", ps)
		}
	}
	k.joined.Store(true)
	k.m.Rebalance("assigned")
}

// revoked waits (bounded) for the revoked partitions' records in flight,
// commits what is done and gives the partitions up.
func (k *Kafka) revoked(ctx context.Context, _ *kgo.Client, revoked map[string][]int32) {
	var states []*partState
	for topic, ps := range revoked {
		states = append(states, k.tr.detach(topic, ps)...)
		for _, p := range ps {
			k.m.ForgetPartition(topic, p)
		}
	}
	if len(states) == 0 {
		return
	}
	k.m.Rebalance("revoked")
	abandoned := 0
	if !k.closing.Load() {
		abandoned = k.waitDrained(ctx, states)
		// Bounded: the member must rejoin within the rebalance timeout.
		cctx, cancel := context.WithTimeout(ctx, max(k.drain, time.Second))
		if err := k.commit(cctx, states); err != nil {
			k.log.Warn("commit on revocation failed", "err", err)
		}
		cancel()
	} else {
		// Closing: Close has committed what was done.
		abandoned, _ = k.tr.pending(states)
	}
	k.log.Info("partitions revoked", "partitions", partitionList(revoked), "abandoned_in_flight", abandoned)
}

// waitDrained waits until states have no record in flight or the drain
// timeout passes, and returns how many are left.
func (k *Kafka) waitDrained(ctx context.Context, states []*partState) int {
	timer := time.NewTimer(k.drain)
	defer timer.Stop()
	for {
		n, changed := k.tr.pending(states)
		if n == 0 {
			return 0
		}
		select {
		case <-changed:
		case <-timer.C:
			return n
		case <-ctx.Done():
			return n
		}
	}
}

func (k *Kafka) lost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	for topic, ps := range lost {
		k.tr.detach(topic, ps)
		for _, p := range ps {
			k.m.ForgetPartition(topic, p)
		}
	}
	k.joined.Store(false)
	k.m.Rebalance("lost")
	k.log.Warn("partitions lost (session expired or fenced); their records in flight will be read again by their next owner", "partitions", partitionList(lost))
}

// partitionList names the partitions of a rebalance callback as
// "topic/partition" strings, by topic then partition number: a JSON list
// in the logs (fmt.Sprint of the map printed Go syntax,
// "map[crawl.documents:[0 1 2]]").
func partitionList(m map[string][]int32) []string {
	topics := slices.Sorted(maps.Keys(m))
	var out []string
	for _, topic := range topics {
		for _, p := range slices.Sorted(slices.Values(m[topic])) {
			out = append(out, topic+"/"+strconv.Itoa(int(p)))
		}
	}
	return out
}

// Commit commits, for every owned partition, the offset past its done
// prefix.
func (k *Kafka) Commit(ctx context.Context) error {
	return k.commit(ctx, nil)
}

// RefreshLag sets the lag gauge of every owned partition to the lag as
// the brokers measure it: the partition's end offset minus the group's
// committed offset (minus the log start offset when nothing is
// committed), read with two admin requests. It also refreshes the
// in-flight gauges, so both fall back to 0 at idle.
func (k *Kafka) RefreshLag(ctx context.Context) error {
	k.m.InFlight(k.inflight.load())
	owned := k.tr.owned()
	if len(owned) == 0 {
		return nil
	}
	adm := kadm.NewClient(k.cl)
	ends, err := adm.ListEndOffsets(ctx, k.topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return fmt.Errorf("consumer: kafka: lag: end offsets: %w", err)
	}
	committed, err := adm.FetchOffsets(ctx, k.group)
	if err == nil {
		err = committed.Error()
	}
	if err != nil {
		return fmt.Errorf("consumer: kafka: lag: committed offsets: %w", err)
	}
	var starts kadm.ListedOffsets
	for _, tp := range owned {
		end, ok := ends.Lookup(tp.topic, tp.partition)
		if !ok || end.Err != nil {
			continue
		}
		from := int64(-1)
		if c, ok := committed.Lookup(tp.topic, tp.partition); ok && c.At >= 0 {
			from = c.At
		} else {
			if starts == nil {
				if starts, err = adm.ListStartOffsets(ctx, k.topic); err != nil {
					return fmt.Errorf("consumer: kafka: lag: start offsets: %w", err)
				}
			}
			if s, ok := starts.Lookup(tp.topic, tp.partition); ok && s.Err == nil {
				from = s.Offset
			}
		}
		if from < 0 {
			continue
		}
		if !k.tr.isOwned(tp) {
			continue // revoked meanwhile: its series was removed
		}
		k.m.Lag(tp.topic, tp.partition, end.Offset-from)
		if !k.tr.isOwned(tp) { // revoked while it was set
			k.m.ForgetPartition(tp.topic, tp.partition)
		}
	}
	return nil
}

func (k *Kafka) commit(ctx context.Context, states []*partState) error {
	k.commitMu.Lock()
	defer k.commitMu.Unlock()
	offsets := k.tr.commitable(states)
	if len(offsets) == 0 {
		return nil
	}
	var cerr error
	failed := false // the request as a whole: nothing was committed
	k.cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			cerr, failed = err, true
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if perr := kerr.ErrorForCode(p.ErrorCode); perr != nil {
					cerr = fmt.Errorf("%s/%d: %w", t.Topic, p.Partition, perr)
					delete(offsets[t.Topic], p.Partition)
				}
			}
		}
	})
	if !failed {
		// Partitions that failed were removed: they stay due and are
		// committed again by the next commit.
		k.tr.committed(offsets, states)
	}
	k.m.Commit(cerr)
	if cerr != nil {
		return fmt.Errorf("consumer: kafka: commit: %w", cerr)
	}
	return nil
}

// Close commits what is done, leaves the group and closes the client,
// within ctx: half of the time left for the commit, the rest for leaving
// and closing. Records not done are not committed: the partitions' next
// owners read them again. When ctx ends first (brokers that do not
// answer), Close returns an error and the client's own close finishes in
// the background, bounded by its request timeouts; nothing is committed
// after Close returns.
func (k *Kafka) Close(ctx context.Context) error {
	k.closing.Store(true)
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if dl, ok := ctx.Deadline(); ok {
		cctx, cancel = context.WithTimeout(ctx, time.Until(dl)/2)
	}
	err := k.Commit(cctx)
	cancel()
	if lerr := k.cl.LeaveGroupContext(ctx); lerr != nil && err == nil {
		err = fmt.Errorf("consumer: kafka: leave group: %w", lerr)
	}
	k.tr.detachAll()
	go func() { // owned by Close; Closed reports its end
		k.cl.Close()
		k.closeOnce.Do(func() { close(k.closed) })
	}()
	select {
	case <-k.closed:
	case <-ctx.Done():
		if err == nil {
			err = fmt.Errorf("consumer: kafka: close: %w", ctx.Err())
		}
	}
	k.joined.Store(false)
	return err
}

// Closed is closed once the client started by Close has finished closing
// (after Close returned, when the brokers do not answer).
func (k *Kafka) Closed() <-chan struct{} { return k.closed }

// Abort gives everything up without committing and closes the client, as
// a crash would (the group moves the partitions on at once).
func (k *Kafka) Abort() {
	k.closing.Store(true)
	k.tr.detachAll()
	k.cl.Close()
	k.closeOnce.Do(func() { close(k.closed) })
	k.joined.Store(false)
}
