// Package suggest finds the name a user most likely meant: the "did you
// mean" of an unknown flag, command, configuration key or environment
// variable.
package suggest

import "github.com/neardup/neardup/verify"

// MaxEdits is the largest edit distance at which a name is suggested: two
// typos (a doubled, dropped or swapped letter counts one or two).
const MaxEdits = 2

// Closest returns the candidate nearest to word by edit distance (the
// Levenshtein distance the sentence lane verifies with,
// [verify.EditDistance]), when one is within MaxEdits, and "" otherwise.
// Ties go to the earlier candidate.
func Closest(word string, candidates []string) string {
	var e verify.Editor
	best, bestD := "", MaxEdits+1
	for _, c := range candidates {
		if d := e.Distance([]byte(word), []byte(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
