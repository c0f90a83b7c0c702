package sink

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/neardup/neardup/internal/schematest"
	"github.com/neardup/neardup/stream"
)

// Issue 24: the dead-letter contract did not list neardup.source.size,
// nor any of the headers serve adds. docs/dead-letter.schema.json now
// describes them ($defs/kafka_headers); the headers of a dead letter, a
// cut one and that of a batch too large to read satisfy it, and every
// header the sink can write is described.
func TestDeadLetterHeadersDocumented(t *testing.T) {
	schema := schematest.LoadRef(t, "dead-letter.schema.json", "/$defs/kafka_headers")
	dl := &stream.DeadLetter{Reason: stream.ReasonTooLarge, Error: "too large"}
	in := &kgo.Record{Topic: "crawl.documents", Partition: 3, Offset: 42, Key: []byte("k"),
		Value: []byte(strings.Repeat("x", 3*stream.MaxRawBytes)), Headers: []kgo.RecordHeader{{Key: "origin", Value: []byte("crawler")}}}
	// A batch too large to read: the consumer's record carries only its
	// size (consumer/oversize.go).
	unread := &kgo.Record{Topic: "crawl.documents", Partition: 3, Offset: 43,
		Headers: []kgo.RecordHeader{{Key: HeaderSourceSize, Value: []byte("99999999")}}}
	whole := deadLetter("dead", string(dl.Reason), dl.Error, in)
	bigKey := *in
	bigKey.Key = []byte(strings.Repeat("k", 1<<20))
	bigKey.Headers = append(cloneHeaders(in.Headers), kgo.RecordHeader{Key: "trace", Value: []byte(strings.Repeat("t", 8<<10))})
	written := map[string]bool{}
	for _, tt := range []struct {
		name string
		rec  *kgo.Record
	}{
		{"whole", whole},
		{"cut to fit", fitDeadLetter(whole, 2*stream.MaxRawBytes)},
		{"key cut, header dropped", fitDeadLetter(deadLetter("dead", string(dl.Reason), dl.Error, &bigKey), 6<<10)},
		{"unread batch", deadLetter("dead", string(dl.Reason), dl.Error, unread)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{}
			for _, x := range tt.rec.Headers {
				if _, dup := h[x.Key]; dup {
					t.Errorf("header %s written twice", x.Key)
				}
				h[x.Key] = string(x.Value)
				if x.Key != "origin" {
					written[x.Key] = true
				}
			}
			b, err := json.Marshal(h)
			if err != nil {
				t.Fatal(err)
			}
			schema.Validate(t, b)
		})
	}

	raw, err := os.ReadFile(filepath.Join("..", "docs", "dead-letter.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs struct {
			Headers struct {
				Properties map[string]struct {
					Description string `json:"description"`
				} `json:"properties"`
			} `json:"kafka_headers"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	props := doc.Defs.Headers.Properties
	for _, k := range []string{HeaderReason, HeaderError, HeaderSourceTopic, HeaderSourcePartition, HeaderSourceOffset, HeaderSourceSize, HeaderTruncated,
		HeaderKeyTruncated, HeaderHeadersDropped} {
		if !written[k] {
			t.Errorf("header %s never written by the cases above", k)
		}
	}
	if got, want := slices.Sorted(maps.Keys(props)), slices.Sorted(maps.Keys(written)); !slices.Equal(got, want) {
		t.Errorf("schema describes headers %q; the sink writes %q", got, want)
	}
	for k, p := range props {
		if p.Description == "" {
			t.Errorf("header %s has no description", k)
		}
	}
}
