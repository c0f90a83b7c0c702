package verify

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/neardup/neardup/sketch"
)

// Kind is a verdict: how a candidate duplicates the document.
type Kind string

const (
	// Exact: the same normalized text.
	Exact Kind = "exact"
	// Near: the same document with small differences.
	Near Kind = "near"
	// Partial: a substantial part in common, such as a page quoted inside
	// a longer one or a book reprinted inside an anthology.
	Partial Kind = "partial"
	// Distinct: no check found a duplicate.
	Distinct Kind = "distinct"
)

// Method names a check. It is also the verdict's "method".
type Method string

const (
	// MethodExact fires on equal normalized texts: equal content digests of
	// the whole token stream ([sketch.Features].Content), never on a
	// sample. It costs one comparison and catches republished copies
	// before any scoring.
	MethodExact Method = "exact"
	// MethodIMatch fires on equal I-Match digests (Chowdhury et al.); it
	// does not apply when either document has none.
	MethodIMatch Method = "imatch"
	// MethodSimHash fires when the SimHash fingerprints differ in at most
	// Threshold bits (Manku et al.).
	MethodSimHash Method = "simhash"
	// MethodJaccard fires when the exact shingle resemblance reaches
	// Threshold.
	MethodJaccard Method = "jaccard"
	// MethodContainment fires when either document's shingles are found in
	// the other in a fraction at least Threshold.
	MethodContainment Method = "containment"
	// MethodLCS fires when the DUPNIQ score named by Check.Score, over the
	// unique-word sequences, reaches Threshold.
	MethodLCS Method = "lcs"
	// MethodEdit fires when the edit similarity of the kept texts
	// ([sketch.Features].Text) reaches Threshold; it does not apply when
	// either text is missing.
	MethodEdit Method = "edit"
	// MethodPassage fires when passage alignment ([PassageAligner], on
	// the documents' [sketch.Passage] sections) finds passages of at least
	// Check.MinShared aligned shingles each, and the aligned share of
	// either document reaches Threshold (0: any share). It does not apply
	// when either document has no passage section.
	MethodPassage Method = "passage"
)

// Thresholds of the built-in profiles, with where they come from.
const (
	// DefaultJaccard is the shingle resemblance of a near duplicate: with
	// 5-word shingles and R = 0.5, the CiteSeerX study (Williams, Giles)
	// measured its best F-measure, 0.99 (precision 1.0, recall 0.98).
	DefaultJaccard = 0.5
	// DefaultContainment is the containment of a partial duplicate. The
	// seeds give no number; 0.8 means four fifths of the smaller page's
	// 5-word shingles appear in the larger one, which boilerplate alone
	// rarely achieves once pages are long enough (see web's MinSize),
	// while a quoted page keeps it after light edits.
	DefaultContainment = 0.8
	// BooksJaccard is the resemblance of two editions of a book: well below
	// the 0.89 of the least similar Gutenberg edition pair in shared/data,
	// and in the middle of the gap between a copy with 3% of its words
	// edited (0.67–0.84) and a book with a fifth of its text replaced and
	// 1% character noise (0.44–0.56), measured on 1,600 generated pairs of
	// 1,500–3,000 words (internal/synth seeds 1–4; 0.7, the earlier value,
	// called 9% of such copies partial).
	BooksJaccard = 0.6
	// DefaultPassageShared is the fewest aligned shingles of a passage
	// that counts (per passage, with 5-word shingles: 24 words in common).
	// Measured with the web profile's 40-word passage lane: on Clough and
	// Stevenson's short answers 17 of the 19 cut answers are linked to
	// their source and no answer written independently is (floors 15 to
	// 30 give the same), on the Gutenberg editions exactly the five
	// edition pairs (floors 20 to 50), and on PAN 2013 (no obfuscation)
	// 500 of 500 pairs with passage precision and recall about 0.93
	// (docs/design.md, "Partial duplicates").
	DefaultPassageShared = 20
	// DefaultHamming is the SimHash distance of a near duplicate: k = 3,
	// the optimum both for web pages (Manku et al.) and for CiteSeerX
	// papers (F 0.91, precision 0.94).
	DefaultHamming = 3
)

