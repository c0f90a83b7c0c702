package verify

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/neardup/neardup/sketch"
)

// TestPoolGroups: with Job.Groups, candidates are verified in order and a
// near verdict settles the rest of its group; a partial or distinct one
// settles nothing, and candidates of other groups or of none (−1) are
// verified. Without groups every candidate is verified.
func TestPoolGroups(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	cfg := sketch.DefaultConfig()
	cfg.PassageWords = 40
	lim := WebProfile().Limits(sketch.DefaultLimits())
	stored := func(ws []string) *sketch.Features {
		var s sketch.Features
		features(t, cfg, ws).Stored(&s, lim)
		return &s
	}
	doc := words(r, 1000, 20000)
	a := stored(doc)
	near1, near2 := stored(edit(r, doc, 0.02)), stored(edit(r, doc, 0.02))
	// 300 words of the document inside 700 others: partial.
	part := func() *sketch.Features {
		return stored(slices.Concat(words(r, 350, 20000), doc[200:500], words(r, 350, 20000)))
	}
	part1, part2 := part(), part()
	other := stored(words(r, 1000, 20000))
	cands := []*sketch.Features{near1, other, near2, part1, part2, near2}
	for _, tt := range []struct {
		name    string
		groups  []int32
		kinds   []Kind
		settled []bool
	}{
		{"no groups", nil,
			[]Kind{Near, Distinct, Near, Partial, Partial, Near},
			[]bool{false, false, false, false, false, false}},
		{"near settles its group", []int32{0, -1, 0, 1, 1, -1},
			[]Kind{Near, Distinct, Distinct, Partial, Partial, Near},
			[]bool{false, false, true, false, false, false}},
		{"a near first settles every later member", []int32{0, 0, 0, 0, 1, 1},
			[]Kind{Near, Distinct, Distinct, Distinct, Partial, Near},
			[]bool{false, true, true, true, false, false}},
		{"distinct and partial settle nothing; a late near settles", []int32{-1, 0, 1, 0, 0, 1},
			[]Kind{Near, Distinct, Near, Partial, Partial, Distinct},
			[]bool{false, false, false, false, false, true}},
	} {
		// Given, or loaded by the workers (Job.Load): the same verdicts,
		// and a settled candidate is never loaded.
		for _, lazy := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/lazy=%v", tt.name, lazy), func(t *testing.T) {
				p := NewPool(mustNew(t, WebProfile()), 2)
				in := make(chan Job, 1)
				out := make(chan Result, 1)
				j := Job{Doc: a, Candidates: cands, Groups: tt.groups}
				var mu sync.Mutex
				loaded := make([]int, len(cands))
				if lazy {
					j.Candidates = make([]*sketch.Features, len(cands))
					j.Load = func(i int) *sketch.Features {
						mu.Lock()
						loaded[i]++
						mu.Unlock()
						return cands[i]
					}
				}
				in <- j
				close(in)
				if err := p.Run(context.Background(), in, out); err != nil {
					t.Fatal(err)
				}
				res := <-out
				for i, v := range res.Verdicts {
					if v.Kind != tt.kinds[i] || v.Settled != tt.settled[i] {
						t.Errorf("candidate %d: %s settled %v, want %s settled %v", i, v.Kind, v.Settled, tt.kinds[i], tt.settled[i])
					}
					if v.Settled && v.Check != "" {
						t.Errorf("candidate %d: settled but checked by %s", i, v.Check)
					}
					if !lazy {
						continue
					}
					want := 1
					if tt.settled[i] {
						want = 0
					}
					if loaded[i] != want || (want == 1) != (j.Candidates[i] == cands[i]) {
						t.Errorf("candidate %d: loaded %d times (want %d), entry filled %v", i, loaded[i], want, j.Candidates[i] != nil)
					}
				}
			})
		}
	}
}
