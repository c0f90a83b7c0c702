package config

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/neardup/neardup/index"
)

// Kafka configures the Kafka service (neardup serve): the consumer group
// that reads documents and the producer that writes events.
type Kafka struct {
	Brokers         string `yaml:"brokers" doc:"comma-separated bootstrap brokers, host:port (required by serve)"`
	InputTopic      string `yaml:"input_topic" doc:"topic of incoming documents: JSON values of the input contract, or text/plain values (content-type header) keyed by id (required by serve)"`
	OutputTopic     string `yaml:"output_topic" doc:"topic the verdict events go to (key: the document id; value: the event JSON that scan prints)"`
	DeadLetterTopic string `yaml:"dead_letter_topic" doc:"topic of rejected records: original key and value, headers neardup.reason, neardup.error, neardup.source.topic/partition/offset"`
	UniqueTopic     string `yaml:"unique_topic" doc:"if set, every unique document's original record is passed through to this topic (what an indexer reads next), and every tombstone read, found or not (at least once, so a compacted topic drops the document); empty: off"`
	Group           string `yaml:"group" doc:"consumer group; instances with the same group share the input partitions"`
	ClientID        string `yaml:"client_id" doc:"client id sent to the brokers (logs, quotas)"`
	StartOffset     string `yaml:"start_offset" doc:"where a group without committed offsets starts: earliest or latest"`
	CreateTopics    bool   `yaml:"create_topics" doc:"create missing output, dead-letter and unique topics at start (broker defaults for partitions and replication); off: serve waits for a missing topic as for an unreachable cluster (not ready, /readyz naming it, retried 1s doubling to 30s) until it is created"`
	// In-flight bounds: records read but not yet decided and acknowledged.
	MaxInflightRecords int           `yaml:"max_inflight_records" doc:"records read from Kafka but not yet decided and acknowledged, at most"`
	MaxInflightBytes   int           `yaml:"max_inflight_bytes" doc:"working memory of the records in flight, at most: each record is charged its measured working memory, 52 × its key and value bytes up to 4 MiB and 4 × the rest (decoded text, extraction, tokens, shingles and sketch: docs/operations.md, \"Memory budget\"), and one charged more than this is still taken alone; also bounds the records fetched and not yet taken: fetch responses of at most a hundredth of it (at least 16 KiB), so that even the smallest records decode to at most a quarter of it per broker (docs/operations.md, \"Memory budget\")"`
	MaxRecordBytes     int           `yaml:"max_record_bytes" doc:"a record batch over the fetch limit (larger than max(max_inflight_bytes/2, sketch.max_bytes + 1 MiB)) is read alone, up to this size, and dead-lettered whole; a larger one is dead-lettered unread (source headers and size only) and its partition goes on. At most 1GiB; the memory it takes comes on top of max_inflight_bytes"`
	CommitInterval     time.Duration `yaml:"commit_interval" doc:"how often offsets of decided, acknowledged records are committed (also on rebalance and shutdown)"`
	ProduceTimeout     time.Duration `yaml:"produce_timeout" doc:"how long a produced record may wait for the brokers' acknowledgement before the member reports production stalled (/readyz 503, neardup_produce_stalled 1, alert NeardupProductionStalled); it keeps retrying and waiting, committing nothing behind the record, and goes on when the brokers acknowledge (a restart would not unstick them). A record the brokers refuse for good (authorization, an invalid record) stops the service without committing it"`
	ShutdownTimeout    time.Duration `yaml:"shutdown_timeout" doc:"on SIGTERM/SIGINT, and when partitions are revoked: how long in-flight records may take to be decided, produced and committed before they are abandoned (re-read by the next owner)"`
	// Group membership: how fast a dead member's partitions move on.
	SessionTimeout    time.Duration `yaml:"session_timeout" doc:"a member that sends no heartbeat for this long is declared dead and its partitions are reassigned (the brokers' group.min/max.session.timeout.ms bound it)"`
	RebalanceTimeout  time.Duration `yaml:"rebalance_timeout" doc:"how long a rebalance waits for every member to rejoin (a member that died during one stalls the group this long); revocations drain records in flight for at most half of it"`
	HeartbeatInterval time.Duration `yaml:"heartbeat_interval" doc:"how often a member heartbeats; at most a third of session_timeout"`
	InstanceID        string        `yaml:"instance_id" doc:"static group membership (KIP-345): a stable id per member (the kit sets the pod name), so a member restarted under the same id gets its partitions back without a rebalance; empty: dynamic membership. Two live members must never share one"`
	TLS               KafkaTLS      `yaml:"tls" doc:"TLS to the brokers"`
	SASL              KafkaSASL     `yaml:"sasl" doc:"SASL authentication to the brokers"`
}

