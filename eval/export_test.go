package eval

import "slices"

// StreamOn is stream for the external tests: Stream on cfg as it is
// (index.url included).
var StreamOn = stream

// Curve returns the result's curve of score s.
func (r *Result) Curve(s Score) Curve { return r.Curves[s] }

// Row returns the row of a category.
func (c *CloughResult) Row(category string) CloughRow {
	return find(c.Rows, func(r CloughRow) bool { return r.Category == category })
}

// find returns the first element of rows that ok accepts, or the zero
// value.
func find[T any](rows []T, ok func(T) bool) T {
	if i := slices.IndexFunc(rows, ok); i >= 0 {
		return rows[i]
	}
	var zero T
	return zero
}

// Class returns the row of a class.
func (l *LicenseResult) Class(class string) ClassRow {
	return find(l.Classes, func(r ClassRow) bool { return r.Class == class })
}