// Check is one step of a verification cascade.
type Check struct {
	// Method is the comparison.
	Method Method `json:"method"`
	// Kind is the verdict when the check fires; empty means Exact for
	// MethodExact, Partial for MethodContainment and MethodLCS, and Near
	// for the others.
	Kind Kind `json:"kind,omitempty"`
	// Threshold is the score at or above which the check fires, in (0, 1];
	// for MethodSimHash the largest Hamming distance that fires, 0 to 64;
	// unused by MethodExact and MethodIMatch.
	Threshold float64 `json:"threshold,omitempty"`
	// Score selects the DUPNIQ score of MethodLCS: ScoreITS (default) or
	// ScoreCS. Both are reported whenever the alignment runs.
	Score Score `json:"score,omitempty"`
	// MinSize skips the check when the smaller document has fewer items:
	// shingles for Jaccard and containment, unique words for LCS, bytes of
	// text for edit. Small inputs make these scores noisy.
	MinSize int `json:"min_size,omitempty"`
	// MaxSize skips MethodEdit when the longer text has more bytes, which
	// bounds its cost (0: no limit).
	MaxSize int `json:"max_size,omitempty"`
	// MinShared is MethodPassage's floor: aligned shingles per passage
	// (default [DefaultPassageShared]).
	MinShared int `json:"min_shared,omitempty"`
	// Asymmetric makes MethodContainment fire only when one document is
	// contained in the other (containment ≥ Threshold) and is also clearly
	// the smaller one (fewer than Threshold times the other's shingles): a
	// page inside a longer page, rather than two near-identical pages of
	// about the same length, which a later check calls near.
	Asymmetric bool `json:"asymmetric,omitempty"`
}

// kind returns the verdict the check gives when it fires.
func (c Check) kind() Kind {
	switch {
	case c.Kind != "":
		return c.Kind
	case c.Method == MethodExact:
		return Exact
	case c.Method == MethodContainment || c.Method == MethodLCS || c.Method == MethodPassage:
		return Partial
	}
	return Near
}

// score returns the DUPNIQ score of an LCS check.
func (c Check) score() Score {
	if c.Score == "" {
		return ScoreITS
	}
	return c.Score
}

// Profile is an ordered cascade of checks: the first check that fires
// decides the verdict, and a candidate no check accepts is Distinct.
// Cheap and strict checks go first, so most duplicates are decided before
// the costly ones run.
type Profile struct {
	Name   string  `json:"name"`
	Checks []Check `json:"checks"`
	// Sentences, when set, also matches the sentences of the two
	// documents (sentence mode): [Verdict.Sentences].
	Sentences *SentenceCheck `json:"sentences,omitempty"`
}

// ErrUnknownProfile is returned by [ProfileByName] for a name it does not
// know.
var ErrUnknownProfile = errors.New("verify: unknown profile")

// ProfileByName returns the built-in profile "web", "books" or "sentence".
// Each call returns a fresh copy that the caller may change.
func ProfileByName(name string) (Profile, error) {
	switch name {
	case "web":
		return WebProfile(), nil
	case "books":
		return BooksProfile(), nil
	case "sentence":
		return SentenceProfile(), nil
	}
	return Profile{}, fmt.Errorf("%w %q: want web, books or sentence", ErrUnknownProfile, name)
}

