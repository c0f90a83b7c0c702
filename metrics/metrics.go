// Package metrics defines neardup's Prometheus metrics. [New] registers
// them on a registry the caller owns (neardup serve builds one in cmd and
// hands it down; nothing is registered globally). Every method is safe for
// concurrent use and does nothing on a nil *Metrics, so stages can be run
// without metrics (scan, tests).
//
// Names follow the Prometheus conventions: a neardup_ prefix, base units
// (seconds, bytes), _total for counters. No label carries a document id.
// docs/metrics.md lists every metric; a test scrapes a running service
// and checks that list against what is exported.
package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/neardup/neardup/internal/buildinfo"
)

// Stages of a document's way through the service, the label of
// neardup_stage_duration_seconds.
const (
	StageDecode  = "decode"  // input (Kafka record, JSON line) → document, in the pipeline's workers
	StageSketch  = "sketch"  // extract, normalize, sketch, encode (per document)
	StageIndex   = "index"   // one lookup-and-insert round trip (per batch)
	StageFetch   = "fetch"   // reading candidates' stored features (per batch)
	StageVerify  = "verify"  // handed to the verifier pool → verdicts back (per document)
	StageResolve = "resolve" // verdict assembled and recorded in the index (per document)
	StageProduce = "produce" // produce call → broker acknowledgement (per record)
)

// Metrics holds neardup's collectors.
type Metrics struct {
	documents     *prometheus.CounterVec
	replays       prometheus.Counter
	corrections   prometheus.Counter
	revisions     prometheus.Counter
	deadLetters   *prometheus.CounterVec
	candidates    prometheus.Histogram
	verifications *prometheus.CounterVec
	truncated     prometheus.Counter
	commonKeys    prometheus.Counter
	stage         *prometheus.HistogramVec
	endToEnd      prometheus.Histogram
	indexErrors   *prometheus.CounterVec
	indexRetries  *prometheus.CounterVec
	indexUp       prometheus.Gauge
	indexLost     prometheus.Gauge
	evicting      prometheus.Gauge
	lag           *prometheus.GaugeVec
	rebalances    *prometheus.CounterVec
	produced      *prometheus.CounterVec
	produceErrors *prometheus.CounterVec
	commits       prometheus.Counter
	commitErrors  prometheus.Counter
	inflightRecs  prometheus.Gauge
	inflightBytes prometheus.Gauge
	stalled       prometheus.Gauge
	producePend   prometheus.Gauge
	produceStall  prometheus.Gauge
	maintenance   prometheus.Counter
	ready         prometheus.Gauge
}

// latencyBuckets span 50 µs to about 26 s.
var latencyBuckets = prometheus.ExponentialBuckets(50e-6, 2, 20)

// New creates the metrics and registers them on reg, with a
// neardup_build_info gauge carrying version and the build's commit and
// toolchain (internal/buildinfo).
func New(reg prometheus.Registerer, version string) *Metrics {
	m := &Metrics{}
	m.pipelineMetrics()
	m.indexMetrics()
	m.kafkaMetrics()
	m.ready = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "neardup_ready",
		Help: "1 while /readyz answers 200 (Kafka and the index reachable, group joined).",
	})
	bi := buildinfo.Read(version)
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "neardup_build_info",
		Help:        "Build information; always 1. version: the events' params.version; revision: the commit built (empty when none was recorded); goversion: the toolchain.",
		ConstLabels: prometheus.Labels{"version": version, "revision": bi.Revision, "goversion": bi.GoVersion},
	})
	info.Set(1)
	m.indexUp.Set(1)
	reg.MustRegister(m.documents, m.replays, m.corrections, m.revisions, m.deadLetters, m.candidates, m.verifications,
		m.truncated, m.commonKeys, m.stage, m.endToEnd, m.indexErrors, m.indexRetries, m.indexUp, m.indexLost, m.evicting, m.lag, m.rebalances,
		m.produced, m.produceErrors, m.commits, m.commitErrors, m.inflightRecs, m.inflightBytes, m.stalled, m.producePend, m.produceStall,
		m.maintenance, m.ready, info)
	// Label values known in advance are created now, so a dashboard
	// shows them at zero before the first event.
	for _, k := range []string{"unique", "exact", "near", "partial"} {
		m.documents.WithLabelValues(k)
	}
	for _, e := range []string{"assigned", "revoked", "lost"} {
		m.rebalances.WithLabelValues(e)
	}
	// The index operations of the pipeline and the topic roles of the
	// sink.
	for _, op := range []string{"lookup-insert", "features", "sources", "record-sources", "verdicts", "record-verdict"} {
		m.indexErrors.WithLabelValues(op)
		m.indexRetries.WithLabelValues(op)
	}
	for _, r := range []string{"events", "dead_letters", "unique"} {
		m.produced.WithLabelValues(r)
		m.produceErrors.WithLabelValues(r)
	}
	return m
}

