package main

import (
	"os"
	"testing"
)

func writeFile(path, body string) error { return os.WriteFile(path, []byte(body), 0o600) }

// contractTest marks a test of the command line's contract (messages, exit
// codes, help, the docs' outputs and recipes): serial code that make unit
// runs; the race run (-short) skips it, as it has nothing for the race
// detector and costs several times its time there.
func contractTest(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("a test of the command line's contract: make unit runs it")
	}
}
