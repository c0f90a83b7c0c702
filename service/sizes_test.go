package service

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/neardup/neardup/internal/kafkatest"
	"github.com/neardup/neardup/internal/poll"
	"github.com/neardup/neardup/internal/synth"
)

// Issue 38, point 1: one record crash-looped a member and stopped its
// partition: a dead letter, event or unique record larger than its topic
// takes failed its produce, the member exited, and the restart read the
// same record again. Now every record ends as a verdict or a dead letter
// whatever its key, value, meta or event size: serve reads every output
// topic's max.message.bytes at start, shapes events to the output topic
// (shortened, evidence left out in a documented order) and dead letters
// to theirs (cut, headers saying what), and an event or unique record
// that cannot fit becomes a dead letter. Each case runs on kfake with
// topic limits set, reads the outputs with kafka-go, and checks that the
// member never stopped, that the records behind the large one were
// decided, and that every offset was committed.
func TestServeRecordsFitTheirTopics(t *testing.T) {
	t.Parallel()
	const big = 8 << 20 // the input topic's limit
	text := func(seed uint64, words int) string {
		return synth.Corpus(synth.Config{Docs: 1, Seed: seed, MinWords: words, MaxWords: words})[0].Text
	}
	doc := func(id, text string, meta any) []byte {
		m := map[string]any{"id": id, "text": text}
		if meta != nil {
			m["meta"] = meta
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	hugeKey := []byte(strings.Repeat("k", 1<<20))
	originals := make([]string, 24)
	for i := range originals {
		originals[i] = text(uint64(100+i), 300)
	}
	type check func(t *testing.T, out, dead, unique []kafka.Message)
	deadWith := func(reason string, hdrs ...string) check {
		return func(t *testing.T, _, dead, _ []kafka.Message) {
			for _, m := range dead {
				if kafkatest.Header(m, "neardup.reason") != reason {
					continue
				}
				for _, h := range hdrs {
					if kafkatest.Header(m, h) == "" {
						t.Errorf("%s dead letter without header %s", reason, h)
					}
				}
				return
			}
			t.Errorf("no %s dead letter among %d", reason, len(dead))
		}
	}
	tests := []struct {
		name   string
		topics map[string]string // topic → its max.message.bytes ("" default)
		kv     []string
		large  []kafka.Message // produced before the ordinary documents
		check  check
	}{
		{
			// No JSON id: the key would be the id, and is too long.
			name:  "1MiB key without an id",
			large: []kafka.Message{{Key: hugeKey, Value: []byte(`{"text":"a document without an id"}`)}},
			check: deadWith("bad_id", "neardup.truncated.key"),
		},
		{
			name:  "tombstone with a 1MiB key",
			large: []kafka.Message{{Key: hugeKey}},
			check: deadWith("bad_id", "neardup.truncated.key"),
		},
		{
			// An event of about 1.02 MB: under pipeline.max_event_bytes
			// (1 MiB) and under the output topic's limit (kfake's default,
			// 1048588) but over franz-go's default producer limit
			// (1000012): the producer now takes what the topic takes.
			name:  "event of 1.02MB (meta)",
			large: []kafka.Message{{Key: []byte("meta"), Value: doc("meta-doc", text(7, 200), map[string]string{"blob": strings.Repeat("m", 1_020_000)})}},
			check: func(t *testing.T, out, _, _ []kafka.Message) {
				for _, m := range out {
					if string(m.Key) == "meta-doc" && bytes.Contains(m.Value, []byte(strings.Repeat("m", 1_020_000))) {
						return
					}
				}
				t.Error("no event with the whole meta for the document")
			},
		},
		{
			// The same over topics of Kafka's default 1000012: the event
			// cannot fit (its meta is never left out) and becomes a dead
			// letter, itself cut to fit the dead-letter topic.
			name:   "event of 1.02MB (meta) over a 1000012 topic",
			topics: map[string]string{outTopic: "1000012", deadTopic: "1000012"},
			large:  []kafka.Message{{Key: []byte("meta"), Value: doc("meta-doc", text(7, 200), map[string]string{"blob": strings.Repeat("m", 1_020_000)})}},
			check:  deadWith("event_too_large", "neardup.truncated"),
		},
		{
			// Many partial matches with passages, over a small output
			// topic: the event is shortened, keeping its verdict.
			name:   "event over the output topic",
			topics: map[string]string{outTopic: "6144"},
			large: func() []kafka.Message {
				var msgs []kafka.Message
				for i, o := range originals {
					msgs = append(msgs, kafka.Message{Key: []byte("combo"), Value: doc(fmt.Sprintf("orig-%d", i), o, nil)})
				}
				return append(msgs, kafka.Message{Key: []byte("combo"), Value: doc("combo", strings.Join(originals, " "), nil)})
			}(),
			check: func(t *testing.T, out, _, _ []kafka.Message) {
				for _, m := range out {
					if string(m.Key) != "combo" {
						continue
					}
					var ev struct {
						Kind     string            `json:"kind"`
						Dup      string            `json:"duplicate_of"`
						Abridged bool              `json:"abridged"`
						Matches  []json.RawMessage `json:"matches"`
					}
					if err := json.Unmarshal(m.Value, &ev); err != nil {
						t.Fatal(err)
					}
					if ev.Kind != "partial" || !strings.HasPrefix(ev.Dup, "orig-") || !ev.Abridged || len(ev.Matches) == 0 {
						t.Errorf("shortened event: kind %s of %q, abridged %v, %d matches (%d bytes)", ev.Kind, ev.Dup, ev.Abridged, len(ev.Matches), len(m.Value))
					}
					if len(m.Value)+len(m.Key) > 6144 {
						t.Errorf("event of %d bytes on a topic of 6144", len(m.Value))
					}
					return
				}
				t.Error("no event for the combined document")
			},
		},
		{
			// A unique document's record over the unique topic's limit:
			// its event is produced, the record is dead-lettered.
			name:   "unique record over the unique topic",
			topics: map[string]string{uniqueTopic: "65536"},
			kv:     []string{"kafka.unique_topic", uniqueTopic},
			large:  []kafka.Message{{Key: []byte("u"), Value: doc("unique-big", text(9, 20000), nil)}},
			check: func(t *testing.T, out, dead, unique []kafka.Message) {
				deadWith("unique_too_large")(t, out, dead, unique)
				found := false
				for _, m := range out {
					found = found || string(m.Key) == "unique-big"
				}
				if !found {
					t.Error("no event for the unique document whose record was dead-lettered")
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cl := kafkatest.Start(t)
			for _, tp := range []struct {
				name       string
				partitions int32
			}{{inTopic, 1}, {outTopic, 3}, {deadTopic, 1}, {uniqueTopic, 3}} {
				cfg := map[string]string{}
				if tp.name == inTopic {
					cfg["max.message.bytes"] = strconv.Itoa(big)
				}
				if v := tt.topics[tp.name]; v != "" {
					cfg["max.message.bytes"] = v
				}
				if err := cl.Cluster.CreateTopic(tp.name, tp.partitions, cfg); err != nil {
					t.Fatal(err)
				}
			}
			after := synth.Corpus(synth.Config{Docs: 30, Seed: 38, Contain: true})
			produceLarge(t, cl, inTopic, tt.large...)
			cl.Produce(t, inTopic, docMessages(t, after)...)
			total := len(tt.large) + len(after)

			c := loadConfig(t, cl.Brokers, tt.kv...)
			in := start(t, c, memoryStore(t, c))
			evs := waitEvents(t, cl, idsOf(after), time.Minute)
			checkPlanted(t, after, firstVerdicts(t, evs))
			poll.Wait(30*time.Second, func() bool { return in.Completed() >= int64(total) })
			in.checkRunning(t)
			tt.check(t, readLarge(t, cl, outTopic), readLarge(t, cl, deadTopic), readLarge(t, cl, uniqueTopic))
			if err := in.stop(t); err != nil {
				t.Fatal(err)
			}
			if committed := committedTotal(t, cl); committed != int64(total) {
				t.Errorf("committed %d of %d records", committed, total)
			}
		})
	}
}

// readLarge reads a topic whose records may be up to a few MiB.
func readLarge(t testing.TB, cl *kafkatest.Cluster, topic string) []kafka.Message {
	t.Helper()
	msgs := cl.ReadAll(t, topic)
	for _, m := range msgs {
		if bytes.Count(m.Key, []byte("k")) == 1<<20 {
			t.Errorf("a record of %s keeps the whole 1 MiB key", topic)
		}
	}
	return msgs
}
