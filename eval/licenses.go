package eval

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// License classes: what a license document is, which decides what the
// stream should do with it.
const (
	// classReference is a license text of the SPDX list.
	classReference = "reference"
	// classFull is a test file that is one license's text (reflowed, with
	// a copyright line, small wording changes): licensecheck expects one
	// license over at least 90% of it. It should be linked to its license.
	classFull = "full"
	// classEmbedded is a license inside a longer file: licensecheck
	// expects the license to cover less than 90% of it, or expects two
	// licenses. It should be linked to its license as a partial
	// duplicate.
	classEmbedded = "embedded"
	// classNotice is a short notice that points to a license (kinds
	// *-Header, *-Short, *-Notice, or a file in which licensecheck expects
	// only license URLs): not a copy of the license text, so no link is
	// expected; a link to its license is still right.
	classNotice = "notice"
	// classNone is a file in which licensecheck expects no license (a
	// modified or broken text): unlabelled.
	classNone = "none"
)

// embeddedCoverage is the expected coverage below which a license is
// taken as embedded in a longer file.
const embeddedCoverage = 90

// licenseLabel is what the labels say about one license document.
type licenseLabel struct {
	class string
	// keys are the license texts the document is or contains: SPDX ids
	// lower-cased without -only, -or-later and +, and ids whose texts are
	// identical merged into one key.
	keys []string
	// families are the coarse families of those licenses (GPL, BSD,
	// CC-BY, MIT), the weak labels clusters are judged against.
	families []string
	variant  *licenseVariant
	spdxID   string
}

// licenseFamily returns the family of an SPDX id, the weak label the
// spdx-license-texts README suggests (GPL-*, BSD-*, CC-BY-*): its first
// dash-separated part (GPL, BSD, MIT, OLDAP), or its first two for
// Creative Commons ids (CC-BY, CC-SA), lower-cased.
func licenseFamily(id string) string {
	parts := strings.Split(strings.TrimRight(strings.ToLower(id), "+"), "-")
	if parts[0] == "cc" && len(parts) > 1 {
		return parts[0] + "-" + parts[1]
	}
	return parts[0]
}

// licenseKey returns an SPDX id without the -only, -or-later and +
// suffixes, which name one license text, lower-cased.
func licenseKey(id string) string {
	k := strings.ToLower(id)
	for _, suf := range []string{"-only", "-or-later", "+"} {
		k = strings.TrimSuffix(k, suf)
	}
	return k
}

var wordRE = regexp.MustCompile(`[a-z0-9]+`)

// plainText is an independent normalization for telling identical
// license texts apart: lower-cased [a-z0-9]+ tokens joined by spaces.
func plainText(s string) string {
	return strings.Join(wordRE.FindAllString(strings.ToLower(s), -1), " ")
}

// spdxKeys maps every SPDX id to its license key, merging the keys of
// ids whose texts are identical after plainText (GFDL-1.2 and
// GFDL-1.2-invariants-only, SMLNJ and StandardML-NJ).
func spdxKeys(spdx []spdxLicense) map[string]string {
	parent := map[string]string{}
	var find func(string) string
	find = func(k string) string {
		if p, ok := parent[k]; ok && p != k {
			r := find(p)
			parent[k] = r
			return r
		}
		return k
	}
	union := func(a, b string) {
		ra, rb := find(a), find(b)
		if ra != rb {
			parent[max(ra, rb)] = min(ra, rb) // the smaller key names the group
		}
	}
	byText := map[string]string{}
	for _, l := range spdx {
		k := licenseKey(l.ID)
		parent[k] = find(k)
		t := plainText(l.Text)
		if other, ok := byText[t]; ok {
			union(k, other)
		} else {
			byText[t] = k
		}
	}
	out := map[string]string{}
	for _, l := range spdx {
		out[l.ID] = find(licenseKey(l.ID))
	}
	return out
}

// classify returns the class of a licensecheck test file; textKeys are
// the license texts of its matches that are not URLs.
func classify(v *licenseVariant, textKeys []string) string {
	switch {
	case len(v.Matches) == 0:
		return classNone
	case len(textKeys) == 0 || strings.Contains(v.Kind, "-Header") || strings.Contains(v.Kind, "-Short") || strings.Contains(v.Kind, "Notice"):
		return classNotice
	case v.Coverage < embeddedCoverage || len(textKeys) > 1:
		return classEmbedded
	}
	return classFull
}

// licenseLabelFunc labels a link between two license documents: a
// license text in common is positive, no family in common negative, and
// a document without a license, or two licenses of one family (MIT and
// MIT-0, BSD-3-Clause and BSD-3-Clause-Clear), unlabelled. With
// refsUnlabelled, links between two reference texts are unlabelled too
// (the licensecheck set judges the test files; the spdx set judges the
// references).
func licenseLabelFunc(labels map[string]licenseLabel, refsUnlabelled bool) func(later, earlier string) Label {
	return func(later, earlier string) Label {
		a, b := labels[later], labels[earlier]
		switch {
		case len(a.keys) == 0 || len(b.keys) == 0:
			return Unlabelled
		case refsUnlabelled && a.class == classReference && b.class == classReference:
			return Unlabelled
		case intersects(a.keys, b.keys):
			return Positive
		case !intersects(a.families, b.families):
			return Negative
		}
		return Unlabelled
	}
}

