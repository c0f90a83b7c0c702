package consumer

import (
	"testing"

	"github.com/neardup/neardup/sketch"
)

// TestWorkingMemory: the charge grows with the record, at the measured
// factor up to the sketched part and at the lower one beyond, without a
// step at sketch.MaxSketchBytes.
func TestWorkingMemory(t *testing.T) {
	head := sketch.MaxSketchBytes
	tests := []struct {
		name string
		n    int
		want int64
	}{
		{"empty", 0, 0},
		{"small", 4900, WorkingMemoryFactor * 4900},
		{"at the cap", head, WorkingMemoryFactor * int64(head)},
		{"one byte over", head + 1, WorkingMemoryFactor*int64(head) + WorkingMemoryFactorRest},
		{"16 MiB", 16 << 20, WorkingMemoryFactor*int64(head) + WorkingMemoryFactorRest*int64(16<<20-head)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WorkingMemory(tt.n); got != tt.want {
				t.Errorf("WorkingMemory(%d) = %d, want %d", tt.n, got, tt.want)
			}
		})
	}
	if WorkingMemoryFactorRest > WorkingMemoryFactor || WorkingMemoryFactorRest < 1 {
		t.Errorf("factors %d and %d: the rest must cost less than the sketched part, and something", WorkingMemoryFactor, WorkingMemoryFactorRest)
	}
}
