package sink

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/neardup/neardup/metrics"
	"github.com/neardup/neardup/pipeline"
)

// Dead-letter record headers.
const (
	HeaderReason          = "neardup.reason"
	HeaderError           = "neardup.error"
	HeaderSourceTopic     = "neardup.source.topic"
	HeaderSourcePartition = "neardup.source.partition"
	HeaderSourceOffset    = "neardup.source.offset"
	// HeaderSourceSize is the size of the input record's value in bytes
	// (for a record batch too large to read, the size of the batch, and
	// the dead letter has no key, value or other header of the input).
	HeaderSourceSize = "neardup.source.size"
	// HeaderTruncated is set (to the original value's length) on a dead
	// letter whose value had to be cut because the topic refused it whole.
	HeaderTruncated = "neardup.truncated"
)

// Topic roles, the label of the produce metrics.
const (
	RoleEvents      = "events"
	RoleDeadLetters = "dead_letters"
	RoleUnique      = "unique"
)

// KafkaConfig configures a [Kafka] sink.
type KafkaConfig struct {
	// Client holds the connection options shared with the consumer.
	Client []kgo.Opt
	// EventsTopic receives verdict events; DeadLetterTopic rejected
	// records; UniqueTopic, when set, the original record of every unique
	// document (and every tombstone read, found or not, so a compacted
	// unique topic drops the document too, at least once).
	EventsTopic, DeadLetterTopic, UniqueTopic string
	// DeliveryTimeout bounds the client's retries of one record before
	// its produce fails (default 30s).
	DeliveryTimeout time.Duration
	// DeadLetterMaxBytes is the largest record the dead-letter topic takes
	// (its max.message.bytes); 0: Kafka's default, 1000012. Dead letters
	// up to it keep the input's whole value; a larger one keeps the part
	// of its value that fits (header neardup.truncated).
	DeadLetterMaxBytes int
	// DeadLetterClient holds the connection options of the dead-letter
	// client when it is one of its own (hooks must not be shared between
	// clients); nil: Client.
	DeadLetterClient []kgo.Opt
	Metrics          *metrics.Metrics
}

// Kafka produces the pipeline's outputs: events (key: the document id;
// value: the event JSON, byte for byte what [Lines] writes without the
// newline), dead letters (the input record's key, value and headers, plus
// the neardup.* headers) and unique passthrough records. It uses an
// idempotent producer with acks=all; the client retries each record until
// DeliveryTimeout. NewKafka creates the franz-go client, which runs its
// own goroutines until Close.
type Kafka struct {
	cl                   *kgo.Client
	dl                   *kgo.Client // dead letters: cl, or a client whose batches may reach dlMax
	dlMax                int
	events, dead, unique string
	m                    *metrics.Metrics
}

// defaultMaxMessageBytes is Kafka's default max.message.bytes, and
// franz-go's default producer batch limit.
const defaultMaxMessageBytes = 1000012

// NewKafka creates the producer client.
func NewKafka(cfg KafkaConfig) (*Kafka, error) {
	if cfg.EventsTopic == "" || cfg.DeadLetterTopic == "" {
		return nil, errors.New("sink: kafka: events and dead-letter topics are required")
	}
	if cfg.DeliveryTimeout <= 0 {
		cfg.DeliveryTimeout = 30 * time.Second
	}
	opts := append([]kgo.Opt{}, cfg.Client...)
	opts = append(opts,
		kgo.RequiredAcks(kgo.AllISRAcks()), // required by (and the default of) idempotent writes
		kgo.RecordDeliveryTimeout(cfg.DeliveryTimeout),
		kgo.ProducerLinger(5*time.Millisecond),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("sink: kafka: %w", err)
	}
	k := &Kafka{cl: cl, dl: cl, dlMax: defaultMaxMessageBytes, events: cfg.EventsTopic, dead: cfg.DeadLetterTopic, unique: cfg.UniqueTopic, m: cfg.Metrics}
	if cfg.DeadLetterMaxBytes > defaultMaxMessageBytes {
		// The producer batch limit applies to every topic of a client,
		// and a batch over a topic's limit fails whole: dead letters get
		// a client of their own.
		k.dlMax = min(cfg.DeadLetterMaxBytes, 1<<30)
		dlOpts := cfg.DeadLetterClient
		if dlOpts == nil {
			dlOpts = cfg.Client
		}
		dlOpts = append(append([]kgo.Opt{}, dlOpts...), opts[len(cfg.Client):]...)
		k.dl, err = kgo.NewClient(append(dlOpts, kgo.ProducerBatchMaxBytes(int32(k.dlMax)))...)
		if err != nil {
			cl.Close()
			return nil, fmt.Errorf("sink: kafka: %w", err)
		}
	}
	return k, nil
}

// Client returns the underlying client (for pings and admin requests).
func (k *Kafka) Client() *kgo.Client { return k.cl }

