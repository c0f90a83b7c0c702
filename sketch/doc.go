// Package sketch turns document text into the compact features neardup
// compares: normalized word tokens, hashed word shingles, MinHash signatures
// (classic K-permutation and one-permutation with densification), LSH band
// keys, SimHash-64 fingerprints, I-Match digests and the DUPNIQ sequence of
// unique words.
//
// Everything here is pure and deterministic: the same bytes, configuration
// and seed give the same features on every run and machine. The hash that
// stored signatures depend on is frozen (see [TokenHash]) and pinned by
// golden tests; changing it invalidates every index built before.
//
// A [Sketcher] owns reusable buffers so the per-document hot path allocates
// nothing after warm-up. A Sketcher is not safe for concurrent use; give each
// worker its own. [Config], [Lexicon] and [Params] values are read-only and
// may be shared.
package sketch
