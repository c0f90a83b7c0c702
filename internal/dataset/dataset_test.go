package dataset

import (
	"fmt"
	"runtime"
	"testing"
)

// outcome records how a fake test ended.
type outcome struct {
	testing.TB
	failed, skipped bool
	msg             string
}

func (o *outcome) Helper() {}

func (o *outcome) Fatalf(format string, args ...any) {
	o.failed, o.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (o *outcome) Skip(args ...any) {
	o.skipped, o.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}

func (o *outcome) Skipf(format string, args ...any) {
	o.skipped, o.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// runFake calls f with a fake TB in a goroutine of its own (Fatalf and Skip
// end it, as they end a test) and returns how it ended.
func runFake(t testing.TB, f func(testing.TB)) *outcome {
	o := &outcome{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(o)
	}()
	<-done
	return o
}

// A missing data set skips the test on a developer's machine and fails it
// under CI.
func TestMissingFailsUnderCI(t *testing.T) {
	for _, tc := range []struct {
		ci         string
		fail, skip bool
	}{
		{"", false, true},
		{"false", false, true},
		{"true", true, false},
		{"1", true, false},
	} {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			t.Setenv("NEARDUP_DATA", t.TempDir()) // an empty data folder
			o := runFake(t, func(tb testing.TB) { Dir(tb, "gutenberg-editions") })
			if o.failed != tc.fail || o.skipped != tc.skip {
				t.Errorf("failed %v skipped %v (%q), want failed %v skipped %v", o.failed, o.skipped, o.msg, tc.fail, tc.skip)
			}
		})
	}
}

func TestDirFound(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("NEARDUP_DATA", dir)
	o := runFake(t, func(tb testing.TB) {
		if got := Dir(tb, "."); got != dir {
			t.Errorf("Dir = %q, want %q", got, dir)
		}
	})
	if o.failed || o.skipped {
		t.Errorf("present data: failed %v skipped %v: %s", o.failed, o.skipped, o.msg)
	}
}
