package pipeline

import (
	"context"
	"fmt"
	"testing"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/synth"
)

// testConfig returns the pipeline configuration of a profile's defaults,
// with unique events on and the settings of keyValues (key, value, …).
func testConfig(t testing.TB, profile string, keyValues ...string) Config {
	t.Helper()
	o := &config.Overrides{}
	o.Add("profile", profile)
	o.Add("pipeline.emit", "all")
	for i := 0; i+1 < len(keyValues); i += 2 {
		o.Add(keyValues[i], keyValues[i+1])
	}
	c, err := config.Load("", nil, o)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := FromConfig(&c, "test")
	if err != nil {
		t.Fatal(err)
	}
	return pc
}

func memoryIndex(t testing.TB, pl *Pipeline) index.Store {
	t.Helper()
	ix, err := index.NewMemory(index.MemoryConfig{Params: pl.IndexParams()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// run pushes items through a pipeline over ix and collects the outputs.
func run(t testing.TB, cfg Config, ix func(*Pipeline) index.Store, items []Item) []Output {
	t.Helper()
	probe, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := New(cfg, ix(probe))
	if err != nil {
		t.Fatal(err)
	}
	return runThrough(t, pl, items, make(chan Item), make(chan Output, 16))
}

// runThrough runs pl from in to out, feeds items into in, and returns the
// outputs in order; the buffers of in and out are the caller's choice.
func runThrough(t testing.TB, pl *Pipeline, items []Item, in chan Item, out chan Output) []Output {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		errc <- pl.Run(context.Background(), in, out)
		close(out)
	}()
	go func() {
		defer close(in)
		for _, it := range items {
			in <- it
		}
	}()
	var outs []Output
	for o := range out {
		outs = append(outs, o)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if len(outs) != len(items) {
		t.Fatalf("%d outputs for %d items", len(outs), len(items))
	}
	return outs
}

func synthItems(docs []synth.Doc) []Item {
	items := make([]Item, len(docs))
	for i, d := range docs {
		items[i] = Item{Doc: Document{ID: d.ID, Text: []byte(d.Text)}, Tag: i}
	}
	return items
}

// plantedScore compares events with the planted truth: a planted
// duplicate is found when its event names its source as duplicate_of;
// every other duplicate event is a false positive.
type plantedScore struct {
	planted, found map[synth.Kind]int
	wrongKind      map[synth.Kind]int
	wrongExamples  map[synth.Kind][]string
	falsePos       int
	missed         []string
}

func score(docs []synth.Doc, outs []Output) plantedScore {
	s := plantedScore{planted: map[synth.Kind]int{}, found: map[synth.Kind]int{}, wrongKind: map[synth.Kind]int{},
		wrongExamples: map[synth.Kind][]string{}}
	for i, d := range docs {
		ev := outs[i].Event
		if d.Kind != synth.Original {
			s.planted[d.Kind]++
		}
		switch {
		case ev == nil || ev.Kind == KindUnique:
			if d.Kind != synth.Original {
				s.missed = append(s.missed, d.ID+" ("+string(d.Kind)+")")
			}
		case d.Kind != synth.Original && ev.DuplicateOf == d.Source:
			s.found[d.Kind]++
			if string(d.Kind) != ev.Kind {
				s.wrongKind[d.Kind]++
				if len(s.wrongExamples[d.Kind]) < 3 {
					s.wrongExamples[d.Kind] = append(s.wrongExamples[d.Kind], fmt.Sprintf("%s: %s by %s", d.ID, ev.Kind, ev.Method))
				}
			}
		default:
			s.falsePos++
		}
	}
	return s
}

func (s plantedScore) recall() float64 {
	p, f := 0, 0
	for k, n := range s.planted {
		p += n
		f += s.found[k]
	}
	return float64(f) / float64(max(p, 1))
}

func (s plantedScore) precision() float64 {
	f := 0
	for _, n := range s.found {
		f += n
	}
	return float64(f) / float64(max(f+s.falsePos, 1))
}
