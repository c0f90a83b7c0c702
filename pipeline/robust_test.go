package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/synth"
	"github.com/neardup/neardup/stream"
	"github.com/neardup/neardup/verify"
)

// decodeItem decodes one JSON line as the consumers do.
func decodeItem(d *Decoder, line string, tag any) Item {
	doc, err := d.DecodeJSON([]byte(line), "")
	it := Item{Doc: doc, Err: err, Tag: tag}
	if err != nil {
		it.Raw = stream.Raw([]byte(line))
	}
	return it
}

// No document stops the stream: a timestamp the event encoding cannot
// hold, an id that is not UTF-8 (from a consumer that does not decode
// JSON), an event over the size limit — each becomes a dead letter with
// its reason and every later document is decided. On today's main the
// first of them ended the run with "encode verdict: Time.MarshalJSON: year
// outside of range [0,9999]".
func TestNoDocumentStopsTheStream(t *testing.T) {
	cfg := testConfig(t, "web")
	cfg.MaxEventBytes = 4096
	d := NewDecoder(cfg.Sketch.MaxBytes)
	g := synth.NewGenerator(7, 5000)
	text := g.Text(g.Words(300))
	items := []Item{
		decodeItem(d, `{"id":"b","ts":9223372036854775807,"text":"`+text+`"}`, 0),
		decodeItem(d, `{"id":"c","ts":"0000-01-01T00:30:00+01:00","text":"`+text+`"}`, 1),
		{Doc: Document{ID: "x\xff", Text: []byte(text)}, Tag: 2},
		{Doc: Document{ID: "", Text: []byte(text)}, Tag: 3},
		{Doc: Document{ID: strings.Repeat("i", MaxIDBytes+1), Text: []byte(text)}, Tag: 4},
		decodeItem(d, `{"id":"meta","meta":{"blob":"`+strings.Repeat("m", 8000)+`"},"text":"`+g.Text(g.Words(300))+`"}`, 5),
		decodeItem(d, `{"id":"ok","ts":1700000000000,"text":"`+text+`"}`, 6),
		decodeItem(d, `{"id":"ok-copy","text":"`+text+`"}`, 7),
	}
	want := []string{"dead:bad_ts", "dead:bad_ts", "dead:bad_id", "dead:bad_id", "dead:bad_id", "dead:event_too_large", "unique", "exact"}
	for _, ix := range []struct {
		name string
		open func(*Pipeline) index.Store
	}{
		{"memory", func(p *Pipeline) index.Store { return memoryIndex(t, p) }},
		{"redis", redisIndex(t, redistest.StartServer(t))},
	} {
		t.Run(ix.name, func(t *testing.T) {
			outs := run(t, cfg, ix.open, items)
			for i, o := range outs {
				got := "none"
				switch {
				case o.Dead != nil:
					got = "dead:" + string(o.Dead.Reason)
				case o.Event != nil:
					got = o.Event.Kind
				}
				if got != want[i] {
					t.Errorf("item %d: %s, want %s (%+v)", i, got, want[i], o.Dead)
				}
			}
			if ev := outs[7].Event; ev == nil || ev.DuplicateOf != "ok" {
				t.Errorf("the copy after the bad documents: %+v", ev)
			}
		})
	}
}

