// Package verify decides whether a candidate proposed by the LSH index is
// really a duplicate of an incoming document, by exact comparison of their
// [sketch.Features], and says which check decided.
//
// LSH buckets only propose candidates: MinHash banding admits pairs below
// the target resemblance and, for a few, misses the estimate, so every
// candidate is verified here on the full features before an event is
// emitted. It is not the place for I/O: features arrive decoded, and
// nothing here blocks except [Pool.Run].
//
// # Verdicts
//
// A [Verifier] runs a [Profile]: an ordered cascade of [Check]s, cheap and
// strict ones first. The first check that fires decides the [Verdict]
// (exact, near or partial) and names itself in [Verdict].Check; when none
// fires the candidate is [Distinct]. [Scores] carries every score a check
// computed exactly, and nothing else, so its JSON lists exactly the checks
// that ran to completion. The built-in profiles, with the reasons for
// their thresholds, are [WebProfile] (crawled pages), [BooksProfile] (long
// OCR'd text, DUPNIQ) and [SentenceProfile] (short texts, edit distance);
// [ProfileByName] returns them by name and [Profile.WithThresholds]
// applies configured thresholds.
//
// # Building blocks
//
// Pure functions over feature slices, usable on their own:
//
//   - [Jaccard], [Containment] and their early-exit forms [JaccardAtLeast]
//     and [ContainmentAtLeast]: exact shingle resemblance and containment
//     (Broder) by a branch-free merge of the sorted 64-bit shingle sets,
//     about 1.5 µs at 800 shingles each.
//   - [LCS] and [Aligner]: the DUPNIQ alignment (Yalniz, Can, Manmatha,
//     CIKM 2011) of two unique-word sequences. Every word occurs at most
//     once per sequence, so the LCS is a longest increasing subsequence
//     (Hunt–Szymanski), O(n log n) instead of the O(n·m) dynamic program,
//     run only over the words common to both. [CS] and [ITS] normalise its
//     length; [MinLCS] is the lower bound below which a pair is skipped
//     without alignment. The aligned token positions are returned for
//     reporting which passages match.
//   - [EditDistance], [EditSimilarity] and [EditSimilarityAtLeast]:
//     Levenshtein distance over code points by Myers' bit-parallel
//     algorithm in Hyyrö's block form, confined to the diagonal band a
//     threshold allows and stopped once the band exceeds it.
//
// Empty input is never evidence of duplication: two empty shingle sets
// have Jaccard 0, an empty sequence has LCS 0, cs 0 and its 0, two empty
// texts have edit similarity 0. Inputs of any size are accepted; time and
// memory stay O(n log n) and O(n) for sets and sequences (100 000 unique
// words align in about 10 ms), and O(k·n/64) time for an edit threshold
// allowing k edits.
//
// # Concurrency
//
// The package functions, a [Verifier] and a [Pool] are safe for
// concurrent use. An [Aligner] or an [Editor] holds reusable buffers and
// is not; give each goroutine its own.
//
// [Pool.Run] is the verifier stage of the pipeline: it owns a bounded set
// of goroutines for the duration of the call, applies backpressure instead
// of dropping work, returns results in input order, and leaves no
// goroutine behind:
//
//	v, err := verify.New(verify.WebProfile())
//	if err != nil {
//		return err
//	}
//	pool := verify.NewPool(v, 0) // GOMAXPROCS workers
//	g.Go(func() error {
//		defer close(results) // Run never closes its output
//		return pool.Run(ctx, jobs, results)
//	})
package verify
