// Package suggest finds the name a user most likely meant: the "did you
// mean" of an unknown flag, command, configuration key or environment
// variable.
package suggest

// MaxEdits is the largest edit distance at which a name is suggested: two
// typos (a doubled, dropped or swapped letter counts one or two).
const MaxEdits = 2

// Closest returns the candidate nearest to word by edit distance, when one
// is within MaxEdits, and "" otherwise. Ties go to the earlier candidate.
func Closest(word string, candidates []string) string {
	best, bestD := "", MaxEdits+1
	for _, c := range candidates {
		if d := Distance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Distance is the Levenshtein distance between a and b, in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
