// Package pipeline is neardup's decision: it turns documents into verdicts.
// Each document is decoded, normalized and sketched, looked up in and added
// to the band index in one atomic step, its candidates are verified in the
// parallel verifier pool, and a verdict event says whether it is an exact,
// near or partial duplicate of an earlier document, of which one, and on
// what evidence.
//
// The local command (neardup scan) and the Kafka service (neardup serve)
// both drive a [Pipeline] through [Pipeline.Run], so the same input gives
// the same verdicts on a laptop and on a fleet. Per-document order is kept:
// outputs leave in input order, while sketching and verification run in
// parallel across documents.
package pipeline
