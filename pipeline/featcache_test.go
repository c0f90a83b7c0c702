package pipeline

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/neardup/neardup/sketch"
)

// TestFeatCache: the cache returns what decodeFeatures returns, the same
// decoded features for the same bytes (whichever slice holds them), never
// another document's (also when only bytes past the hashed header
// differ), nil for bytes that do not decode, and holds at most two
// generations of its byte bound.
func TestFeatCache(t *testing.T) {
	s, err := sketch.New(sketch.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var raws [][]byte
	for i := range 40 {
		var f sketch.Features
		if err := s.Sketch(fmt.Appendf(nil, "document %d of the test says %d things about %d other things in words", i, i*7, i*13), &f); err != nil {
			t.Fatal(err)
		}
		raws = append(raws, f.AppendBinary(nil, sketch.DefaultLimits()))
	}
	size := len(raws[0]) + decodedSize(decodeFeatures(raws[0]))
	c := newFeatCache(4 * size)
	for round := range 3 {
		for i, raw := range raws {
			got := c.decode(append([]byte(nil), raw...))
			if want := decodeFeatures(raw); !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d, document %d: cached features differ from decoded ones", round, i)
			}
			if again := c.decode(raw); again != got {
				t.Fatalf("round %d, document %d: the same bytes decoded twice", round, i)
			}
			if n := len(c.cur) + len(c.old); n > 10 {
				t.Fatalf("%d entries held, bound 2 × 4 of this size", n)
			}
		}
	}
	if c.hits == 0 || c.misses == 0 {
		t.Fatalf("hits %d misses %d", c.hits, c.misses)
	}
	if f := c.decode([]byte("not features")); f != nil {
		t.Fatalf("undecodable bytes gave %+v", f)
	}
	// Bytes that share the hashed header but differ after it are
	// different entries: each gives what it decodes to.
	if len(raws[0]) <= keyPrefix {
		t.Fatalf("an encoding of %d bytes is within the hashed prefix", len(raws[0]))
	}
	for k := keyPrefix; k < len(raws[0]); k++ {
		mod := append([]byte(nil), raws[0]...)
		mod[k] ^= 0x5a
		for _, b := range [][]byte{mod, raws[0], mod} {
			if got, want := c.decode(b), decodeFeatures(b); !reflect.DeepEqual(got, want) {
				t.Fatalf("byte %d changed: the cache gives other features than decoding", k)
			}
		}
	}
}

// TestFeatCacheConcurrent: the verifier workers share the cache (Load):
// decoding the same and different bytes from several goroutines at once
// gives what decodeFeatures gives, and the byte bound holds (run with
// -race).
func TestFeatCacheConcurrent(t *testing.T) {
	s, err := sketch.New(sketch.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var raws [][]byte
	for i := range 24 {
		var f sketch.Features
		if err := s.Sketch(fmt.Appendf(nil, "text %d of the concurrent test has %d words and %d more", i, i*3, i*11), &f); err != nil {
			t.Fatal(err)
		}
		raws = append(raws, f.AppendBinary(nil, sketch.DefaultLimits()))
	}
	size := len(raws[0]) + decodedSize(decodeFeatures(raws[0]))
	c := newFeatCache(6 * size)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for w := range 8 {
		wg.Go(func() {
			for k := range 200 {
				i := (k*(w+1) + w) % len(raws)
				if got := c.decode(raws[i]); !reflect.DeepEqual(got, decodeFeatures(raws[i])) {
					errs <- fmt.Sprintf("worker %d: document %d decoded wrong", w, i)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if c.curBytes > c.max || len(c.cur)+len(c.old) > 14 {
		t.Errorf("%d bytes, %d entries held: bound %d bytes a generation", c.curBytes, len(c.cur)+len(c.old), c.max)
	}
	if c.hits == 0 {
		t.Error("no hits")
	}
}
