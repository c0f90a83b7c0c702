package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// wordSource returns a source of random words drawn from seed ("w" and a
// number under 50,000) and a joiner of word lists into a page's text:
// pages whose shared text a test decides word for word.
func wordSource(seed uint64) (words func(n int) []string, join func(parts ...[]string) string) {
	r := rand.New(rand.NewPCG(seed, 1))
	words = func(n int) []string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = fmt.Sprintf("w%d", r.IntN(50000))
		}
		return ws
	}
	join = func(parts ...[]string) string { return strings.Join(slices.Concat(parts...), " ") }
	return words, join
}
