// Package poll waits in tests for a condition rather than for a time: it
// checks the condition often, returns as soon as it holds, and gives up at
// a deadline. A test that sleeps a fixed time either waits longer than it
// needs or fails on a loaded machine; a test that polls does neither.
//
// Sleeps that are the scenario itself (holding a fault for N seconds,
// pacing a producer, giving a wrong outcome time to show) are not waits
// for a condition and stay as time.Sleep, each with a comment saying so.
package poll

import (
	"testing"
	"time"
)

// Interval bounds the time between two checks of [Wait] and [Until]: the
// first comes after 5 ms, each later one after twice the last, up to
// Interval. A condition that costs much to check (reading a whole topic)
// takes a longer bound by [WaitEvery] or [UntilEvery].
const Interval = 50 * time.Millisecond

// Wait checks cond until it returns true or timeout passes, and reports
// whether it held. cond runs at once and then with growing pauses (see
// [Interval]); it runs on the caller's goroutine.
func Wait(timeout time.Duration, cond func() bool) bool {
	return WaitEvery(timeout, Interval, cond)
}

// WaitEvery is [Wait] with pauses growing to every rather than [Interval].
func WaitEvery(timeout, every time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	pause := min(5*time.Millisecond, every)
	for {
		if cond() {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, every)
	}
}

// Until checks cond until it returns nil and fails t if it has not by
// timeout, with the last error cond returned: the error says what the
// test saw, so the failure reads as the state that did not come.
func Until(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	UntilEvery(t, timeout, Interval, cond)
}

// UntilEvery is [Until] with pauses growing to every rather than [Interval].
func UntilEvery(t testing.TB, timeout, every time.Duration, cond func() error) {
	t.Helper()
	var last error
	if !WaitEvery(timeout, every, func() bool { last = cond(); return last == nil }) {
		t.Fatalf("after %v: %v", timeout, last)
	}
}
