package pipeline_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/pipeline"
	"github.com/neardup/neardup/stream"
)

const report = `The committee met on Tuesday to review the proposal for a new river
crossing. Engineers presented three designs, each balancing cost against the
expected traffic over the next forty years. Residents raised concerns about
noise, the loss of the old market square, and the length of the construction
period. After a long debate the committee asked for a revised plan that keeps
the square and moves the northern ramp away from the school.`

// news is quoted by the digest, after the report.
const news = `In other news, the library reopens on Monday with longer hours, a new
reading room on the first floor, a café by the entrance and a weekly programme
of talks for children and adults. The swimming pool stays closed until the
spring while its roof is repaired, and the council has promised a temporary bus
to the pool in the next town. The football club won its third match in a row
on Saturday, climbing to fourth place in the regional league before a difficult
away game against the leaders.`

// A pipeline over the in-process memory index, as neardup scan runs it:
// documents in, one verdict per document out, in input order. The
// configuration is the default one (the web profile) with unique
// documents reported too; a document that cannot be decided (here one
// without words) comes out as a dead letter.
func ExamplePipeline_Stream() {
	o := &config.Overrides{}
	o.Add("pipeline.emit", "all")
	cfg, err := config.Load("", nil, o)
	if err != nil {
		log.Fatal(err)
	}
	pc, err := pipeline.FromConfig(&cfg, "example")
	if err != nil {
		log.Fatal(err)
	}
	// The index's parameters (bands, rows, ...) are those of the pipeline.
	probe, err := pipeline.New(pc, nil)
	if err != nil {
		log.Fatal(err)
	}
	ix, err := index.NewMemory(index.MemoryConfig{Params: probe.IndexParams()})
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	pl, err := pipeline.New(pc, ix)
	if err != nil {
		log.Fatal(err)
	}

	docs := []stream.Document{
		{ID: "report", Text: []byte(report)},
		{ID: "report-again", Text: []byte(strings.Replace(report, "Tuesday", "Wednesday", 1))},
		{ID: "digest", Text: []byte("Local news. " + report + " " + news)},
		{ID: "empty", Text: []byte(" ... ")},
	}
	read := func(ctx context.Context, items chan<- stream.Item) error {
		for _, d := range docs {
			select {
			case items <- stream.Item{Doc: d}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	write := func(o stream.Output) error {
		switch {
		case o.Dead != nil:
			fmt.Println(o.Dead.ID, "dead letter:", o.Dead.Reason)
		case o.Event.DuplicateOf != "":
			fmt.Println(o.Event.ID, o.Event.Kind, "of", o.Event.DuplicateOf)
		default:
			fmt.Println(o.Event.ID, o.Event.Kind)
		}
		return nil
	}
	if err := pl.Stream(context.Background(), read, write); err != nil {
		log.Fatal(err)
	}
	// Output:
	// report unique
	// report-again near of report
	// digest partial of report
	// empty dead letter: empty_text
}