// WebProfile is for crawled pages:
//
//  1. exact — the same normalized text, the republished copy.
//  2. jaccard ≥ [DefaultJaccard] → near — 5-word shingle resemblance
//     (exact on the stored sample, see [sketch.Limits]), the CiteSeerX
//     optimum (precision 1.0, recall 0.98). SimHash is not used: at its
//     best k = 3 it reached only 0.94 precision there, and the resemblance
//     costs about 1.5 µs at 800 shingles. It runs before the partial
//     checks: a page that is the same document as the candidate is near,
//     whatever else it contains.
//  3. containment ≥ [DefaultContainment] either way → partial, when the
//     smaller page has at least 50 shingles — most of one page inside
//     another (a story inside a digest). Below about 50 shingles a page is
//     mostly navigation and boilerplate; step 4 covers short texts.
//  4. passage → partial — passages of at least [DefaultPassageShared]
//     aligned shingles found by winnowing anchors and extended along the
//     text (an article quoted inside a longer page, a source pasted into
//     an essay), however small a share of either document they are, and
//     however short the document (a 200-word answer inside a 2,000-word
//     article).
//
// An equal I-Match digest does not decide: a text with its sentences
// shuffled, or a news item with two names swapped, keeps its digest (the
// digest is over the set of mid-idf words). The index still returns the
// first document with the same digest as a candidate, which the checks
// above verify like any other (docs/design.md, "I-Match").
func WebProfile() Profile {
	return Profile{Name: "web", Checks: []Check{
		{Method: MethodExact},
		{Method: MethodJaccard, Threshold: DefaultJaccard},
		{Method: MethodContainment, Threshold: DefaultContainment, MinSize: 50},
		{Method: MethodPassage, MinShared: DefaultPassageShared},
	}}
}

// BooksProfile is for long OCR'd text, after DUPNIQ (Yalniz, Can,
// Manmatha, CIKM 2011):
//
//  1. exact.
//  2. jaccard ≥ [BooksJaccard] → near — clean editions of one work
//     share most 5-word shingles (the five Gutenberg edition pairs in
//     shared/data: 0.89–0.97; a copy with 3% of its words edited, 0.67–0.84),
//     while a book with a fifth of it replaced still shares about half
//     (0.44–0.56) and is a partial duplicate, not an edition.
//  3. lcs its ≥ [DefaultITS] → partial, when the smaller book has at
//     least 100 unique words — DUPNIQ-its, the paper's best score on its
//     training, 1K, 3K and partial-duplicate sets; it survives OCR noise
//     that breaks shingles, and it rewards a long shared passage even
//     when one book is much longer. Below about 100 unique words (a few
//     pages) chance alignments score high: two 20-word sequences sharing
//     12 words in order already reach its 0.75. cs is computed and
//     reported too; a cascade may add {lcs, cs, [DefaultCS]}.
//
// I-Match and SimHash are left out: the DUPNIQ study found I-Match poor
// on books, whose OCR errors land at every idf, and on the data here an
// equal digest never marked an edition or a planted duplicate that was
// not an exact copy (docs/design.md, "I-Match").
func BooksProfile() Profile {
	return Profile{Name: "books", Checks: []Check{
		{Method: MethodExact},
		{Method: MethodJaccard, Threshold: BooksJaccard},
		{Method: MethodLCS, Score: ScoreITS, Threshold: DefaultITS, MinSize: 100},
	}}
}

// SentenceProfile is for short texts, after the Wikipedia similar-sentence
// study (Ayhan, Bradley, Weissman), which bands character-shingle MinHash
// and then filters pairs by edit distance:
//
//  1. exact.
//  2. edit ≥ [DefaultEdit] → near — normalized edit distance e ≤ 0.25,
//     the study's "good pair" cut-off, on [sketch.Features].Text. Texts
//     over 4096 bytes are skipped, which bounds the check at about
//     100 µs.
//
// It needs the sketch to keep texts ([sketch.Config].KeepText); without
// them no check applies and every candidate is Distinct.
func SentenceProfile() Profile {
	return Profile{Name: "sentence", Checks: []Check{
		{Method: MethodExact},
		{Method: MethodEdit, Threshold: DefaultEdit, MaxSize: 4096},
	}}
}

// Thresholds overrides the thresholds of a profile; see
// [Profile.WithThresholds]. Zero fields keep the profile's values.
type Thresholds struct {
	Jaccard     float64
	Containment float64
	ITS         float64
	CS          float64
	Edit        float64
}

