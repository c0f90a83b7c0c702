package sink

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/neardup/neardup/metrics"
	"github.com/neardup/neardup/stream"
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
	// letter whose value had to be cut to fit the dead-letter topic.
	HeaderTruncated = "neardup.truncated"
	// HeaderKeyTruncated is set (to the original key's length) on a dead
	// letter whose key had to be cut to fit the dead-letter topic.
	HeaderKeyTruncated = "neardup.truncated.key"
	// HeaderHeadersDropped is set (to how many) on a dead letter that
	// had to leave out input headers to fit the dead-letter topic.
	HeaderHeadersDropped = "neardup.truncated.headers"
)

// Reasons of the dead letters the sink makes itself: a record that the
// pipeline decided but whose output the topic cannot take.
const (
	// ReasonEventTooLarge: the event does not fit the output topic (the
	// pipeline shapes events to kafka's limit read at start; the topic's
	// limit was lowered since).
	ReasonEventTooLarge = string(stream.ReasonEventTooLarge)
	// ReasonUniqueTooLarge: a unique document's record is larger than
	// the unique topic takes; its event was produced.
	ReasonUniqueTooLarge = "unique_too_large"
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
	// DeliveryTimeout, when set, bounds the client's retries of one
	// record before its produce fails (franz-go's RecordDeliveryTimeout,
	// judged only between requests); 0: a record is retried until it is
	// acknowledged or refused for good.
	DeliveryTimeout time.Duration
	// MaxBytes is, by topic, the largest record batch the topic takes
	// (its max.message.bytes, read from the brokers); a topic not in it
	// takes DefaultMaxMessageBytes. Records are shaped to fit (see
	// [Kafka.Write]) and the producer's batches are bounded by it.
	MaxBytes map[string]int
	Metrics  *metrics.Metrics
}

// Kafka produces the pipeline's outputs: events (key: the document id;
// value: the event JSON, byte for byte what [Lines] writes without the
// newline), dead letters (the input record's key, value and headers, plus
// the neardup.* headers) and unique passthrough records. It uses one
// idempotent producer with acks=all whose batches to each topic are
// bounded by that topic's max.message.bytes; the client retries each
// record until it is acknowledged (or DeliveryTimeout, when set). NewKafka creates the franz-go client,
// which runs its own goroutines until Close.
type Kafka struct {
	cl                   *kgo.Client
	limits               map[string]int
	events, dead, unique string
	m                    *metrics.Metrics

	// Writes not yet acknowledged, oldest first (OldestPending).
	pendMu sync.Mutex
	pend   list.List // of time.Time
}

// DefaultMaxMessageBytes is Kafka's default max.message.bytes of a topic
// (and franz-go's default producer batch limit): the limit assumed for a
// topic whose own could not be read.
const DefaultMaxMessageBytes = 1000012

// maxRecordBytes is the largest record batch a franz-go producer writes.
const maxRecordBytes = 1 << 30

// NewKafka creates the producer client.
func NewKafka(cfg KafkaConfig) (*Kafka, error) {
	if cfg.EventsTopic == "" || cfg.DeadLetterTopic == "" {
		return nil, errors.New("sink: kafka: events and dead-letter topics are required")
	}
	k := &Kafka{limits: map[string]int{}, events: cfg.EventsTopic, dead: cfg.DeadLetterTopic, unique: cfg.UniqueTopic, m: cfg.Metrics}
	largest := DefaultMaxMessageBytes
	for _, t := range []string{cfg.EventsTopic, cfg.DeadLetterTopic, cfg.UniqueTopic} {
		if t == "" {
			continue
		}
		n := cfg.MaxBytes[t]
		if n <= 0 {
			n = DefaultMaxMessageBytes
		}
		k.limits[t] = min(max(n, minRecordBytes), maxRecordBytes)
		largest = max(largest, k.limits[t])
	}
	opts := append([]kgo.Opt{}, cfg.Client...)
	opts = append(opts,
		kgo.RequiredAcks(kgo.AllISRAcks()), // required by (and the default of) idempotent writes
		kgo.ProducerLinger(5*time.Millisecond),
		// A batch over its topic's limit would fail whole: each topic's
		// batches are bounded by its own.
		kgo.ProducerBatchMaxBytesFn(func(topic string) int32 { return int32(k.limit(topic)) }),
		kgo.BrokerMaxWriteBytes(int32(min(max(100<<20, largest+1<<20), maxRecordBytes))),
	)
	if cfg.DeliveryTimeout > 0 {
		opts = append(opts, kgo.RecordDeliveryTimeout(cfg.DeliveryTimeout))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("sink: kafka: %w", err)
	}
	k.cl = cl
	return k, nil
}

