// Package kafkatest runs Kafka for tests: an in-process kfake cluster on
// random loopback ports, and github.com/segmentio/kafka-go as the
// independent client that produces fixtures and reads topics back, so the
// service's own client (franz-go) never checks itself.
package kafkatest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/twmb/franz-go/pkg/kfake"
)

// Cluster is a running kfake cluster.
type Cluster struct {
	*kfake.Cluster
	// Brokers is the comma-separated broker list.
	Brokers string
	// Dialer reaches the cluster with kafka-go (TLS and SASL as given to
	// Start with WithClient).
	Dialer *kafka.Dialer
	// transport is shared by the writers and clients; its idle
	// connections are closed when the test ends.
	transport *kafka.Transport
}

// Option configures Start.
type Option func(*startCfg)

type startCfg struct {
	brokers int
	kopts   []kfake.Opt
	tls     *tls.Config
	mech    sasl.Mechanism
}

// Brokers sets the number of brokers (default 1).
func Brokers(n int) Option { return func(c *startCfg) { c.brokers = n } }

// Topic seeds a topic with the given partitions.
func Topic(name string, partitions int32) Option {
	return func(c *startCfg) { c.kopts = append(c.kopts, kfake.SeedTopics(partitions, name)) }
}

// KfakeOpts passes options to kfake (SASL users, TLS).
func KfakeOpts(o ...kfake.Opt) Option { return func(c *startCfg) { c.kopts = append(c.kopts, o...) } }

// WithClient makes the kafka-go client use TLS and SASL.
func WithClient(tc *tls.Config, m sasl.Mechanism) Option {
	return func(c *startCfg) { c.tls, c.mech = tc, m }
}

// Start starts a kfake cluster on random loopback ports; it is closed when
// the test ends.
func Start(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	c := startCfg{brokers: 1}
	for _, o := range opts {
		o(&c)
	}
	kopts := append([]kfake.Opt{kfake.NumBrokers(c.brokers), kfake.ListenFn(func(network, _ string) (net.Listener, error) {
		return net.Listen(network, "127.0.0.1:0")
	})}, c.kopts...)
	kc, err := kfake.NewCluster(kopts...)
	if err != nil {
		t.Fatalf("kafkatest: start kfake: %v", err)
	}
	t.Cleanup(kc.Close)
	tr := &kafka.Transport{TLS: c.tls, SASL: c.mech}
	t.Cleanup(tr.CloseIdleConnections)
	return &Cluster{
		Cluster: kc, Brokers: strings.Join(kc.ListenAddrs(), ","),
		Dialer:    &kafka.Dialer{Timeout: 10 * time.Second, TLS: c.tls, SASLMechanism: c.mech},
		transport: tr,
	}
}

func (c *Cluster) seed() string { return strings.Split(c.Brokers, ",")[0] }

// CreateTopic creates a topic with kafka-go.
func (c *Cluster) CreateTopic(t testing.TB, name string, partitions int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := c.Dialer.DialContext(ctx, "tcp", c.seed())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.CreateTopics(kafka.TopicConfig{Topic: name, NumPartitions: partitions, ReplicationFactor: 1})
	if err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
		t.Fatalf("kafkatest: create topic %s: %v", name, err)
	}
}