// WithThresholds returns a copy of p with the non-zero thresholds of t
// applied to every check that uses that score. A threshold for a score
// that p does not check adds that check at the end of the cascade (an LCS
// check with MinSize 100, as in [BooksProfile]), so a configured threshold
// is never silently ignored.
func (p Profile) WithThresholds(t Thresholds) Profile {
	p.Checks = slices.Clone(p.Checks)
	set := func(m Method, s Score, v float64) {
		if v == 0 {
			return
		}
		found := false
		for i, c := range p.Checks {
			if c.Method == m && (m != MethodLCS || c.score() == s) {
				p.Checks[i].Threshold = v
				found = true
			}
		}
		if !found {
			c := Check{Method: m, Threshold: v}
			switch m {
			case MethodLCS:
				c.Score, c.MinSize = s, 100
			case MethodContainment:
				c.MinSize = 50
			case MethodEdit:
				c.MaxSize = 4096
			}
			p.Checks = append(p.Checks, c)
		}
	}
	set(MethodJaccard, "", t.Jaccard)
	set(MethodContainment, "", t.Containment)
	set(MethodLCS, ScoreITS, t.ITS)
	set(MethodLCS, ScoreCS, t.CS)
	set(MethodEdit, "", t.Edit)
	return p
}

// validate reports the first invalid check.
func (p Profile) validate() error {
	if len(p.Checks) == 0 {
		return fmt.Errorf("verify: profile %q has no checks", p.Name)
	}
	for i, c := range p.Checks {
		bad := func(what string, v any, want string) error {
			return fmt.Errorf("verify: profile %q check %d (%s): %s %v: want %s", p.Name, i, c.Method, what, v, want)
		}
		switch c.Method {
		case MethodExact, MethodIMatch:
		case MethodSimHash:
			if c.Threshold < 0 || c.Threshold > 64 || c.Threshold != math.Trunc(c.Threshold) {
				return bad("threshold", c.Threshold, "an integer Hamming distance 0..64")
			}
		case MethodJaccard, MethodContainment, MethodEdit, MethodLCS:
			if !(c.Threshold > 0 && c.Threshold <= 1) {
				return bad("threshold", c.Threshold, "(0, 1]")
			}
		case MethodPassage:
			if c.Threshold < 0 || c.Threshold > 1 {
				return bad("threshold", c.Threshold, "[0, 1]")
			}
			if c.MinShared < 0 {
				return bad("min_shared", c.MinShared, ">= 0")
			}
		default:
			return bad("method", c.Method, "exact, imatch, simhash, jaccard, containment, lcs, edit or passage")
		}
		if c.Score != "" && (c.Method != MethodLCS || c.Score != ScoreITS && c.Score != ScoreCS) {
			return bad("score", c.Score, `"its" or "cs", on an lcs check only`)
		}
		switch c.Kind {
		case "", Exact, Near, Partial:
		default:
			return bad("kind", c.Kind, "exact, near or partial")
		}
		if c.MinSize < 0 || c.MaxSize < 0 {
			return bad("min/max size", fmt.Sprint(c.MinSize, "/", c.MaxSize), ">= 0")
		}
	}
	return nil
}

// Limits returns the storage limits that keep what the profile's checks
// read, with the caps of lim: shingles for Jaccard and containment, unique
// words for LCS, the I-Match digest and the SimHash fingerprint only when
// a check compares them. The content digest is always stored; texts are
// stored when the sketch keeps them. Storing less is most of a stored
// document's size: the web profile keeps no unique words.
func (p Profile) Limits(lim sketch.Limits) sketch.Limits {
	var out sketch.Limits
	out.Sentences = p.Sentences != nil
	for _, c := range p.Checks {
		switch c.Method {
		case MethodJaccard, MethodContainment:
			out.MaxShingles = lim.MaxShingles
		case MethodLCS:
			out.MaxUnique = lim.MaxUnique
		case MethodIMatch:
			out.IMatch = true
		case MethodSimHash:
			out.SimHash = true
		case MethodPassage:
			out.Passages = true
		}
	}
	return out
}

// WithPassages returns a copy of p whose passage check has the floor
// minShared (0 keeps the check's), adding the check at the end of the
// cascade when p has none: a sketch that computes passage sections is
// never left without the check that reads them.
func (p Profile) WithPassages(minShared int) Profile {
	p.Checks = slices.Clone(p.Checks)
	for i, c := range p.Checks {
		if c.Method == MethodPassage {
			if minShared > 0 {
				p.Checks[i].MinShared = minShared
			}
			return p
		}
	}
	p.Checks = append(p.Checks, Check{Method: MethodPassage, MinShared: cmp.Or(minShared, DefaultPassageShared)})
	return p
}