// limit returns the largest record batch topic takes.
func (k *Kafka) limit(topic string) int {
	if n, ok := k.limits[topic]; ok {
		return n
	}
	return DefaultMaxMessageBytes
}

// Record size bounds. A record batch (v2) holding one record is its
// 61-byte header, the record's key, value and headers, and the record's
// varints: length, attributes, timestamp and offset deltas, key and value
// lengths, header count (at most 36 bytes together), two lengths per
// header (at most 10 bytes).
const (
	recordOverhead = 61 + 36
	headerOverhead = 10
	// minRecordBytes is the smallest limit considered: a dead letter's
	// neardup.* headers fit in it.
	minRecordBytes = 4 << 10
)

// recordSize bounds the record batch that holds r alone.
func recordSize(r *kgo.Record) int {
	n := recordOverhead + len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += headerOverhead + len(h.Key) + len(h.Value)
	}
	return n
}

// MaxEventBytes is the largest event value (JSON) that fits a topic whose
// max.message.bytes is limit, with its key (the document id, at most
// stream.MaxIDBytes).
func MaxEventBytes(limit int) int {
	return min(limit, maxRecordBytes) - recordOverhead - stream.MaxIDBytes
}

// OldestPending returns how long the oldest Write whose records are not
// all acknowledged has been waiting (0 when none is).
func (k *Kafka) OldestPending() time.Duration {
	k.pendMu.Lock()
	defer k.pendMu.Unlock()
	if f := k.pend.Front(); f != nil {
		return time.Since(f.Value.(time.Time))
	}
	return 0
}

// Client returns the underlying client (for pings and admin requests).
func (k *Kafka) Client() *kgo.Client { return k.cl }

