package poll

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestWait(t *testing.T) {
	tests := []struct {
		name    string
		holdsAt int // the call from which cond holds; 0: never
		want    bool
	}{
		{"at once", 1, true},
		{"on the fifth check", 5, true},
		{"never", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			got := Wait(300*time.Millisecond, func() bool {
				calls++
				return tt.holdsAt > 0 && calls >= tt.holdsAt
			})
			if got != tt.want {
				t.Fatalf("Wait = %v after %d calls, want %v", got, calls, tt.want)
			}
			if tt.want && calls != tt.holdsAt {
				t.Errorf("%d calls, want %d: Wait goes on after the condition holds", calls, tt.holdsAt)
			}
			if !tt.want && calls < 4 {
				t.Errorf("%d calls in 300ms: Wait does not check often", calls)
			}
		})
	}
}

// recorder is a testing.TB that keeps the failure instead of ending the test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

func TestUntilReportsLastState(t *testing.T) {
	r := &recorder{TB: t}
	n := 0
	Until(r, 50*time.Millisecond, func() error {
		n++
		return fmt.Errorf("%d of 3 documents decided", min(n, 2))
	})
	if want := "2 of 3 documents decided"; r.failed == "" || !strings.Contains(r.failed, want) {
		t.Fatalf("failure %q, want it to name the last state %q", r.failed, want)
	}
	r.failed = ""
	Until(r, time.Second, func() error { return nil })
	if r.failed != "" {
		t.Fatalf("failed %q on a condition that holds", r.failed)
	}
}
