package pipeline

import (
	"testing"

	"github.com/neardup/neardup/verify"
)

// TestKindsAreVerifyKinds: package stream spells the duplicate kinds out
// (it imports nothing of neardup); they must stay verify's.
func TestKindsAreVerifyKinds(t *testing.T) {
	for _, c := range []struct {
		event string
		kind  verify.Kind
	}{{KindExact, verify.Exact}, {KindNear, verify.Near}, {KindPartial, verify.Partial}} {
		if c.event != string(c.kind) {
			t.Errorf("event kind %q, verify kind %q", c.event, c.kind)
		}
	}
}
