// Package eval measures neardup against labelled data: loaders for the
// third-party evaluation sets in shared/data (read in place, never copied
// into the repository) and the measures they are judged by, such as the
// PAN text-alignment measures for copied passages.
package eval
