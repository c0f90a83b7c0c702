// Package consumer feeds documents into the pipeline: from Kafka (a
// franz-go consumer-group member) for the service, and from local files,
// directories and JSON lines for scan. Both produce stream.Items in a
// deterministic order and report rejected inputs as items with a reason,
// never by dropping them. It imports the stream's types (package stream),
// not the pipeline.
package consumer