// KafkaTLS configures TLS to the brokers.
type KafkaTLS struct {
	Enabled bool   `yaml:"enabled" doc:"connect with TLS (system roots unless ca is set)"`
	CA      string `yaml:"ca" doc:"PEM file of the CA that signs the broker certificates"`
	Cert    string `yaml:"cert" doc:"PEM client certificate for mutual TLS"`
	Key     string `yaml:"key" doc:"PEM client key for mutual TLS"`
}

// KafkaSASL configures SASL authentication.
type KafkaSASL struct {
	Mechanism string `yaml:"mechanism" doc:"plain, scram-sha-256 or scram-sha-512; empty: no SASL"`
	User      string `yaml:"user" doc:"SASL user name"`
	Password  string `yaml:"password" secret:"true" doc:"SASL password (secret: never printed; prefer NEARDUP_KAFKA_SASL_PASSWORD)"`
}

// HTTP configures the metrics, health and admin endpoints.
type HTTP struct {
	Addr       string `yaml:"addr" doc:"listen address of /metrics, /healthz and /readyz (read-only; unauthenticated, so reachable by whoever reaches the address: ':8080' is every interface, for Prometheus and the kubelet's probes); empty: no endpoint"`
	AdminAddr  string `yaml:"admin_addr" doc:"listen address of the admin endpoint (POST /admin/accept-empty-index), which changes what is decided: loopback by default (kubectl port-forward reaches it); empty: off. Never the same as addr. Requests from browsers (an Origin or Sec-Fetch-Site header) are refused"`
	AdminToken string `yaml:"admin_token" secret:"true" doc:"if set, the admin endpoint requires 'Authorization: Bearer <token>' (secret: never printed; set NEARDUP_HTTP_ADMIN_TOKEN from a Kubernetes Secret); needed when admin_addr is not loopback"`
}

// Log configures the service's structured logs (log/slog, on standard
// error).
type Log struct {
	Format string `yaml:"format" doc:"json or text"`
	Level  string `yaml:"level" doc:"debug, info, warn or error"`
}

func defaultKafka() Kafka {
	return Kafka{
		OutputTopic: "neardup.events", DeadLetterTopic: "neardup.dead-letters", Group: "neardup", ClientID: "neardup",
		StartOffset: "earliest", MaxInflightRecords: 4096, MaxInflightBytes: 64 << 20, MaxRecordBytes: 64 << 20, CommitInterval: time.Second,
		ProduceTimeout: 30 * time.Second, ShutdownTimeout: 10 * time.Second,
		SessionTimeout: 10 * time.Second, RebalanceTimeout: 20 * time.Second, HeartbeatInterval: 3 * time.Second,
	}
}

// SASL mechanisms.
var saslMechanisms = []string{"plain", "scram-sha-256", "scram-sha-512"}

// validateService checks the keys every command loads; the keys only
// serve needs are checked by [Config.ValidateServe].
func (c *Config) validateService(bad func(key string, v any, want string) error) error {
	k := c.Kafka
	switch {
	case k.StartOffset != "earliest" && k.StartOffset != "latest":
		return bad("kafka.start_offset", k.StartOffset, "earliest or latest")
	case k.MaxInflightRecords < 1:
		return bad("kafka.max_inflight_records", k.MaxInflightRecords, ">= 1")
	case k.MaxInflightBytes < 1<<10:
		return bad("kafka.max_inflight_bytes", k.MaxInflightBytes, ">= 1KiB")
	case k.MaxRecordBytes < 1<<10 || k.MaxRecordBytes > 1<<30:
		return bad("kafka.max_record_bytes", k.MaxRecordBytes, "between 1KiB and 1GiB")
	case k.CommitInterval <= 0:
		return bad("kafka.commit_interval", k.CommitInterval, "> 0")
	case k.ProduceTimeout < time.Second:
		return bad("kafka.produce_timeout", k.ProduceTimeout, ">= 1s")
	case k.ShutdownTimeout <= 0:
		return bad("kafka.shutdown_timeout", k.ShutdownTimeout, "> 0")
	case k.SessionTimeout < time.Second:
		return bad("kafka.session_timeout", k.SessionTimeout, ">= 1s (brokers allow 6s to 30m by default)")
	case k.RebalanceTimeout < time.Second:
		return bad("kafka.rebalance_timeout", k.RebalanceTimeout, ">= 1s")
	case k.HeartbeatInterval <= 0 || 3*k.HeartbeatInterval > k.SessionTimeout:
		return bad("kafka.heartbeat_interval", k.HeartbeatInterval, "> 0 and at most a third of kafka.session_timeout")
	case k.SASL.Mechanism != "" && !slices.Contains(saslMechanisms, strings.ToLower(k.SASL.Mechanism)):
		return bad("kafka.sasl.mechanism", k.SASL.Mechanism, "plain, scram-sha-256 or scram-sha-512 (or empty)")
	case k.SASL.Mechanism != "" && k.SASL.User == "":
		return bad("kafka.sasl.user", `""`, "a user name when kafka.sasl.mechanism is set")
	case (k.TLS.Cert == "") != (k.TLS.Key == ""):
		return bad("kafka.tls.cert/kafka.tls.key", fmt.Sprintf("%q/%q", k.TLS.Cert, k.TLS.Key), "both set or both empty")
	case c.HTTP.AdminAddr != "" && c.HTTP.AdminAddr == c.HTTP.Addr && !strings.HasSuffix(c.HTTP.AdminAddr, ":0"):
		return bad("http.admin_addr", c.HTTP.AdminAddr, "an address other than http.addr (the admin endpoint has a listener of its own), or empty (off)")
	case c.HTTP.AdminAddr != "" && c.HTTP.AdminToken == "" && !loopback(c.HTTP.AdminAddr):
		return bad("http.admin_addr", c.HTTP.AdminAddr, "a loopback address (127.0.0.1:PORT, [::1]:PORT, localhost:PORT), or set http.admin_token: the admin endpoint decides whether a lost index is accepted")
	case c.Log.Format != "json" && c.Log.Format != "text":
		return bad("log.format", c.Log.Format, "json or text")
	case !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level):
		return bad("log.level", c.Log.Level, "debug, info, warn or error")
	}
	return nil
}