// A repeated id gets its first verdict back with replay set, whether the
// first occurrence is in an earlier run, an earlier batch or the same
// batch, on the memory index and on Redis. The repeats carry other texts:
// decided afresh they would be exact copies of p. On today's main the
// repeats in one run got fresh verdicts.
func TestRepeatedIDs(t *testing.T) {
	g := synth.NewGenerator(5, 5000)
	p := g.Text(g.Words(300))
	items := func() []Item {
		return []Item{
			{Doc: Document{ID: "p", Text: []byte(p)}},
			{Doc: Document{ID: "same", Text: []byte(g.Text(g.Words(300)))}},
			{Doc: Document{ID: "same", Text: []byte(p)}},
			{Doc: Document{ID: "same", Text: []byte(p + " and more")}},
		}
	}
	addr := redistest.StartServer(t)
	for _, ix := range []string{"memory", "redis"} {
		for _, batch := range []int{64, 1} {
			t.Run(fmt.Sprintf("%s/batch%d", ix, batch), func(t *testing.T) {
				cfg := testConfig(t, "web")
				cfg.Batch = batch
				probe, err := New(cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				var store index.Store
				if ix == "memory" {
					store = memoryIndex(t, probe)
				} else {
					store = redisIndex(t, addr)(probe)
				}
				shared := func(*Pipeline) index.Store { return store }
				first := run(t, cfg, shared, items())
				again := run(t, cfg, shared, items()) // an earlier run
				firstSame := first[1].Event
				if firstSame == nil || firstSame.Kind != KindUnique || firstSame.Replay {
					t.Fatalf("first occurrence of same: %+v", firstSame)
				}
				check := func(what string, ev *Event, want *Event) {
					t.Helper()
					if ev == nil || !ev.Replay {
						t.Errorf("%s: %+v, want a replay", what, ev)
						return
					}
					a, b := *ev, *want
					a.Replay, b.Replay = false, false
					if x, y := comparable(Output{Event: &a}), comparable(Output{Event: &b}); x != y {
						t.Errorf("%s: %s\n want the first verdict %s", what, x, y)
					}
				}
				check("same, repeat 1", first[2].Event, firstSame)
				check("same, repeat 2", first[3].Event, firstSame)
				for i := range again {
					check(fmt.Sprintf("second run, item %d", i), again[i].Event, first[min(i, 1)].Event)
				}
			})
		}
	}
}

// A stream of one document over and over: every copy is found through the
// content digest with no bucket read and no candidate verified, and all
// name the first document. On today's main each copy verified up to
// index.common_docs candidates (see BenchmarkCopies for the speed).
func TestCopiesSkipTheBuckets(t *testing.T) {
	cfg := testConfig(t, "web")
	g := synth.NewGenerator(9, 5000)
	text := []byte(g.Text(g.Words(200)))
	const n = 2000
	items := make([]Item, n)
	for i := range items {
		items[i] = Item{Doc: Document{ID: fmt.Sprint("copy-", i), Text: text}}
	}
	probe, _ := New(cfg, nil)
	mem, err := index.NewMemory(index.MemoryConfig{Params: probe.IndexParams()})
	if err != nil {
		t.Fatal(err)
	}
	outs := run(t, cfg, func(*Pipeline) index.Store { return mem }, items)
	for i, o := range outs[1:] {
		if o.Event == nil || o.Event.Kind != KindExact || o.Event.DuplicateOf != "copy-0" || o.Event.Cluster != "copy-0" {
			t.Fatalf("copy %d: %+v", i+1, o.Event)
		}
	}
	if st := mem.Stats(); st.Copies != n-1 || st.Candidates != 0 {
		t.Errorf("stats %+v: want %d copies and no candidate", st, n-1)
	}
}

// Every event and dead letter the pipeline emits encodes as JSON.
func encodes(t *testing.T, o Output) {
	t.Helper()
	for _, v := range []any{o.Event, o.Dead} {
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("output does not encode: %v", err)
		}
	}
}

// FuzzPipeline feeds arbitrary JSON documents, one per line, through the
// whole pipeline over the memory index: every input yields exactly one
// event (unique events are on) or one dead letter, every output encodes,
// and nothing panics.
func FuzzPipeline(f *testing.F) {
	for _, seed := range []string{
		`{"id":"a","text":"the quick brown fox jumps over the lazy dog"}` + "\n" + `{"id":"a","text":"the quick brown fox"}`,
		`{"id":"b","ts":9223372036854775807,"text":"a document from the far future"}`,
		`{"id":"x\ud800","text":"lone surrogate"}` + "\n" + "{\"id\":\"x\xff\",\"text\":\"invalid byte\"}",
		`{"id":"h","html":"<html><body><article><p>one paragraph of text</p></article></body></html>","meta":{"k":[1,2,{"x":null}]}}`,
		`{"id":"","text":"empty id"}` + "\n" + `{"text":"no id"}` + "\n" + `not json`,
		`{"id":"t","text":"a b c d e f g h","ts":"2026-01-02T03:04:05.123456789+14:00","url":"\u0000"}`,
		`{"id":"same","text":"one two three four five six"}` + "\n" + `{"id":"same","text":"one two three four five six"}` + "\n" + `{"id":"copy","text":"One, two; three four five six!"}`,
	} {
		f.Add([]byte(seed))
	}
	cfg := testConfig(f, "web")
	cfg.Workers = 2
	cfg.MaxEventBytes = 2048
	d := NewDecoder(1 << 16)
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := strings.Split(string(data), "\n")
		if len(lines) > 32 {
			lines = lines[:32]
		}
		var items []Item
		for i, l := range lines {
			if l != "" {
				items = append(items, decodeItem(d, l, i))
			}
		}
		outs := run(t, cfg, func(p *Pipeline) index.Store { return memoryIndex(t, p) }, items)
		for i, o := range outs {
			if (o.Event == nil) == (o.Dead == nil) {
				t.Fatalf("input %d: event %v and dead letter %v: want exactly one", i, o.Event, o.Dead)
			}
			if o.Tag != items[i].Tag {
				t.Fatalf("output %d carries tag %v, want %v", i, o.Tag, items[i].Tag)
			}
			if o.Dead != nil && o.Dead.Reason == ReasonInternal {
				t.Fatalf("input %d: %s", i, o.Dead.Error)
			}
			encodes(t, o)
		}
	})
}

