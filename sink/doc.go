// Package sink writes neardup's outputs: verdict events and dead letters,
// as JSON lines to a file or stream (the local scan), or to Kafka topics
// (the service).
package sink
