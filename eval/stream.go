package eval

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/pipeline"
)

// Event is a pipeline event as the evaluation reads it: decoded from its
// JSON form (docs/event.schema.json), so that what a newer pipeline adds
// to the contract, such as the passages of a partial duplicate, is read
// without a change to the Go types of package pipeline.
type Event struct {
	ID          string  `json:"id"`
	Kind        string  `json:"kind"`
	DuplicateOf string  `json:"duplicate_of"`
	Cluster     string  `json:"cluster"`
	Method      string  `json:"method"`
	Matches     []Match `json:"matches"`
	// Revised marks an event that replaced the document's first one
	// (stream.Event.Revised).
	Revised bool `json:"revised"`
	// Was is the kind of the event a revision replaced.
	Was string `json:"-"`
	// Dead is the reason a document was rejected (a dead letter); the
	// other fields are then empty.
	Dead string `json:"-"`
}

// Match is one verified earlier document of an event.
type Match struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Method string `json:"method"`
	// Passages are the copied passages the passage lane aligned, in
	// Unicode code points of the two documents' texts.
	Passages []Passage `json:"passages"`
	// Share and MatchShare are the shares of the document's and the
	// match's words inside the passages.
	Share      float64 `json:"share"`
	MatchShare float64 `json:"match_share"`
}

// Passage is a copied passage: Length code points at Offset of the
// event's document, copied from MatchLength code points at MatchOffset
// of the matched earlier document.
type Passage struct {
	Offset      int `json:"offset"`
	Length      int `json:"length"`
	MatchOffset int `json:"match_offset"`
	MatchLength int `json:"match_length"`
}

// StreamConfig returns cfg as the evaluation runs it: every verdict
// emitted (unique documents too, as --emit all), every verified match
// listed (pipeline.max_matches 100, the most the configuration allows: a
// PAN13 suspicious document copies from up to 15 sources), and a fresh
// in-memory index, so that nothing stored earlier takes part. The LSH
// bands and rows are resolved once (choosing them takes 20 ms).
func StreamConfig(cfg config.Config) (config.Config, error) {
	cfg.Pipeline.Emit = "all"
	cfg.Pipeline.MaxMatches = 100
	cfg.Index.URL = "memory"
	cfg.Sketch.Bands, cfg.Sketch.Rows = cfg.BandsRows()
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("eval: %w", err)
	}
	return cfg, nil
}

// Stream runs docs, in order, through the pipeline cfg describes (after
// [StreamConfig]), the path neardup scan takes, and returns one event per
// document in input order. progress, when not nil, is called after each
// document.
func Stream(ctx context.Context, cfg config.Config, docs []Doc, progress func()) ([]Event, error) {
	cfg, err := StreamConfig(cfg)
	if err != nil {
		return nil, err
	}
	return stream(ctx, cfg, docs, progress)
}

// stream is Stream on cfg as it is (index.url included).
func stream(ctx context.Context, cfg config.Config, docs []Doc, progress func()) ([]Event, error) {
	pc, store, err := pipeline.OpenStore(ctx, &cfg, "eval")
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	defer store.Close()
	pl, err := pipeline.New(pc, store)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	events := make([]Event, 0, len(docs))
	at := map[string]int{} // the first event of each id
	read := func(ctx context.Context, items chan<- pipeline.Item) error {
		for _, d := range docs {
			select {
			case items <- pipeline.Item{Doc: pipeline.Document{ID: d.ID, URL: d.URL, Text: d.Text, IsHTML: d.HTML}}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	write := func(o pipeline.Output) error {
		ev, err := decodeOutput(o)
		if err != nil {
			return err
		}
		if ev.ID == "" && len(events) < len(docs) {
			ev.ID = docs[len(events)].ID // outputs come in input order
		}
		events = append(events, ev)
		if _, ok := at[ev.ID]; !ok && ev.ID != "" {
			at[ev.ID] = len(events) - 1
		}
		// A revision replaces its document's event, as a consumer keyed
		// by id keeps the latest (pipeline/revise.go).
		for _, r := range o.Revisions {
			i, ok := at[r.ID]
			if !ok {
				continue
			}
			rev, err := decodeOutput(pipeline.Output{Event: r})
			if err != nil {
				return err
			}
			rev.Was = events[i].Kind
			if events[i].Was != "" {
				rev.Was = events[i].Was
			}
			events[i] = rev
		}
		if progress != nil {
			progress()
		}
		return nil
	}
	if err := pl.Stream(ctx, read, write); err != nil {
		return nil, fmt.Errorf("eval: stream: %w", err)
	}
	if len(events) != len(docs) {
		return nil, fmt.Errorf("eval: stream: %d outputs for %d documents", len(events), len(docs))
	}
	return events, nil
}

// decodeOutput reads an output through the JSON contract.
func decodeOutput(o pipeline.Output) (Event, error) {
	if o.Dead != nil {
		return Event{ID: o.Dead.ID, Dead: string(o.Dead.Reason)}, nil
	}
	if o.Event == nil {
		return Event{}, fmt.Errorf("eval: an output with neither event nor dead letter (pipeline.emit is not all)")
	}
	b, err := json.Marshal(o.Event)
	if err != nil {
		return Event{}, err
	}
	var ev Event
	if err := json.Unmarshal(b, &ev); err != nil {
		return Event{}, fmt.Errorf("eval: event of %s: %w", o.Event.ID, err)
	}
	return ev, nil
}
