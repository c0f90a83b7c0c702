// Package difftest tells tests where a text they generated parts from the
// one committed: the first line that differs, for a message a person can
// act on without a diff tool.
package difftest

import "strings"

// FirstLine returns the 1-based number of the first line where got and
// want differ and both sides of it (a side that has no such line reads
// [NoLine]), or 0 when the texts are equal.
func FirstLine(got, want string) (line int, gotLine, wantLine string) {
	if got == want {
		return 0, "", ""
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(gl), len(wl)) {
		a, b := NoLine, NoLine
		if i < len(gl) {
			a = gl[i]
		}
		if i < len(wl) {
			b = wl[i]
		}
		if a != b {
			return i + 1, a, b
		}
	}
	// Unreachable: texts that differ differ in some line.
	return 1, got, want
}

// NoLine stands for the line a text does not have.
const NoLine = "(no such line)"
