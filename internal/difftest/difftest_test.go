package difftest

import "testing"

func TestFirstLine(t *testing.T) {
	for _, tt := range []struct {
		got, want string
		line      int
		a, b      string
	}{
		{"x\ny", "x\ny", 0, "", ""},
		{"x\ny", "x\nz", 2, "y", "z"},
		{"x\ny\n", "x\ny", 3, "", NoLine},
		{"x", "x\ny", 2, NoLine, "y"},
		{"", "a", 1, "", "a"},
	} {
		line, a, b := FirstLine(tt.got, tt.want)
		if line != tt.line || a != tt.a || b != tt.b {
			t.Errorf("FirstLine(%q, %q) = %d, %q, %q, want %d, %q, %q", tt.got, tt.want, line, a, b, tt.line, tt.a, tt.b)
		}
	}
}
