//go:build race

package verify

// raceEnabled turns timing assertions off: the race detector slows code
// 5–20×, unevenly.
const raceEnabled = true