// pipelineMetrics defines the metrics of the pipeline: documents decided,
// dead letters, candidates and verifications, common keys and the time
// spent in each stage.
func (m *Metrics) pipelineMetrics() {
	m.documents = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "neardup_documents_total",
		Help: "Documents decided, by verdict kind (unique, exact, near, partial). Replays count under their first verdict's kind.",
	}, []string{"kind"})
	m.replays = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "neardup_replays_total",
		Help: "Documents whose id was already stored: their first verdict was returned again (at-least-once redelivery).",
	})
	m.corrections = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "neardup_corrections_total",
		Help: "Correction events: a later document admitted concurrently that did not see an earlier one (Redis Cluster).",
	})
	m.revisions = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "neardup_revisions_total",
		Help: "Revision events: an earlier page's partial link withdrawn once a later page of its site showed the text it rested on to be the site's template.",
	})
	m.deadLetters = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "neardup_dead_letters_total",
		Help: "Rejected inputs sent to the dead-letter path, by reason.",
	}, []string{"reason"})
	m.candidates = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "neardup_candidates_per_document",
		Help:    "Candidates verified per document.",
		Buckets: []float64{0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024},
	})
	m.verifications = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "neardup_verifications_total",
		Help: "Candidate verifications, by the check that decided (method) and its verdict (kind: exact, near, partial, distinct).",
	}, []string{"method", "kind"})
	m.commonKeys = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "neardup_common_keys_total",
		Help: "Common index keys met by documents (LSH bands, passage anchors, sentence keys held by index.common_docs documents: boilerplate, or a text copied that many times); each yields only its exemplar.",
	})
	m.truncated = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "neardup_bucket_truncations_total",
		Help: "Candidates withheld by the SimHash tables' guard (documents turned away from full SimHash buckets; LSH and passage keys become common instead, see neardup_common_keys_total).",
	})
	m.stage = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "neardup_stage_duration_seconds",
		Help:    "Time spent in a stage: decode, sketch, verify, resolve and produce per document or record; index and fetch per batch round trip.",
		Buckets: latencyBuckets,
	}, []string{"stage"})
	m.endToEnd = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "neardup_end_to_end_seconds",
		Help:    "From the input record's timestamp to its verdict being decided and every record it produced acknowledged.",
		Buckets: latencyBuckets,
	})
}

// indexMetrics defines the metrics of the index: failed and retried calls, whether it
// is up, lost or evicting, and its maintenance.
func (m *Metrics) indexMetrics() {
	m.indexErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "neardup_index_errors_total",
		Help: "Failed index calls, by operation.",
	}, []string{"op"})
	m.indexRetries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "neardup_index_retries_total",
		Help: "Index calls retried because the index was unavailable, by operation.",
	}, []string{"op"})
	m.indexUp = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "neardup_index_up",
		Help: "1 when the last index call or health check succeeded, 0 while the index is unavailable.",
	})
	m.indexLost = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "neardup_index_lost",
		Help: "1 while the index's stored documents are gone (Redis restarted without its data, keys deleted): nothing is decided until the empty index is accepted or the data restored.",
	})
	m.evicting = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "neardup_index_evicting_servers",
		Help: "Redis servers holding the index (every master on a cluster) whose maxmemory-policy is not noeviction: when full they evict index keys, silently forgetting documents. Non-zero makes /readyz answer 503 unless index.allow_eviction is set.",
	})
	m.maintenance = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "neardup_index_maintenance_total",
		Help: "Completed runs of the index's periodic maintenance (Redis: expiries of closed generations), hourly.",
	})
}