func intersects(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

func appendUnique(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

func referenceDocs(spdx []spdxLicense, keyOf map[string]string, labels map[string]licenseLabel) []Doc {
	docs := make([]Doc, 0, len(spdx))
	for _, l := range spdx {
		id := "spdx/" + l.ID
		docs = append(docs, Doc{ID: id, Text: []byte(l.Text)})
		labels[id] = licenseLabel{class: classReference, keys: []string{keyOf[l.ID]}, families: []string{licenseFamily(l.ID)}, spdxID: l.ID}
	}
	return docs
}

// expectLinks adds, for every document of a class in want, the earlier
// documents of a class in from that share a license text with it.
func expectLinks(s *Set, want, from []string) {
	for i, d := range s.Docs {
		l := s.licenses[d.ID]
		if !slices.Contains(want, l.class) {
			continue
		}
		var earlier []string
		for _, e := range s.Docs[:i] {
			if el := s.licenses[e.ID]; slices.Contains(from, el.class) && intersects(l.keys, el.keys) {
				earlier = append(earlier, e.ID)
			}
		}
		if len(earlier) > 0 {
			s.Expected = append(s.Expected, Expect{Later: d.ID, Earlier: earlier})
		}
	}
}

// labelledPairs yields the pairs (a, b) for a in later and b in earlier
// (b before a when both lists are one) whose label is not Unlabelled.
func labelledPairs(s *Set, later, earlier []string) func(func(string, string) bool) {
	same := slices.Equal(later, earlier)
	return func(yield func(string, string) bool) {
		for i, a := range later {
			bs := earlier
			if same {
				bs = earlier[:i]
			}
			for _, b := range bs {
				if s.Label(a, b) != Unlabelled && !yield(a, b) {
					return
				}
			}
		}
	}
}

func buildSPDX(dir string) (*Set, error) {
	spdx, err := loadSPDX(dir)
	if err != nil {
		return nil, err
	}
	s := &Set{Name: setSPDX, licenses: map[string]licenseLabel{}}
	s.Docs = referenceDocs(spdx, spdxKeys(spdx), s.licenses)
	s.Order = fmt.Sprintf("the %d license texts in SPDX id order", len(s.Docs))
	s.Label = licenseLabelFunc(s.licenses, false)
	expectLinks(s, []string{classReference}, []string{classReference})
	ids := docIDs(s.Docs)
	s.Pairs = labelledPairs(s, ids, ids)
	s.PairsDoc = "every pair of license texts: one license text (ids that differ by -only, -or-later or +, or whose texts are identical) is positive; licenses of different families (GPL, BSD, CC-BY, …) are negative; two licenses of one family are left out"
	return s, nil
}

func buildLicensecheck(dir string, spdx []spdxLicense) (*Set, error) {
	lc, err := loadLicensecheck(dir)
	if err != nil {
		return nil, err
	}
	keyOf := spdxKeys(spdx)
	s := &Set{Name: setLicensecheck, licenses: map[string]licenseLabel{}}
	s.Docs = referenceDocs(spdx, keyOf, s.licenses)
	var refs, variants []string
	for _, d := range s.Docs {
		refs = append(refs, d.ID)
	}
	for i := range lc.Variants {
		v := &lc.Variants[i]
		var l licenseLabel
		var textKeys []string
		for _, m := range v.Matches {
			k, ok := keyOf[m.Name]
			if !ok {
				k = licenseKey(m.Name)
			}
			l.keys = appendUnique(l.keys, k)
			l.families = appendUnique(l.families, licenseFamily(m.Name))
			if !m.IsURL {
				textKeys = appendUnique(textKeys, k)
			}
		}
		l.class, l.variant = classify(v, textKeys), v
		id := "licensecheck/" + v.File
		s.licenses[id] = l
		s.Docs = append(s.Docs, Doc{ID: id, Text: v.Text})
		if l.class == classFull || l.class == classEmbedded {
			variants = append(variants, id)
		}
	}
	s.Label = licenseLabelFunc(s.licenses, true)
	copies := []string{classFull, classEmbedded}
	if len(spdx) > 0 {
		s.Order = fmt.Sprintf("the %d SPDX license texts in id order (the list a crawler knows first), then the %d test files in name order (Kind.tN by kind, then N)", len(refs), len(lc.Variants))
		expectLinks(s, copies, append([]string{classReference}, copies...))
		s.Pairs = labelledPairs(s, variants, refs)
		s.PairsDoc = "every (test file, SPDX text) combination for the test files of class full and embedded: the file's license text is positive, a license of another family negative, another license of the file's family left out"
	} else {
		s.Order = fmt.Sprintf("the %d test files in name order (Kind.tN by kind, then N); %s is absent, so there are no reference texts", len(lc.Variants), setSPDX)
		expectLinks(s, copies, copies)
		s.Pairs = labelledPairs(s, variants, variants)
		s.PairsDoc = "every pair of test files of class full and embedded: one license text in common is positive, no family in common negative"
	}
	return s, nil
}

func docIDs(docs []Doc) []string {
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	return ids
}
