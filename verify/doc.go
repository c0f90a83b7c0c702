// Package verify decides whether a candidate proposed by the LSH index is
// really a duplicate of an incoming document, by exact comparison of their
// stored [sketch.Features], and says which check decided.
//
// LSH buckets only propose candidates: MinHash banding admits pairs well
// below the target resemblance and misses none above it, so every
// candidate is verified here on the full features.
//
// # Building blocks
//
// Pure functions over feature slices, usable on their own:
//
//   - [Jaccard], [Containment] and their early-exit forms [JaccardAtLeast]
//     and [ContainmentAtLeast]: exact shingle resemblance and containment
//     (Broder) by a branch-free merge of the sorted 64-bit shingle sets.
//   - [LCS] and [Aligner]: the DUPNIQ alignment (Yalniz, Can, Manmatha)
//     of two unique-word sequences. Every word occurs at most once per
//     sequence, so the LCS is a longest increasing subsequence
//     (Hunt–Szymanski), O(n log n) instead of the O(n·m) dynamic program,
//     run only over the words common to both. [CS] and [ITS] normalise its
//     length; [MinLCS] is the lower bound below which a pair is skipped
//     without alignment.
//   - [EditDistance], [EditSimilarity] and [EditSimilarityAtLeast]:
//     Levenshtein distance over code points by Myers' bit-parallel
//     algorithm in Hyyrö's block form, banded at a threshold.
//
// Empty input is never evidence of duplication: two empty shingle sets
// have Jaccard 0, an empty sequence has LCS 0 and its 0, two empty texts
// have edit similarity 0.
//
// Concurrency: the package functions are safe for concurrent use. An
// [Aligner] or an [Editor] holds reusable buffers and is not; give each
// goroutine its own.
package verify