// A stored web page has a bounded cost, all included: the Go heap of the
// memory index per document of about 5 KB, its stored features and its
// verdict record. Without the passage lane it is under 2 KB (1,445 B at a
// million documents, bench/bytesbench); the passage lane (web's default)
// adds about 1.8 bytes per word of fingerprints, anchors and token offsets
// to the features, and the anchors' bucket entries to the index. On the
// main of issue 11 the features alone were 5.9 KB, the record 329 bytes
// and the heap 8.1 KB per document. Since deletes (issue 26) the memory
// index keeps each document's keys (its band, SimHash and anchor keys,
// ~8 bytes each) so that a delete can take them away; the smaller
// features of encoding v3 (issue 23) paid for most of it: 5,147 B of
// heap, 1,974 B of features measured with both.
func TestBytesPerDocument(t *testing.T) {
	if testing.Short() {
		t.Skip("heap accounting is not meaningful under the race detector (-short is the race run)")
	}
	for _, tc := range []struct {
		passageWords        int
		heap, features, rec int
	}{{40, 5632, 2560, 128}, {0, 2048, 1024, 128}} {
		t.Run(fmt.Sprintf("passage_words=%d", tc.passageWords), func(t *testing.T) {
			bytesPerDocument(t, tc.passageWords, tc.heap, tc.features, tc.rec)
		})
	}
}

func bytesPerDocument(t *testing.T, passageWords, maxHeap, maxFeatures, maxRecord int) {
	const n = 5000
	cfg := testConfig(t, "web")
	cfg.EmitUnique = false
	cfg.Sketch.PassageWords = passageWords
	var items []Item
	synth.Stream(synth.Config{Docs: n, Seed: 2026, MinWords: 900, MaxWords: 1100, ExactRate: 0.05, NearRate: 0.15,
		PartialRate: 0.05}, 1000, func(d synth.Doc) {
		items = append(items, Item{Doc: Document{ID: d.ID, Text: []byte(d.Text)}})
	})
	probe, _ := New(cfg, nil)
	before := heapAfterGC()
	ix, err := index.Open(context.Background(), "memory", index.Options{Params: probe.IndexParams(), CommonDocs: 1000, Capacity: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	run(t, cfg, func(*Pipeline) index.Store { return ix }, items)
	ids := make([]string, 0, n)
	for _, it := range items {
		ids = append(ids, it.Doc.ID)
	}
	after := heapAfterGC()
	runtime.KeepAlive(items) // the texts stay out of the difference
	seqs := storedSeqs(t, ix, probe.IndexParams(), ids...)
	feats, _ := ix.Features(context.Background(), seqs)
	recs, _ := ix.Verdicts(context.Background(), seqs)
	var fb, vb int
	for i := range ids {
		fb += len(feats[i])
		vb += len(recs[i])
	}
	perDoc := (float64(after) - float64(before)) / n
	t.Logf("heap %.0f B per document; features %d B, verdict record %d B on average", perDoc, fb/n, vb/n)
	if perDoc > float64(maxHeap) || fb/n > maxFeatures || vb/n > maxRecord {
		t.Errorf("%.0f B of heap, %d B of features and %d B of verdict per document: want ≤ %d, %d and %d", perDoc, fb/n, vb/n, maxHeap, maxFeatures, maxRecord)
	}
	runtime.KeepAlive(ix)
}

func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// maxEncoded is an upper bound of the event's encoding, also for strings
// that escape to six bytes a byte.
func TestMaxEncodedBounds(t *testing.T) {
	one := 1.0
	sc := verify.Scores{Jaccard: &one, ContainmentAB: &one, ContainmentBA: &one}
	ts := time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
	nasty := strings.Repeat("<\u2028\x01\"", 50)
	p := 3
	off := int64(1) << 62
	ev := &Event{ID: nasty, Kind: KindNear, DuplicateOf: nasty, Cluster: nasty, Method: "containment", Scores: &sc,
		Source: EventSource{URL: nasty, TS: &ts, Meta: json.RawMessage(`{"k":"` + strings.Repeat("<>&", 100) + `"}`),
			Source: Source{File: nasty, Line: 1 << 30, Topic: nasty, Partition: new(int32), Offset: &off}},
		Params: Params{Profile: "books", Shingle: 64, CharGram: 64, K: 4096, Method: "classic", Bands: 255, Rows: 4096,
			Seed: 1<<64 - 1, SimHashK: 15, Index: nasty, Version: nasty},
		At: ts, Replay: true, Truncated: 1 << 30, Unverified: 1 << 30, Correction: true}
	*ev.Source.Partition = int32(p)
	for range 5 {
		ev.Matches = append(ev.Matches, Match{ID: nasty, Kind: KindPartial, Method: "containment", Scores: sc})
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > maxEncoded(ev) {
		t.Errorf("encoding of %d bytes over the bound %d", len(b), maxEncoded(ev))
	}
}
