package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/pipeline"
	"github.com/neardup/neardup/sink"
)

// ClientOptions returns the franz-go options both clients share: seed
// brokers, client id, TLS, SASL and logging. Files named by kafka.tls.*
// are read here, so a bad path fails at start, naming the key.
func ClientOptions(k config.Kafka, log *slog.Logger) ([]kgo.Opt, error) {
	opts, _, err := clientOptions(k, log)
	return opts, err
}

func clientOptions(k config.Kafka, log *slog.Logger) ([]kgo.Opt, *saslWatch, error) {
	sw := &saslWatch{}
	opts := []kgo.Opt{kgo.SeedBrokers(k.BrokerList()...), kgo.ClientID(k.ClientID), kgo.WithLogger(kgoLogger{log}), kgo.WithHooks(sw)}
	if k.TLS.Enabled || k.TLS.CA != "" || k.TLS.Cert != "" {
		tc, err := pipeline.ClientTLS("kafka.tls.", k.TLS.CA, k.TLS.Cert, k.TLS.Key)
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	if k.SASL.Mechanism != "" {
		m, err := saslMechanism(k.SASL)
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, sw, nil
}

// mechanismName is the SASL mechanism as Kafka names it.
func mechanismName(m string) string { return strings.ToUpper(m) }

func saslMechanism(s config.KafkaSASL) (sasl.Mechanism, error) {
	switch strings.ToLower(s.Mechanism) {
	case "plain":
		return plain.Auth{User: s.User, Pass: s.Password}.AsMechanism(), nil
	case "scram-sha-256":
		return scram.Auth{User: s.User, Pass: s.Password}.AsSha256Mechanism(), nil
	case "scram-sha-512":
		return scram.Auth{User: s.User, Pass: s.Password}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("kafka.sasl.mechanism %q: want plain, scram-sha-256 or scram-sha-512", s.Mechanism)
}

// ErrKafka marks a failure to reach or use the Kafka cluster at start.
var ErrKafka = errors.New("kafka")

// checkKafka pings the brokers and checks the topics: the input topic
// must exist; the others are created when kafka.create_topics is set. An
// authentication failure names the mechanism, the user and the brokers,
// never the password.
func checkKafka(ctx context.Context, cl *kgo.Client, k config.Kafka, sw *saslWatch) error {
	describe := func(err error) error { return describeKafkaError(err, k, sw.failure()) }
	if err := cl.Ping(ctx); err != nil {
		return describe(err)
	}
	adm := kadm.NewClient(cl)
	topics := []string{k.InputTopic, k.OutputTopic, k.DeadLetterTopic}
	keys := []string{"kafka.input_topic", "kafka.output_topic", "kafka.dead_letter_topic"}
	if k.UniqueTopic != "" {
		topics, keys = append(topics, k.UniqueTopic), append(keys, "kafka.unique_topic")
	}
	details, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return describe(err)
	}
	var missing []string
	for i, t := range topics {
		d, ok := details[t]
		switch {
		case ok && d.Err == nil:
			continue
		case ok && !errors.Is(d.Err, kerr.UnknownTopicOrPartition):
			return fmt.Errorf("%w: %s %q: %w", ErrKafka, keys[i], t, d.Err)
		case i == 0:
			return fmt.Errorf("%w: %s %q does not exist on %s", ErrKafka, keys[i], t, k.Brokers)
		case !k.CreateTopics:
			return fmt.Errorf("%w: %s %q does not exist on %s (create it, or set kafka.create_topics=true)", ErrKafka, keys[i], t, k.Brokers)
		}
		missing = append(missing, t)
	}
	if len(missing) == 0 {
		return nil
	}
	resp, err := adm.CreateTopics(ctx, -1, -1, nil, missing...)
	if err != nil {
		return describe(err)
	}
	for _, r := range resp {
		if r.Err != nil && !errors.Is(r.Err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("%w: create topic %q: %w", ErrKafka, r.Topic, r.Err)
		}
	}
	return nil
}

// topicLimits returns the max.message.bytes of every topic serve
// produces to: output, dead letters, unique. A topic whose limit cannot
// be read (an ACL without DESCRIBE_CONFIGS) gets Kafka's default,
// sink.DefaultMaxMessageBytes, with a warning: records are shaped to it,
// and a topic that refuses one all the same gets it shaped smaller.
func topicLimits(ctx context.Context, cl *kgo.Client, k config.Kafka, log *slog.Logger) map[string]int {
	limits := map[string]int{}
	for _, t := range []string{k.OutputTopic, k.DeadLetterTopic, k.UniqueTopic} {
		if t == "" {
			continue
		}
		n, err := maxMessageBytes(ctx, cl, t)
		if err != nil || n <= 0 {
			log.Warn("cannot read a topic's max.message.bytes; its records are shaped to Kafka's default", "topic", t,
				"default", sink.DefaultMaxMessageBytes, "err", err)
			n = sink.DefaultMaxMessageBytes
		}
		limits[t] = n
	}
	return limits
}

// maxMessageBytes returns a topic's max.message.bytes (the topic's own
// setting, else the broker's).
func maxMessageBytes(ctx context.Context, cl *kgo.Client, topic string) (int, error) {
	rcs, err := kadm.NewClient(cl).DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return 0, err
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		return 0, err
	}
	if rc.Err != nil {
		return 0, rc.Err
	}
	// Kafka reports the topic key with the broker's value as its source
	// when the topic has none of its own; some brokers (kfake) list the
	// broker's message.max.bytes beside the topic key's default instead.
	var topicKey, brokerKey *string
	for _, c := range rc.Configs {
		switch {
		case c.Key == "max.message.bytes" && c.Source == kmsg.ConfigSourceDynamicTopicConfig && c.Value != nil:
			return strconv.Atoi(*c.Value)
		case c.Key == "max.message.bytes":
			topicKey = c.Value
		case c.Key == "message.max.bytes":
			brokerKey = c.Value
		}
	}
	if brokerKey != nil {
		return strconv.Atoi(*brokerKey)
	}
	if topicKey != nil {
		return strconv.Atoi(*topicKey)
	}
	return 0, fmt.Errorf("topic %s: no max.message.bytes", topic)
}

// describeKafkaError says what failed against which brokers. With SASL, an
// authentication failure (the error itself, or a failed SASL exchange seen
// by the client: brokers may just close the connection) names the
// mechanism, the user and the broker; the password is never part of an
// error.
func describeKafkaError(err error, k config.Kafka, saslFailure *saslFailure) error {
	if k.SASL.Mechanism != "" && (isAuthError(err) || saslFailure != nil) {
		broker, detail := strings.Join(k.BrokerList(), ","), err
		if saslFailure != nil {
			broker, detail = saslFailure.broker, saslFailure.err
		}
		return fmt.Errorf("%w: SASL %s authentication as user %q failed at broker %s: %w (check kafka.sasl.user and kafka.sasl.password)",
			ErrKafka, mechanismName(k.SASL.Mechanism), k.SASL.User, broker, detail)
	}
	return fmt.Errorf("%w: brokers %s: %w", ErrKafka, strings.Join(k.BrokerList(), ","), err)
}

// saslWatch is a client hook that remembers the last failed SASL exchange
// and the broker it was with.
type saslWatch struct {
	mu   sync.Mutex
	last *saslFailure
}

type saslFailure struct {
	broker string
	err    error
}

var (
	_ kgo.HookBrokerRead  = (*saslWatch)(nil)
	_ kgo.HookBrokerWrite = (*saslWatch)(nil)
)

func (w *saslWatch) observe(meta kgo.BrokerMetadata, key int16, err error) {
	if err == nil || (key != kmsg.SASLHandshake.Int16() && key != kmsg.SASLAuthenticate.Int16()) {
		return
	}
	w.mu.Lock()
	w.last = &saslFailure{broker: net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port))), err: err}
	w.mu.Unlock()
}