// kafkaMetrics defines the metrics of the consumer and the sink: lag, rebalances,
// produced records, offset commits, records in flight and stalls.
func (m *Metrics) kafkaMetrics() {
	m.lag = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "neardup_consumer_lag_records",
		Help: "Lag of an assigned input partition as the brokers measure it: its end offset minus the group's committed offset (log start offset when none), read from the brokers every commit interval (1-10 s), idle or not.",
	}, []string{"topic", "partition"})
	m.rebalances = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "neardup_rebalances_total",
		Help: "Consumer group rebalance callbacks, by event (assigned, revoked, lost).",
	}, []string{"event"})
	m.produced = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "neardup_produced_records_total",
		Help: "Records acknowledged by the brokers, by topic role (events, dead_letters, unique).",
	}, []string{"topic"})
	m.produceErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "neardup_produce_errors_total",
		Help: "Produces that failed after the client's retries, by topic role.",
	}, []string{"topic"})
	m.commits = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "neardup_offset_commits_total",
		Help: "Successful offset commits.",
	})
	m.commitErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "neardup_offset_commit_errors_total",
		Help: "Failed offset commits (retried at the next commit).",
	})
	m.inflightRecs = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "neardup_inflight_records",
		Help: "Records read but not yet decided and acknowledged.",
	})
	m.inflightBytes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "neardup_inflight_bytes",
		Help: "Bytes of record values read but not yet decided and acknowledged.",
	})
	m.stalled = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "neardup_consumer_stalled_partitions",
		Help: "Owned input partitions that cannot advance: a record batch too large to read that could not be moved past (see kafka.max_record_bytes). Non-zero makes /readyz answer 503.",
	})
	m.producePend = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "neardup_produce_pending_seconds",
		Help: "Age of the oldest record produced but not yet acknowledged by the brokers (0 when none is pending).",
	})
	m.produceStall = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "neardup_produce_stalled",
		Help: "1 while a produced record has waited longer than kafka.produce_timeout for its acknowledgement: production is stalled, nothing behind it is committed, /readyz answers 503.",
	})
}

// Document counts one decided document of the given kind; replay marks a
// redelivered id answered with its first verdict.
func (m *Metrics) Document(kind string, replay bool) {
	if m == nil {
		return
	}
	m.documents.WithLabelValues(kind).Inc()
	if replay {
		m.replays.Inc()
	}
}

// Revision counts n revision events (pipeline/revise.go).
func (m *Metrics) Revision(n int) {
	if m == nil || n == 0 {
		return
	}
	m.revisions.Add(float64(n))
}

// Correction counts n correction events.
func (m *Metrics) Correction(n int) {
	if m == nil || n == 0 {
		return
	}
	m.corrections.Add(float64(n))
}

// DeadLetter counts one rejected input.
func (m *Metrics) DeadLetter(reason string) {
	if m == nil {
		return
	}
	m.deadLetters.WithLabelValues(reason).Inc()
}

// Candidates records the candidates verified for one document, the
// candidates the SimHash guard withheld from it and the common keys it
// met.
func (m *Metrics) Candidates(n, truncated, common int) {
	if m == nil {
		return
	}
	m.candidates.Observe(float64(n))
	if truncated > 0 {
		m.truncated.Add(float64(truncated))
	}
	if common > 0 {
		m.commonKeys.Add(float64(common))
	}
}

