package verify_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

const article = `The committee met on Tuesday to review the proposal for a new
river crossing. Engineers presented three designs, each balancing cost against
the expected traffic over the next forty years. Residents raised concerns about
noise, the loss of the old market square, and the length of the construction
period. After a long debate the committee asked for a revised plan that keeps
the square and moves the northern ramp away from the school.`

const digest = `In other news, the library reopens on Monday with longer hours,
a new reading room on the first floor, a café by the entrance and a weekly
programme of talks for children and adults. The swimming pool stays closed
until the spring while its roof is repaired, and the council has promised a
temporary bus to the pool in the next town. The football club won its third
match in a row on Saturday, climbing to fourth place in the regional league
before a difficult away game against the leaders. Volunteers are needed for
the harvest festival next month: the organisers are looking for people to run
the stalls, direct the parking and help clear the field on the Sunday after.
The weather for the week ahead looks mild and dry, with rain expected only on
Thursday evening and a chance of fog in the valley early on Friday morning.`

func sketchOf(s *sketch.Sketcher, text string) *sketch.Features {
	var f sketch.Features
	if err := s.Sketch([]byte(text), &f); err != nil {
		log.Fatal(err)
	}
	return &f
}

func ExampleVerifier() {
	s, err := sketch.New(sketch.DefaultConfig(), nil)
	if err != nil {
		log.Fatal(err)
	}
	p, err := verify.ProfileByName("web")
	if err != nil {
		log.Fatal(err)
	}
	v, err := verify.New(p)
	if err != nil {
		log.Fatal(err)
	}
	doc := sketchOf(s, article)
	copied := sketchOf(s, strings.Replace(article, "Tuesday", "Wednesday", 1))
	quoted := sketchOf(s, "Local news. "+article+" "+digest)

	for _, cand := range []*sketch.Features{doc, copied, quoted} {
		verdict := v.Verify(doc, cand)
		fmt.Println(verdict.Kind, verdict.Check)
	}
	// Output:
	// exact exact
	// near jaccard
	// partial containment
}

func ExamplePool() {
	s, err := sketch.New(sketch.DefaultConfig(), nil)
	if err != nil {
		log.Fatal(err)
	}
	v, err := verify.New(verify.WebProfile())
	if err != nil {
		log.Fatal(err)
	}
	doc := sketchOf(s, article)
	other := sketchOf(s, "An entirely different text about gardening, tomatoes and the weather in spring.")

	in, out := make(chan verify.Job), make(chan verify.Result)
	ctx := context.Background()
	errc := make(chan error, 1)
	go func() {
		// Run does not close out; its owner does, once Run has returned.
		defer close(out)
		errc <- verify.NewPool(v, 0).Run(ctx, in, out)
	}()
	go func() {
		defer close(in)
		in <- verify.Job{Doc: doc, Candidates: []*sketch.Features{doc, other}, Tag: "first"}
		in <- verify.Job{Doc: other, Tag: "no candidates"}
	}()
	for res := range out {
		fmt.Print(res.Tag, ":")
		for _, verdict := range res.Verdicts {
			fmt.Print(" ", verdict.Kind)
		}
		fmt.Println()
	}
	if err := <-errc; err != nil {
		log.Fatal(err)
	}
	// Output:
	// first: exact distinct
	// no candidates:
}
