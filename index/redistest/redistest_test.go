package redistest

import (
	"runtime"
	"testing"
)

// failRecorder is a TB whose Fatalf and Skip end the calling goroutine and
// record which of the two happened.
type failRecorder struct {
	testing.TB
	failed, skipped bool
}

func (r *failRecorder) Helper()               {}
func (r *failRecorder) Fatalf(string, ...any) { r.failed = true; runtime.Goexit() }
func (r *failRecorder) Skip(...any)           { r.skipped = true; runtime.Goexit() }
func (r *failRecorder) Cleanup(func())        {}
func (r *failRecorder) TempDir() string       { return "" }

// Without redis-server a test is skipped, and under CI it fails.
func TestMissingServerFailsUnderCI(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Run("CI="+ci, func(t *testing.T) {
			t.Setenv("CI", ci)
			t.Setenv("PATH", t.TempDir())
			r := &failRecorder{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				StartServer(r)
			}()
			<-done
			if want := ci != ""; r.failed != want || r.skipped == want {
				t.Errorf("failed %v skipped %v, want failed %v", r.failed, r.skipped, want)
			}
		})
	}
}
