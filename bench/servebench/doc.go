// Package servebench measures the neardup service end to end (what
// `neardup bench serve` prints): for each index kind, the sustained
// documents/s and CPU per document of the service reading Kafka (neardup's
// process by getrusage, redis-server's by INFO cpu), the same documents
// through scan's path, and the latency from a record's timestamp to its
// event at a fraction of the sustained rate.
//
// The Kafka broker runs in a process of its own (Options.BrokerCommand,
// which runs [RunBroker]), so that its CPU is not counted. The documents
// come from a corpus of package bench/corpus, real text by default.
package servebench