// Write produces everything o says about the input record in and calls
// done exactly once, after every produced record is acknowledged, with
// the first error (nil when all were acknowledged). done runs on a client
// goroutine and must not block. Write itself blocks only while the
// client's produce buffer is full.
//
// Every record is shaped to its topic's limit, so no input stops the
// stream: an event or a unique record that does not fit becomes a dead
// letter (event_too_large, unique_too_large) of the input; a dead letter
// that does not fit is cut (see fitDeadLetter). A topic that refuses a
// record all the same (its limit was lowered since it was read) gets the
// same treatment with half the record's size as the limit, down to a dead
// letter of the neardup.* headers alone.
func (k *Kafka) Write(ctx context.Context, o stream.Output, in *kgo.Record, done func(error)) {
	var recs []*kgo.Record
	var roles []string
	add := func(role string, r *kgo.Record) {
		recs, roles = append(recs, r), append(roles, role)
	}
	var encErr error
	event := func(ev *stream.Event) {
		v, err := Marshal(ev)
		if err != nil {
			encErr = err
			return
		}
		add(RoleEvents, &kgo.Record{Topic: k.events, Key: []byte(ev.ID), Value: v})
	}
	switch {
	case o.Dead != nil:
		add(RoleDeadLetters, deadLetter(k.dead, string(o.Dead.Reason), o.Dead.Error, in))
	default:
		if o.Event != nil {
			event(o.Event)
		}
		if k.unique != "" && (o.Event == nil || o.Event.Kind == stream.KindUnique) {
			add(RoleUnique, &kgo.Record{Topic: k.unique, Key: in.Key, Value: in.Value, Headers: cloneHeaders(in.Headers)})
		}
		if k.unique != "" && o.Event != nil && o.Event.Kind == stream.KindDeleted && !o.Event.Replay {
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
	for _, r := range o.Revisions {
		event(r)
	}
	if encErr != nil {
		done(fmt.Errorf("sink: kafka: encode event: %w", encErr))
		return
	}
	if len(recs) == 0 {
		done(nil)
		return
	}
	start := time.Now()
	k.pendMu.Lock()
	el := k.pend.PushBack(start)
	k.pendMu.Unlock()
	agg := &pending{n: len(recs), done: func(err error) {
		k.pendMu.Lock()
		k.pend.Remove(el)
		k.pendMu.Unlock()
		done(err)
	}}
	for i, r := range recs {
		k.produce(ctx, roles[i], r, in, k.limit(r.Topic), start, agg)
	}
}

// produce produces orig, a record of role, shaped to limit: an event or
// unique record over it becomes a dead letter of in, a dead letter is cut
// (fitDeadLetter) to its topic's limit or this one, the lower. A record
// the topic refuses as too large all the same (its limit was lowered
// since it was read) is produced again shaped to half its size, down to a
// dead letter of the neardup.* headers alone.
func (k *Kafka) produce(ctx context.Context, role string, orig, in *kgo.Record, limit int, start time.Time, agg *pending) {
	r := orig
	if role != RoleDeadLetters {
		if size := recordSize(r); size > limit {
			reason, what := ReasonEventTooLarge, fmt.Sprintf("event of id %q", r.Key)
			if role == RoleUnique {
				reason, what = ReasonUniqueTooLarge, "the unique document's record (its event was produced)"
			}
			k.m.DeadLetter(reason)
			role = RoleDeadLetters
			orig = deadLetter(k.dead, reason, fmt.Sprintf("%s: %d bytes, more than topic %s takes (%d)", what, size, r.Topic, limit), in)
			limit = k.limit(k.dead)
		}
	}
	if role == RoleDeadLetters {
		r = fitDeadLetter(orig, min(limit, k.limit(k.dead)))
	}
	k.cl.Produce(ctx, r, func(r *kgo.Record, err error) {
		if errors.Is(err, kerr.MessageTooLarge) {
			if size := recordSize(r); size > minRecordBytes/2 {
				k.produce(ctx, role, orig, in, size/2, start, agg)
				return
			}
		}
		k.acked(role, start, err, agg)
	})
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
func deadLetter(topic, reason, msg string, in *kgo.Record) *kgo.Record {
	h := cloneHeaders(in.Headers)
	h = append(h,
		kgo.RecordHeader{Key: HeaderReason, Value: []byte(reason)},
		kgo.RecordHeader{Key: HeaderError, Value: []byte(msg)},
		kgo.RecordHeader{Key: HeaderSourceTopic, Value: []byte(in.Topic)},
		kgo.RecordHeader{Key: HeaderSourcePartition, Value: []byte(strconv.Itoa(int(in.Partition)))},
		kgo.RecordHeader{Key: HeaderSourceOffset, Value: []byte(strconv.FormatInt(in.Offset, 10))},
	)
	if !hasHeader(in.Headers, HeaderSourceSize) {
		h = append(h, kgo.RecordHeader{Key: HeaderSourceSize, Value: []byte(strconv.Itoa(len(in.Value)))})
	}
	return &kgo.Record{Topic: topic, Key: in.Key, Value: in.Value, Headers: h}
}

// maxErrorHeader bounds the neardup.error header of a dead letter that
// had to be cut.
const maxErrorHeader = 1 << 10

// fitDeadLetter returns dl, a dead letter (deadLetter), whole when it
// fits a record batch of limit bytes, else cut to fit, keeping in this
// order what fits (the neardup.source.* headers locate the whole input):
//
//  1. the neardup.* headers (neardup.error cut to 1 KiB when needed);
//  2. the key, cut when needed (header neardup.truncated.key: its length);
//  3. the input's headers, in order, each whole or left out (header
//     neardup.truncated.headers: how many were left out);
//  4. the value, cut when needed (header neardup.truncated: its length).
func fitDeadLetter(dl *kgo.Record, limit int) *kgo.Record {
	if recordSize(dl) <= limit {
		return dl
	}
	var own, input []kgo.RecordHeader
	for _, h := range dl.Headers {
		if strings.HasPrefix(h.Key, "neardup.") {
			if h.Key == HeaderError && len(h.Value) > maxErrorHeader {
				h.Value = h.Value[:maxErrorHeader]
			}
			own = append(own, h)
		} else {
			input = append(input, h)
		}
	}
	// Room for the three markers, whether or not they are needed.
	room := limit - recordOverhead - 3*(headerOverhead+len(HeaderHeadersDropped)+10)
	for _, h := range own {
		room -= headerOverhead + len(h.Key) + len(h.Value)
	}
	take := func(n int) int {
		n = max(min(n, room), 0)
		room -= n
		return n
	}
	out := &kgo.Record{Topic: dl.Topic, Headers: own}
	out.Key = dl.Key[:take(len(dl.Key))]
	if len(out.Key) < len(dl.Key) {
		out.Headers = append(out.Headers, kgo.RecordHeader{Key: HeaderKeyTruncated, Value: []byte(strconv.Itoa(len(dl.Key)))})
	}
	dropped := 0
	for _, h := range input {
		if n := headerOverhead + len(h.Key) + len(h.Value); n <= room {
			room -= n
			out.Headers = append(out.Headers, h)
		} else {
			dropped++
		}
	}
	if dropped > 0 {
		out.Headers = append(out.Headers, kgo.RecordHeader{Key: HeaderHeadersDropped, Value: []byte(strconv.Itoa(dropped))})
	}
	out.Value = dl.Value[:take(len(dl.Value))]
	if len(out.Value) < len(dl.Value) {
		out.Headers = append(out.Headers, kgo.RecordHeader{Key: HeaderTruncated, Value: []byte(strconv.Itoa(len(dl.Value)))})
	}
	if dl.Value == nil {
		out.Value = nil
	}
	return out
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
	return nil
}

// Close closes the client; records not yet acknowledged fail.
func (k *Kafka) Close() { k.cl.Close() }
