// Package stream holds the types that flow through neardup, and their JSON:
// documents in ([Document], decoded from the input contract by [Decoder]),
// wrapped with where they came from as [Item]s; and verdicts out ([Event],
// with its [Match]es and [Scores]) or rejected inputs ([DeadLetter], with a
// [Reason]), each wrapped as an [Output].
//
// It is a leaf: the consumers that make Items (package consumer), the
// pipeline that turns them into Outputs (package pipeline) and the sinks
// that write them (package sink) all import it, and it imports none of
// them, nor the index or any client library. docs/event.schema.json and
// docs/dead-letter.schema.json describe the JSON of Event and DeadLetter.
package stream