// Verification counts one candidate verification.
func (m *Metrics) Verification(method, kind string) {
	if m == nil {
		return
	}
	if method == "" {
		method = "none"
	}
	m.verifications.WithLabelValues(method, kind).Inc()
}

// Stage records the time spent in a stage (see the Stage constants).
func (m *Metrics) Stage(stage string, d time.Duration) {
	if m == nil {
		return
	}
	m.stage.WithLabelValues(stage).Observe(d.Seconds())
}

// EndToEnd records the time from an input record's timestamp to its
// completion.
func (m *Metrics) EndToEnd(d time.Duration) {
	if m == nil || d < 0 {
		return
	}
	m.endToEnd.Observe(d.Seconds())
}

// IndexCall records the outcome of one index call: err nil is a success;
// retrying marks a failure that will be retried.
func (m *Metrics) IndexCall(op string, err error, retrying bool) {
	if m == nil {
		return
	}
	if err == nil {
		m.indexUp.Set(1)
		return
	}
	m.indexErrors.WithLabelValues(op).Inc()
	if retrying {
		m.indexRetries.WithLabelValues(op).Inc()
		m.indexUp.Set(0)
	}
}

// IndexUp sets whether the index answered its last health check.
func (m *Metrics) IndexUp(up bool) {
	if m == nil {
		return
	}
	m.indexUp.Set(b2f(up))
}

// IndexLost sets whether the index's stored documents are gone.
func (m *Metrics) IndexLost(lost bool) {
	if m == nil {
		return
	}
	m.indexLost.Set(b2f(lost))
}

// Evicting sets the number of Redis servers of the index whose
// maxmemory-policy may evict its keys.
func (m *Metrics) Evicting(n int) {
	if m == nil {
		return
	}
	m.evicting.Set(float64(n))
}

// ProducePending sets the age of the oldest unacknowledged produce and
// whether it is past the produce timeout.
func (m *Metrics) ProducePending(age time.Duration, stalled bool) {
	if m == nil {
		return
	}
	m.producePend.Set(age.Seconds())
	m.produceStall.Set(b2f(stalled))
}

// Lag sets the lag of one input partition.
func (m *Metrics) Lag(topic string, partition int32, lag int64) {
	if m == nil {
		return
	}
	m.lag.WithLabelValues(topic, strconv.Itoa(int(partition))).Set(float64(max(lag, 0)))
}

// ForgetPartition removes the lag series of a partition this instance no
// longer owns.
func (m *Metrics) ForgetPartition(topic string, partition int32) {
	if m == nil {
		return
	}
	m.lag.DeleteLabelValues(topic, strconv.Itoa(int(partition)))
}

// Rebalance counts a group callback: assigned, revoked or lost.
func (m *Metrics) Rebalance(event string) {
	if m == nil {
		return
	}
	m.rebalances.WithLabelValues(event).Inc()
}

// Produced counts an acknowledged record (err nil) or a failed produce.
func (m *Metrics) Produced(topicRole string, err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.produceErrors.WithLabelValues(topicRole).Inc()
		return
	}
	m.produced.WithLabelValues(topicRole).Inc()
}

// Commit counts an offset commit.
func (m *Metrics) Commit(err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.commitErrors.Inc()
		return
	}
	m.commits.Inc()
}

// InFlight sets the in-flight gauges.
func (m *Metrics) InFlight(records, bytes int64) {
	if m == nil {
		return
	}
	m.inflightRecs.Set(float64(records))
	m.inflightBytes.Set(float64(bytes))
}

// Stalled sets the number of input partitions that cannot advance.
func (m *Metrics) Stalled(n int) {
	if m == nil {
		return
	}
	m.stalled.Set(float64(n))
}

// Maintenance counts a completed index maintenance run (err nil).
func (m *Metrics) Maintenance(err error) {
	if m == nil || err != nil {
		return
	}
	m.maintenance.Inc()
}

// Ready sets the readiness gauge.
func (m *Metrics) Ready(ready bool) {
	if m == nil {
		return
	}
	m.ready.Set(b2f(ready))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
