package eval

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/pipeline"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// Score identifies one per-pair score.
type Score int

// The per-pair scores, as neardup compare computes them (its JSON keys
// are the names).
const (
	ScoreJaccard       Score = iota // exact resemblance of the shingle sets
	ScoreContainmentAB              // share of the later document's shingles in the earlier
	ScoreContainmentBA              // share of the earlier document's shingles in the later
	ScoreJaccardEst                 // MinHash estimate from the profile's signatures
	ScoreHamming                    // SimHash distance in bits (lower is more alike)
	ScoreCS                         // DUPNIQ correlation score over unique words
	ScoreITS                        // DUPNIQ information-theoretic score
	ScoreEdit                       // edit similarity of the normalized texts
	NumScores
)

var scoreNames = [NumScores]string{"jaccard", "containment_ab", "containment_ba", "jaccard_est", "hamming", "lcs_cs", "lcs_its", "edit"}

var scoreDocs = [NumScores]string{
	"exact resemblance |A∩B| / |A∪B| of the shingle sets",
	"|A∩B| / |A|: how much of the later document A is in the earlier B",
	"|A∩B| / |B|: how much of the earlier document B is in the later A",
	"MinHash estimate of the resemblance from the profile's signatures (what the LSH bands see)",
	"SimHash distance in bits of 64 (lower is more alike)",
	"DUPNIQ-cs: LCS of the unique-word sequences / √(|X|·|Y|)",
	"DUPNIQ-its: log |LCS| / log(|X| + |Y| − |LCS|)",
	fmt.Sprintf("1 − Levenshtein distance / longer length, on the normalized texts; only pairs whose texts both have at most %d bytes (the sentence profile's limit)", editMaxBytes),
}

func (s Score) String() string { return scoreNames[s] }

// Doc says what the score measures.
func (s Score) Doc() string { return scoreDocs[s] }

// HigherIsCloser is false for the SimHash distance, true for the others.
func (s Score) HigherIsCloser() bool { return s != ScoreHamming }

// editMaxBytes bounds the normalized texts edit similarity is computed
// on: the sentence profile's limit, which keeps a pair under about
// 100 µs.
const editMaxBytes = 4096

// maxNegatives bounds the negative pairs scored per set. A set with more
// (PAN13 has 72,634) is scored on a uniform sample drawn with a fixed
// seed, each sampled pair weighted by the number it stands for, so that
// precision is estimated for the whole set.
const maxNegatives = 20000

// PairScores are the scores of one labelled pair.
type PairScores struct {
	Later, Earlier string
	Label          Label
	// Weight is how many pairs of the set this one stands for (1 unless
	// the negatives were sampled).
	Weight float64
	Values [NumScores]float64
	// Has marks the scores computed: all but edit for texts over
	// editMaxBytes.
	Has [NumScores]bool
	// Candidate is true when the two MinHash signatures share an LSH band
	// key: the index would return the earlier document as a candidate.
	Candidate bool
}

// scorer computes every score of a pair the way neardup compare does,
// from the full (not stored) features of the configured sketch.
type scorer struct {
	sk          sketch.Config
	lex         *sketch.Lexicon
	bands, rows int
}

func newScorer(cfg *config.Config) (*scorer, error) {
	lex, err := pipeline.Lexicon(cfg)
	if err != nil {
		return nil, err
	}
	sk := pipeline.SketchConfig(cfg)
	sk.KeepText = editMaxBytes
	b, r := cfg.BandsRows()
	return &scorer{sk: sk, lex: lex, bands: b, rows: r}, nil
}

// features are a document's sketch and band keys.
type features struct {
	f    sketch.Features
	keys []uint64
}