// OnBrokerRead implements kgo.HookBrokerRead.
func (w *saslWatch) OnBrokerRead(meta kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	w.observe(meta, key, err)
}

// OnBrokerWrite implements kgo.HookBrokerWrite.
func (w *saslWatch) OnBrokerWrite(meta kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	w.observe(meta, key, err)
}

func (w *saslWatch) failure() *saslFailure {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

func isAuthError(err error) bool {
	return errors.Is(err, kerr.SaslAuthenticationFailed) || errors.Is(err, kerr.UnsupportedSaslMechanism) ||
		errors.Is(err, kerr.IllegalSaslState) || strings.Contains(strings.ToLower(err.Error()), "sasl")
}

// kgoLogger sends franz-go's logs to slog (warnings and errors at their
// level; its info and debug chatter at debug).
type kgoLogger struct{ l *slog.Logger }

func (g kgoLogger) Level() kgo.LogLevel {
	if g.l.Enabled(context.Background(), slog.LevelDebug) {
		return kgo.LogLevelDebug
	}
	return kgo.LogLevelWarn
}

func (g kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	lv := slog.LevelDebug
	switch level {
	case kgo.LogLevelError:
		lv = slog.LevelError
	case kgo.LogLevelWarn:
		lv = slog.LevelWarn
	}
	g.l.Log(context.Background(), lv, "kafka client: "+msg, keyvals...)
}

// GroupHasOffsets reports whether kafka.group has committed offsets on
// kafka.input_topic: the service has decided documents before, so the
// index it wrote them to must exist (a missing namespace is a lost
// index, not a first start). A failure to ask wraps ErrKafka.
func GroupHasOffsets(ctx context.Context, k config.Kafka, log *slog.Logger) (bool, error) {
	opts, sw, err := clientOptions(k, log)
	if err != nil {
		return false, fmt.Errorf("%w: %w", config.ErrInvalid, err)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrKafka, err)
	}
	defer cl.Close()
	actx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	offs, err := kadm.NewClient(cl).FetchOffsets(actx, k.Group)
	if err == nil {
		err = offs.Error()
	}
	if errors.Is(err, kerr.GroupIDNotFound) {
		return false, nil
	}
	if err != nil {
		return false, describeKafkaError(err, k, sw.failure())
	}
	for _, o := range offs[k.InputTopic] {
		if o.Err == nil && o.At >= 0 {
			return true, nil
		}
	}
	return false, nil
}
