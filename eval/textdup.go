package eval

import (
	"strings"

	"github.com/neardup/neardup/verify"
)

// The family labels of the license sets call a link wrong when the two
// documents share no family, but texts of different families can be
// near duplicates as texts (JSON is MIT with one sentence more, AGPL-3.0
// is GPL-3.0 with a section more): a text-duplicate detector must link
// them, and the labels count the link wrong. TextDupLinks measures how
// many of the wrong links are such pairs, on the whole texts and
// independently of neardup's sketches, so that the report can say what
// caps the precision the labels allow.

// textShingle is the shingle, in words, of the independent measure: the
// web profile's (verify.DefaultJaccard and verify.DefaultContainment are
// its thresholds, those of the CiteSeerX study).
const textShingle = 5

// TextDupLinks breaks down the judged links of a set by whether the two
// texts are near duplicates as texts: word-5-shingle Jaccard at least
// verify.DefaultJaccard, or containment of either in the other at least
// verify.DefaultContainment.
type TextDupLinks struct {
	// Right and Wrong are the judged links; WrongText those of the wrong
	// links that are near duplicates as texts.
	Right, Wrong, WrongText int
	// ByKind counts the wrong links by kind: all of them and those that
	// are near duplicates as texts.
	ByKind map[string][2]int
}

// Unlabelled returns the link precision when the wrong links that are
// near duplicates as texts are counted as unlabelled (a diagnostic of the
// labels, not a figure of the detector), or 0 with no judged link left.
func (t TextDupLinks) Unlabelled() float64 {
	return ratio(t.Right, t.Right+t.Wrong-t.WrongText)
}

// Ceiling returns the link precision left when every wrong link that is
// not a near duplicate as text is dropped and no right link is: the most
// a rule that keeps the pairs any text-duplicate detector must link can
// reach under the labels.
func (t TextDupLinks) Ceiling() float64 {
	return ratio(t.Right, t.Right+t.WrongText)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// textDupLinks judges every match of events against s's labels and
// measures the wrong ones on the documents' texts.
func textDupLinks(s *Set, events []Event) TextDupLinks {
	t := TextDupLinks{ByKind: map[string][2]int{}}
	texts := map[string][]byte{}
	for _, d := range s.Docs {
		texts[d.ID] = d.Text
	}
	cache := map[string]map[string]struct{}{}
	shingles := func(id string) map[string]struct{} {
		if sh, ok := cache[id]; ok {
			return sh
		}
		sh := wordShingles(string(texts[id]), textShingle)
		cache[id] = sh
		return sh
	}
	for _, ev := range events {
		for _, m := range ev.Matches {
			switch s.Label(ev.ID, m.ID) {
			case Positive:
				t.Right++
			case Negative:
				t.Wrong++
				k := t.ByKind[m.Kind]
				k[0]++
				if nearAsText(shingles(ev.ID), shingles(m.ID)) {
					t.WrongText++
					k[1]++
				}
				t.ByKind[m.Kind] = k
			}
		}
	}
	return t
}

// wordShingles returns the distinct n-word shingles of text after
// plainText (lower-cased [a-z0-9]+ words); a text of fewer than n words
// is one shingle.
func wordShingles(text string, n int) map[string]struct{} {
	w := strings.Fields(plainText(text))
	out := map[string]struct{}{}
	if len(w) > 0 && len(w) < n {
		out[strings.Join(w, " ")] = struct{}{}
	}
	for i := 0; i+n <= len(w); i++ {
		out[strings.Join(w[i:i+n], " ")] = struct{}{}
	}
	return out
}

// textOverlap returns the Jaccard of two shingle sets and the containment
// of each in the other (0 for an empty set).
func textOverlap(a, b map[string]struct{}) (j, ab, ba float64) {
	if len(a) > len(b) {
		j, ba, ab = textOverlap(b, a)
		return j, ab, ba
	}
	in := 0
	for x := range a {
		if _, ok := b[x]; ok {
			in++
		}
	}
	return ratio(in, len(a)+len(b)-in), ratio(in, len(a)), ratio(in, len(b))
}

// nearAsText reports whether two shingle sets are near duplicates at the
// web profile's thresholds.
func nearAsText(a, b map[string]struct{}) bool {
	j, ab, ba := textOverlap(a, b)
	return j >= verify.DefaultJaccard || max(ab, ba) >= verify.DefaultContainment
}
