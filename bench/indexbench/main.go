// Command indexbench compares neardup's in-memory band store
// (index.Memory) with github.com/ekzhu/minhash-lsh in one process and one
// run, on the same MinHash signatures (K = 128, 9 bands × 13 rows, a
// third of the documents near-duplicates of earlier ones), and prints the
// rates and their ratio.
//
// neardup's rate is streaming LookupInsert: every document is looked up
// against all earlier ones and added, with no batch step, band keys
// computed from the signature inside the timed loop. The peer's rate is
// Add for every document plus Query for every document, with its batch
// Index() step (which the peer needs before anything added is searchable)
// run once in between and left out of its time: a favourable reading of
// the peer. The peer used as a stream (Index after every Add) is shown
// separately on fewer documents.
//
// It lives in its own module so the peer never enters neardup's dependency
// graph. Run from the repository root:
//
//	(cd bench/indexbench && go run . -docs 100000)
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	minhashlsh "github.com/ekzhu/minhash-lsh"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sketch"
)

const (
	k     = 128
	bands = 9
	rows  = 13
)

func main() {
	n := flag.Int("docs", 100000, "documents per measurement")
	rounds := flag.Int("rounds", 3, "repetitions; the best round is reported")
	streamN := flag.Int("stream-docs", 2000, "documents for the peer used as a stream")
	flag.Parse()

	sigs := signatures(*n, 1)
	fmt.Printf("indexbench: %d signatures, K=%d, %d bands × %d rows, GOMAXPROCS=%d, %s\n\n",
		*n, k, bands, rows, runtime.GOMAXPROCS(0), runtime.Version())

	peer := minhashlsh.NewMinhashLSH(k, 0.8)
	pk, pl := peer.Params()
	fmt.Printf("peer: minhashlsh.NewMinhashLSH(%d, 0.8) chose %d bands × %d rows (32-bit hash values)\n", k, pl, pk)

	var best1, best64, bestPeer float64
	var cands1, peerCands int
	for round := range *rounds {
		r1, c1 := ours(sigs, 1)
		r64, _ := ours(sigs, 64)
		rp, cp, idx := peerRate(sigs)
		fmt.Printf("round %d: neardup LookupInsert %.0f docs/s (batch 1), %.0f docs/s (batch 64); peer Add+Query %.0f docs/s (+ Index() %v)\n",
			round, r1, r64, rp, idx.Round(time.Millisecond))
		best1, best64, bestPeer = max(best1, r1), max(best64, r64), max(bestPeer, rp)
		cands1, peerCands = c1, cp
	}
	fmt.Printf("\ncandidates returned: neardup %d (earlier documents only), peer %d (every document sharing a band, itself included)\n", cands1, peerCands)
	if peerCands == *n+2*cands1 {
		fmt.Println("same pairs found: peer = documents + 2 × neardup")
	} else {
		fmt.Println("WARNING: the two found different pairs")
	}
	fmt.Printf("\nneardup index.Memory, batch 1:   %10.0f docs/s  %.1f× the peer\n", best1, best1/bestPeer)
	fmt.Printf("neardup index.Memory, batch 64:  %10.0f docs/s  %.1f× the peer\n", best64, best64/bestPeer)
	fmt.Printf("ekzhu/minhash-lsh Add+Query:     %10.0f docs/s  (Index() excluded)\n", bestPeer)

	m := min(*streamN, *n)
	start := time.Now()
	stream := minhashlsh.NewMinhashLSH(k, 0.8)
	for i, s := range sigs[:m] {
		stream.Query(s)
		stream.Add(i, s)
		stream.Index()
	}
	fmt.Printf("ekzhu/minhash-lsh as a stream (Query, Add, Index per document, %d docs): %.0f docs/s\n",
		m, float64(m)/time.Since(start).Seconds())
}

// signatures returns n random signatures; every third one is a near
// duplicate of an earlier one (10% of its positions redrawn).
func signatures(n int, seed uint64) [][]uint64 {
	rng := rand.New(rand.NewPCG(seed, 5))
	sigs := make([][]uint64, n)
	for i := range sigs {
		s := make([]uint64, k)
		if i > 0 && i%3 == 0 {
			copy(s, sigs[rng.IntN(i)])
			for range k / 10 {
				s[rng.IntN(k)] = rng.Uint64()
			}
		} else {
			for j := range s {
				s[j] = rng.Uint64()
			}
		}
		sigs[i] = s
	}
	return sigs
}

func ours(sigs [][]uint64, batch int) (rate float64, cands int) {
	m, err := index.NewMemory(index.MemoryConfig{Params: index.Params{Hash: "fnv1a64+splitmix64/v1", K: k,
		Bands: bands, Rows: rows, Shingle: 5, Seed: 1, SimHashK: 3}})
	if err != nil {
		panic(err)
	}
	ids := make([]string, len(sigs))
	for i := range ids {
		ids[i] = fmt.Sprint("doc-", i)
	}
	ctx := context.Background()
	entries := make([]index.Entry, batch)
	for i := range entries {
		entries[i].Bands = make([]uint64, 0, bands)
	}
	runtime.GC()
	start := time.Now()
	for lo := 0; lo < len(sigs); lo += batch {
		part := entries[:min(batch, len(sigs)-lo)]
		for j := range part {
			part[j].ID = ids[lo+j]
			part[j].Bands = sketch.BandKeys(part[j].Bands, sigs[lo+j], bands, rows)
		}
		res, err := m.LookupInsert(ctx, part)
		if err != nil {
			panic(err)
		}
		for _, r := range res {
			cands += len(r.Candidates)
		}
	}
	return float64(len(sigs)) / time.Since(start).Seconds(), cands
}

func peerRate(sigs [][]uint64) (rate float64, cands int, index time.Duration) {
	lsh := minhashlsh.NewMinhashLSH(k, 0.8)
	runtime.GC()
	start := time.Now()
	for i, s := range sigs {
		lsh.Add(i, s)
	}
	add := time.Since(start)
	start = time.Now()
	lsh.Index()
	index = time.Since(start)
	start = time.Now()
	for _, s := range sigs {
		cands += len(lsh.Query(s))
	}
	query := time.Since(start)
	return float64(len(sigs)) / (add + query).Seconds(), cands, index
}