// Write produces everything o says about the input record in and calls
// done exactly once, after every produced record is acknowledged, with
// the first error (nil when all were acknowledged). done runs on a client
// goroutine and must not block. Write itself blocks only while the
// client's produce buffer is full.
func (k *Kafka) Write(ctx context.Context, o pipeline.Output, in *kgo.Record, done func(error)) {
	var recs []*kgo.Record
	var roles []string
	add := func(role string, r *kgo.Record) {
		recs, roles = append(recs, r), append(roles, role)
	}
	var encErr error
	event := func(ev *pipeline.Event) {
		v, err := Marshal(ev)
		if err != nil {
			encErr = err
			return
		}
		add(RoleEvents, &kgo.Record{Topic: k.events, Key: []byte(ev.ID), Value: v})
	}
	switch {
	case o.Dead != nil:
		add(RoleDeadLetters, deadLetter(k.dead, o.Dead, in))
	default:
		if o.Event != nil {
			event(o.Event)
		}
		if k.unique != "" && (o.Event == nil || o.Event.Kind == pipeline.KindUnique) {
			add(RoleUnique, &kgo.Record{Topic: k.unique, Key: in.Key, Value: in.Value, Headers: cloneHeaders(in.Headers)})
		}
		if k.unique != "" && o.Event != nil && o.Event.Kind == pipeline.KindDeleted && !o.Event.Replay {
			// The tombstone goes on, so a compacted unique topic drops
			// the document too: on every delete, found or not, since a
			// delete read again after a crash between the index's delete
			// and the commit finds nothing left to remove, and the
			// tombstone may never have been produced (idempotent
			// downstream: a compacted topic keeps one). Not for a
			// document record read again after its delete (Replay): its
			// key need not be the id.
			add(RoleUnique, &kgo.Record{Topic: k.unique, Key: in.Key, Headers: cloneHeaders(in.Headers)})
		}
	}
	for _, c := range o.Corrections {
		event(c)
	}
	if encErr != nil {
		done(fmt.Errorf("sink: kafka: encode event: %w", encErr))
		return
	}
	if len(recs) == 0 {
		done(nil)
		return
	}
	agg := &pending{n: len(recs), done: done}
	start := time.Now()
	for i, r := range recs {
		role := roles[i]
		cl := k.cl
		if role == RoleDeadLetters {
			cl = k.dl
		}
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			if err != nil && role == RoleDeadLetters && errors.Is(err, kerr.MessageTooLarge) {
				// The topic refuses the record whole: keep what fits and
				// say so; the headers locate the original.
				k.dl.Produce(ctx, truncated(r, in, k.dlMax), func(_ *kgo.Record, err error) {
					k.acked(role, start, err, agg)
				})
				return
			}
			k.acked(role, start, err, agg)
		})
	}
}

func (k *Kafka) acked(role string, start time.Time, err error, agg *pending) {
	k.m.Produced(role, err)
	if err == nil {
		k.m.Stage(metrics.StageProduce, time.Since(start))
	} else {
		err = fmt.Errorf("sink: kafka: produce to %s topic: %w", role, err)
	}
	agg.finish(err)
}

// pending calls done once all of n produces finished.
type pending struct {
	mu   sync.Mutex
	n    int
	err  error
	done func(error)
}

func (p *pending) finish(err error) {
	p.mu.Lock()
	if err != nil && p.err == nil {
		p.err = err
	}
	p.n--
	last, perr := p.n == 0, p.err
	p.mu.Unlock()
	if last {
		p.done(perr)
	}
}

// deadLetter is the dead-letter record of in: its key, value and headers
// untouched, plus the reason, the error and where it came from.
func deadLetter(topic string, dl *pipeline.DeadLetter, in *kgo.Record) *kgo.Record {
	h := cloneHeaders(in.Headers)
	h = append(h,
		kgo.RecordHeader{Key: HeaderReason, Value: []byte(dl.Reason)},
		kgo.RecordHeader{Key: HeaderError, Value: []byte(dl.Error)},
		kgo.RecordHeader{Key: HeaderSourceTopic, Value: []byte(in.Topic)},
		kgo.RecordHeader{Key: HeaderSourcePartition, Value: []byte(strconv.Itoa(int(in.Partition)))},
		kgo.RecordHeader{Key: HeaderSourceOffset, Value: []byte(strconv.FormatInt(in.Offset, 10))},
	)
	if !hasHeader(in.Headers, HeaderSourceSize) {
		h = append(h, kgo.RecordHeader{Key: HeaderSourceSize, Value: []byte(strconv.Itoa(len(in.Value)))})
	}
	return &kgo.Record{Topic: topic, Key: in.Key, Value: in.Value, Headers: h}
}

// truncated is a dead letter cut to what fits in a record of limit bytes
// (what its key, headers and the batch framing leave), at least
// pipeline.MaxRawBytes of its value.
func truncated(r, in *kgo.Record, limit int) *kgo.Record {
	h := append(cloneHeaders(r.Headers), kgo.RecordHeader{Key: HeaderTruncated, Value: []byte(strconv.Itoa(len(in.Value)))})
	room := limit - len(r.Key) - 1024 // batch and record framing, varints
	for _, x := range h {
		room -= len(x.Key) + len(x.Value) + 10
	}
	return &kgo.Record{Topic: r.Topic, Key: r.Key, Value: r.Value[:min(len(r.Value), max(room, pipeline.MaxRawBytes))], Headers: h}
}

func hasHeader(hs []kgo.RecordHeader, key string) bool {
	for _, h := range hs {
		if h.Key == key {
			return true
		}
	}
	return false
}

func cloneHeaders(h []kgo.RecordHeader) []kgo.RecordHeader {
	return append([]kgo.RecordHeader(nil), h...)
}

// Flush waits until every produced record is acknowledged or ctx ends.
func (k *Kafka) Flush(ctx context.Context) error {
	if err := k.cl.Flush(ctx); err != nil {
		return fmt.Errorf("sink: kafka: flush: %w", err)
	}
	if k.dl != k.cl {
		if err := k.dl.Flush(ctx); err != nil {
			return fmt.Errorf("sink: kafka: flush dead letters: %w", err)
		}
	}
	return nil
}

// Close closes the clients; records not yet acknowledged fail.
func (k *Kafka) Close() {
	if k.dl != k.cl {
		k.dl.Close()
	}
	k.cl.Close()
}