// sketchAll sketches docs on GOMAXPROCS goroutines; a document that
// cannot be sketched (over sketch.max_bytes) gets nil.
func (s *scorer) sketchAll(docs []Doc, progress func()) ([]*features, error) {
	out := make([]*features, len(docs))
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, runtime.GOMAXPROCS(0))
	for w := range errs {
		wg.Go(func() {
			sk, err := sketch.New(s.sk, s.lex)
			if err != nil {
				errs[w] = err
				return
			}
			for {
				i := int(next.Add(1)) - 1
				if i >= len(docs) {
					return
				}
				var f features
				text := docs[i].Text
				if docs[i].HTML {
					text = extract.MainText(text, "") // what the pipeline sketches
				}
				if sk.Sketch(text, &f.f) == nil {
					f.keys = sketch.BandKeys(nil, f.f.Signature, s.bands, s.rows)
					out[i] = &f
				}
				if progress != nil {
					progress()
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
	}
	return out, nil
}

// pairScratch is one goroutine's reusable memory.
type pairScratch struct {
	al verify.Aligner
	ed verify.Editor
}

// score fills every score of the later document a against the earlier b.
func (p *PairScores) score(a, b *features, s *pairScratch) {
	p.Values[ScoreJaccard] = verify.Jaccard(a.f.Shingles, b.f.Shingles)
	p.Values[ScoreContainmentAB] = verify.Containment(a.f.Shingles, b.f.Shingles)
	p.Values[ScoreContainmentBA] = verify.Containment(b.f.Shingles, a.f.Shingles)
	p.Values[ScoreJaccardEst] = a.f.Signature.Jaccard(b.f.Signature)
	p.Values[ScoreHamming] = float64(sketch.Hamming(a.f.SimHash, b.f.SimHash))
	lcs, _, _ := s.al.Len(a.f.Unique, b.f.Unique, 0)
	p.Values[ScoreCS] = verify.CS(lcs, len(a.f.Unique), len(b.f.Unique))
	p.Values[ScoreITS] = verify.ITS(lcs, len(a.f.Unique), len(b.f.Unique))
	for i := range ScoreEdit {
		p.Has[i] = true
	}
	if a.f.Text != nil && b.f.Text != nil {
		p.Values[ScoreEdit], p.Has[ScoreEdit] = s.ed.Similarity(a.f.Text, b.f.Text), true
	}
	for i := range a.keys {
		if a.keys[i] == b.keys[i] {
			p.Candidate = true
			break
		}
	}
}

// labelledPairList collects the set's pairs: every positive, and every
// negative or a sample of maxNegatives of them (seeded by seed).
func labelledPairList(s *Set, seed uint64) []PairScores {
	var pos, neg []PairScores
	for later, earlier := range s.Pairs {
		p := PairScores{Later: later, Earlier: earlier, Label: s.Label(later, earlier), Weight: 1}
		if p.Label == Positive {
			pos = append(pos, p)
		} else {
			neg = append(neg, p)
		}
	}
	if len(neg) > maxNegatives {
		r := rand.New(rand.NewPCG(seed, 0x9a1e))
		r.Shuffle(len(neg), func(i, j int) { neg[i], neg[j] = neg[j], neg[i] })
		w := float64(len(neg)) / maxNegatives
		neg = neg[:maxNegatives]
		for i := range neg {
			neg[i].Weight = w
		}
		// Back in enumeration order, so the work is spread evenly.
		slices.SortFunc(neg, func(a, b PairScores) int {
			return cmp.Or(cmp.Compare(a.Later, b.Later), cmp.Compare(a.Earlier, b.Earlier))
		})
	}
	return append(pos, neg...)
}

// scorePairs scores pairs on GOMAXPROCS goroutines; a pair with a
// document that could not be sketched is dropped.
func scorePairs(pairs []PairScores, feats map[string]*features, progress func()) []PairScores {
	var next atomic.Int64
	var wg sync.WaitGroup
	ok := make([]bool, len(pairs))
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			var s pairScratch
			for {
				i := int(next.Add(1)) - 1
				if i >= len(pairs) {
					return
				}
				a, b := feats[pairs[i].Later], feats[pairs[i].Earlier]
				if a != nil && b != nil {
					pairs[i].score(a, b, &s)
					ok[i] = true
				}
				if progress != nil {
					progress()
				}
			}
		})
	}
	wg.Wait()
	out := pairs[:0]
	for i, p := range pairs {
		if ok[i] {
			out = append(out, p)
		}
	}
	return out
}