// Produce writes messages to topic with kafka-go, partitioned by a hash of
// the key, acks from all replicas, in order.
func (c *Cluster) Produce(t testing.TB, topic string, msgs ...kafka.Message) {
	t.Helper()
	w := &kafka.Writer{
		Addr: kafka.TCP(strings.Split(c.Brokers, ",")...), Topic: topic, Balancer: &kafka.Hash{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: 5 * time.Millisecond, BatchSize: 500,
		MaxAttempts: 10, Transport: c.transport,
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for len(msgs) > 0 {
		n := min(len(msgs), 1000)
		if err := w.WriteMessages(ctx, msgs[:n]...); err != nil {
			t.Fatalf("kafkatest: produce to %s: %v", topic, err)
		}
		msgs = msgs[n:]
	}
}

// Partitions returns a topic's partition ids.
func (c *Cluster) Partitions(t testing.TB, topic string) []int {
	t.Helper()
	conn, err := c.Dialer.Dial("tcp", c.seed())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ps, err := conn.ReadPartitions(topic)
	if err != nil {
		t.Fatalf("kafkatest: partitions of %s: %v", topic, err)
	}
	var ids []int
	for _, p := range ps {
		ids = append(ids, p.ID)
	}
	slices.Sort(ids)
	return ids
}

// ReadAll returns every message of topic up to the partitions' current
// high watermarks, partition by partition in offset order.
func (c *Cluster) ReadAll(t testing.TB, topic string) []kafka.Message {
	t.Helper()
	var out []kafka.Message
	for _, p := range c.Partitions(t, topic) {
		msgs, err := c.readPartition(topic, p)
		if err != nil {
			t.Fatalf("kafkatest: read %s/%d: %v", topic, p, err)
		}
		out = append(out, msgs...)
	}
	return out
}

func (c *Cluster) readPartition(topic string, p int) ([]kafka.Message, error) {
	return c.readPartitionFrom(topic, p, 0)
}

// readPartitionFrom reads partition p of topic from offset from (or its
// first) to its high watermark.
func (c *Cluster) readPartitionFrom(topic string, p int, from int64) ([]kafka.Message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := c.Dialer.DialLeader(ctx, "tcp", c.seed(), topic, p)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	first, last, err := conn.ReadOffsets()
	if err != nil {
		return nil, err
	}
	first = max(first, from)
	var out []kafka.Message
	for off := first; off < last; {
		if _, err := conn.Seek(off, kafka.SeekAbsolute); err != nil {
			return nil, err
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		b := conn.ReadBatch(1, 64<<20)
		for {
			m, err := b.ReadMessage()
			if err != nil {
				if errors.Is(err, io.EOF) || errors.Is(err, kafka.RequestTimedOut) || isTimeout(err) {
					break
				}
				b.Close()
				return nil, err
			}
			out = append(out, m)
			off = m.Offset + 1
		}
		if err := b.Close(); err != nil && !isTimeout(err) && !errors.Is(err, io.EOF) {
			return nil, err
		}
	}
	return out, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Tail reads a topic incrementally (Cluster.Tail).
type Tail struct {
	c     *Cluster
	topic string
	next  map[int]int64
}

// Tail returns a reader of topic from its start whose every Read returns
// the messages that arrived since the one before, partition by partition
// in offset order: a test that waits for many messages reads each once.
func (c *Cluster) Tail(topic string) *Tail {
	return &Tail{c: c, topic: topic, next: map[int]int64{}}
}

// Read returns the messages that arrived since the last Read.
func (tl *Tail) Read(t testing.TB) []kafka.Message {
	t.Helper()
	var out []kafka.Message
	for _, p := range tl.c.Partitions(t, tl.topic) {
		msgs, err := tl.c.readPartitionFrom(tl.topic, p, tl.next[p])
		if err != nil {
			t.Fatalf("kafkatest: read %s/%d: %v", tl.topic, p, err)
		}
		if n := len(msgs); n > 0 {
			tl.next[p] = msgs[n-1].Offset + 1
		}
		out = append(out, msgs...)
	}
	return out
}

// WaitFor reads topic until keep accepts at least n messages or timeout
// passes, and returns what keep accepted (all of it when keep is nil).
func (c *Cluster) WaitFor(t testing.TB, topic string, n int, timeout time.Duration, keep func(kafka.Message) bool) []kafka.Message {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		all := c.ReadAll(t, topic)
		var got []kafka.Message
		for _, m := range all {
			if keep == nil || keep(m) {
				got = append(got, m)
			}
		}
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Committed returns the group's committed offset per partition of topic
// (−1 when none).
func (c *Cluster) Committed(t testing.TB, group, topic string) map[int]int64 {
	t.Helper()
	cl := &kafka.Client{Addr: kafka.TCP(c.seed()), Timeout: 10 * time.Second, Transport: c.transport}
	resp, err := cl.OffsetFetch(context.Background(), &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: c.Partitions(t, topic)}})
	if err != nil {
		t.Fatalf("kafkatest: committed offsets of %s: %v", group, err)
	}
	out := map[int]int64{}
	for _, p := range resp.Topics[topic] {
		out[p.Partition] = p.CommittedOffset
	}
	return out
}

// Header returns the value of a message header ("" when absent).
func Header(m kafka.Message, key string) string {
	for _, h := range m.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// Source returns "partition/offset" of a message, for messages.
func Source(m kafka.Message) string { return strconv.Itoa(m.Partition) + "/" + fmt.Sprint(m.Offset) }
