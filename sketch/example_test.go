package sketch_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/neardup/neardup/sketch"
)

// A Sketcher turns a text into the features neardup compares: an edited
// copy keeps most of its MinHash signature, its content digest tells it
// from the original, and normalization (case, quotes, white space) makes
// a reformatted copy the same text.
func ExampleSketcher() {
	s, err := sketch.New(sketch.DefaultConfig(), nil)
	if err != nil {
		log.Fatal(err)
	}
	const text = `The committee met on Tuesday to review the proposal for a new river
crossing. Engineers presented three designs, each balancing cost against the
expected traffic over the next forty years. Residents raised concerns about
noise, the loss of the old market square, and the length of the construction
period.`
	texts := map[string]string{
		"reformatted": strings.ToUpper(strings.Join(strings.Fields(text), "  ")),
		"edited":      strings.Replace(text, "three designs", "four designs", 1),
		"unrelated":   "An entirely different note about gardening, tomatoes and the weather in spring.",
	}
	var orig sketch.Features
	if err := s.Sketch([]byte(text), &orig); err != nil {
		log.Fatal(err)
	}
	for _, name := range []string{"reformatted", "edited", "unrelated"} {
		var f sketch.Features
		if err := s.Sketch([]byte(texts[name]), &f); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-11s same text: %-5v estimated Jaccard: %.2f\n", name, f.Content == orig.Content, orig.Signature.Jaccard(f.Signature))
	}
	// Output:
	// reformatted same text: true  estimated Jaccard: 1.00
	// edited      same text: false estimated Jaccard: 0.78
	// unrelated   same text: false estimated Jaccard: 0.00
}
