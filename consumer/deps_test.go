package consumer

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDepsLeaveOutIndex keeps the flow's edges light: the consumers and
// the sinks take the stream's types from stream/, so neither links the
// index, Redis or the HTML extractor.
func TestDepsLeaveOutIndex(t *testing.T) {
	for _, pkg := range []string{".", "../sink"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for dep := range strings.FieldsSeq(string(out)) {
			for _, banned := range []string{"github.com/neardup/neardup/index", "github.com/neardup/neardup/pipeline", "github.com/redis/go-redis", "go-readability", "github.com/neardup/neardup/extract"} {
				if strings.HasPrefix(dep, banned) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