// ValidateServe checks what neardup serve needs beyond [Config.Validate]:
// brokers, an input topic, and topics that do not loop back into the input.
func (c *Config) ValidateServe() error {
	k := c.Kafka
	bad := func(key string, v any, want string) error {
		return fmt.Errorf("%w: %s = %v: want %s", ErrInvalid, key, v, want)
	}
	if len(k.BrokerList()) == 0 {
		return fmt.Errorf("%w: kafka.brokers is required by serve (set %s=host:port,...)", ErrInvalid, EnvName("kafka.brokers"))
	}
	if k.InputTopic == "" {
		return fmt.Errorf("%w: kafka.input_topic is required by serve (set %s)", ErrInvalid, EnvName("kafka.input_topic"))
	}
	for _, b := range k.BrokerList() {
		if !strings.Contains(b, ":") {
			return bad("kafka.brokers", b, "host:port")
		}
	}
	for _, t := range []struct{ key, v string }{
		{"kafka.output_topic", k.OutputTopic}, {"kafka.dead_letter_topic", k.DeadLetterTopic}, {"kafka.unique_topic", k.UniqueTopic},
	} {
		switch {
		case t.key != "kafka.unique_topic" && t.v == "":
			return bad(t.key, `""`, "a topic name")
		case t.v != "" && t.v == k.InputTopic:
			return bad(t.key, t.v, "a topic other than kafka.input_topic (events would be read back as documents)")
		}
	}
	if k.Group == "" {
		return bad("kafka.group", `""`, "a consumer group name")
	}
	return nil
}

// BrokerList returns the brokers as a list.
func (k Kafka) BrokerList() []string {
	var out []string
	for _, b := range strings.Split(k.Brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// Display returns a key's value for printing, as the run uses it: a zero
// that stands for a derived value (a profile's threshold, the chosen LSH
// bands and rows, the generation) shows that value; secrets are replaced
// by "[redacted]" when set, and a value that is or may hold a URL (it has
// "://" or '@') goes through index.RedactURL, the program's one URL
// redactor, whether or not it parses.
func (c *Config) Display(key string) (string, bool) {
	for _, f := range fields(c) {
		if f.key != key || !f.v.IsValid() {
			continue
		}
		return redactURL(display(f, c.derived())), true
	}
	return "", false
}

// redactURL masks the password of a value that is or may hold a URL.
func redactURL(v string) string {
	if strings.Contains(v, "://") || strings.Contains(v, "@") {
		return index.RedactURL(v)
	}
	return v
}

// Redacted returns the configuration as key → printable value (see
// [Config.Display]), for logs and config check.
func (c *Config) Redacted() map[string]string {
	derived := c.derived()
	out := map[string]string{}
	for _, f := range fields(c) {
		if f.v.IsValid() {
			out[f.key] = redactURL(display(f, derived))
		}
	}
	return out
}

// loopback reports whether a listen address binds only the loopback
// interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
