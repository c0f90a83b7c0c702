package index_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sketch"
)

// A document is sketched, its band keys computed, and LookupInsert returns
// the stored documents that share a bucket with it.
func Example() {
	p := index.Params{Hash: "fnv1a64+splitmix64/v1", K: 128, Bands: 9, Rows: 13, Shingle: 5, Seed: 1, SimHashK: 3}
	store, err := index.NewMemory(index.MemoryConfig{Params: p})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	sk, err := sketch.New(sketch.DefaultConfig(), nil)
	if err != nil {
		panic(err)
	}

	var words []string
	for i := range 300 {
		words = append(words, fmt.Sprintf("word%d", i*7919%1009))
	}
	original := strings.Join(words, " ")
	words[150] = "changed"
	texts := map[string]string{"a": original, "b": strings.Join(words, " "), "c": "something else entirely", "d": original}

	for _, id := range []string{"a", "b", "c", "d", "a"} {
		var f sketch.Features
		if err := sk.Sketch([]byte(texts[id]), &f); err != nil {
			panic(err)
		}
		e := index.Entry{ID: id, Bands: sketch.BandKeys(nil, f.Signature, p.Bands, p.Rows),
			SimHash: f.SimHash, HasSimHash: true, Content: f.Content, HasContent: true}
		res, err := store.LookupInsert(context.Background(), []index.Entry{e})
		if err != nil {
			panic(err)
		}
		r := res[0]
		fmt.Printf("%s: seq %d, replay %v, copy of %q, candidates", id, r.Seq, r.Replay, r.Copy)
		for _, c := range r.Candidates {
			fmt.Printf(" %s (via %s, %d of 13 tables)", c.ID, c.Via, c.Hits)
		}
		fmt.Println()
	}
	// Output:
	// a: seq 1, replay false, copy of "", candidates
	// b: seq 2, replay false, copy of "", candidates a (via lsh, 7 of 13 tables)
	// c: seq 3, replay false, copy of "", candidates
	// d: seq 4, replay false, copy of "a", candidates
	// a: seq 1, replay true, copy of "", candidates
}
