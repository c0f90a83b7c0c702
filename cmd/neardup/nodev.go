//go:build nodev

package main

import (
	"context"
	"io"
)

// The nodev build (go build -tags nodev ./cmd/neardup: the image's, make
// image's) is the service's binary: serve, scan, check, delete, compare,
// lexicon, config and version. It leaves out the development commands,
// whose code links an embedded Kafka broker (kfake), plotting (gonum/plot
// and its fonts), profiling and the benchmark harness.

func runDemo(_ context.Context, _ []string, _, _ io.Writer) error { return notInBuild("demo") }

func runBench(_ context.Context, _ []string, _, _ io.Writer) error { return notInBuild("bench") }

func runEval(_ context.Context, _ []string, _, _ io.Writer) error { return notInBuild("eval") }

func notInBuild(name string) error {
	return usagef("%s is not in this build of neardup (built with -tags nodev, as the image is); build it in: go build ./cmd/neardup", name)
}
