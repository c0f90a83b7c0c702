package eval

// StreamOn is stream for the external tests: Stream on cfg as it is
// (index.url included).
var StreamOn = stream
