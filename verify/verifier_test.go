package verify

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup/sketch"
)

// words returns n pseudo-words drawn from a vocabulary of the given size,
// letters only so that every one can be a DUPNIQ unique word.
func words(r *rand.Rand, n, vocab int) []string {
	out := make([]string, n)
	for i := range out {
		w := r.IntN(vocab)
		var b strings.Builder
		for {
			b.WriteByte(byte('a' + w%26))
			w /= 26
			if w == 0 {
				break
			}
		}
		b.WriteString("x")
		out[i] = b.String()
	}
	return out
}

// edit changes about frac of the words of ws to other words.
func edit(r *rand.Rand, ws []string, frac float64) []string {
	out := slices.Clone(ws)
	changed := false
	for i := range out {
		if r.Float64() < frac {
			out[i] = words(r, 1, 1<<20)[0]
			changed = true
		}
	}
	if !changed && len(out) > 0 {
		// At least one word, so that an edited copy is never the same text.
		out[r.IntN(len(out))] = words(r, 1, 1<<20)[0]
	}
	return out
}

func features(t testing.TB, cfg sketch.Config, ws []string) *sketch.Features {
	t.Helper()
	s, err := sketch.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var f sketch.Features
	if err := s.Sketch([]byte(strings.Join(ws, " ")), &f); err != nil {
		t.Fatal(err)
	}
	return &f
}

func mustNew(t testing.TB, p Profile) *Verifier {
	t.Helper()
	v, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestProfileByName(t *testing.T) {
	for _, name := range []string{"web", "books", "sentence"} {
		p, err := ProfileByName(name)
		if err != nil || p.Name != name {
			t.Fatalf("ProfileByName(%q) = %q, %v", name, p.Name, err)
		}
		if _, err := New(p); err != nil {
			t.Errorf("profile %s does not validate: %v", name, err)
		}
		// Each call is a fresh copy.
		p.Checks[0].Method = "bogus"
		if q, _ := ProfileByName(name); q.Checks[0].Method == "bogus" {
			t.Errorf("profile %s shares its checks between calls", name)
		}
	}
	if _, err := ProfileByName("news"); !errors.Is(err, ErrUnknownProfile) {
		t.Errorf("unknown profile: %v, want ErrUnknownProfile", err)
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name   string
		checks []Check
	}{
		{"no checks", nil},
		{"unknown method", []Check{{Method: "cosine", Threshold: 0.5}}},
		{"zero threshold", []Check{{Method: MethodJaccard}}},
		{"threshold over 1", []Check{{Method: MethodEdit, Threshold: 1.5}}},
		{"NaN threshold", []Check{{Method: MethodContainment, Threshold: nan()}}},
		{"fractional hamming", []Check{{Method: MethodSimHash, Threshold: 2.5}}},
		{"hamming over 64", []Check{{Method: MethodSimHash, Threshold: 65}}},
		{"score on jaccard", []Check{{Method: MethodJaccard, Threshold: 0.5, Score: ScoreCS}}},
		{"unknown score", []Check{{Method: MethodLCS, Threshold: 0.5, Score: "lin"}}},
		{"distinct kind", []Check{{Method: MethodJaccard, Threshold: 0.5, Kind: Distinct}}},
		{"negative size", []Check{{Method: MethodJaccard, Threshold: 0.5, MinSize: -1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(Profile{Name: "t", Checks: tt.checks}); err == nil {
				t.Errorf("New accepted %+v", tt.checks)
			}
		})
	}
	if _, err := New(Profile{Name: "t", Checks: []Check{{Method: MethodSimHash, Threshold: 0}}}); err != nil {
		t.Errorf("simhash at distance 0 rejected: %v", err)
	}
}

func nan() float64 { var z float64; return z / z }

func TestWithThresholds(t *testing.T) {
	p := WebProfile().WithThresholds(Thresholds{Jaccard: 0.7, CS: 0.2})
	var j, cs *Check
	for i, c := range p.Checks {
		switch {
		case c.Method == MethodJaccard:
			j = &p.Checks[i]
		case c.Method == MethodLCS && c.Score == ScoreCS:
			cs = &p.Checks[i]
		}
	}
	if j == nil || j.Threshold != 0.7 {
		t.Errorf("jaccard check %+v, want threshold 0.7", j)
	}
	if cs == nil || cs.Threshold != 0.2 || cs != &p.Checks[len(p.Checks)-1] {
		t.Errorf("cs check %+v, want one appended at the end with 0.2", cs)
	}
	if w := WebProfile(); w.Checks[1].Threshold != DefaultJaccard || len(w.Checks) != 4 {
		t.Error("WithThresholds changed the original profile")
	}
	if _, err := New(p); err != nil {
		t.Error(err)
	}
	same := BooksProfile().WithThresholds(Thresholds{})
	if !slices.Equal(same.Checks, BooksProfile().Checks) {
		t.Errorf("zero thresholds changed the profile: %+v", same.Checks)
	}
}

// TestCascade runs the built-in profiles on constructed pairs whose kind
// is known, and checks which method decided.
func TestCascade(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	cfg := sketch.DefaultConfig()
	cfg.PassageWords = 40
	base := words(r, 600, 20000)
	other := words(r, 600, 20000)
	page := words(r, 120, 20000)
	long := slices.Concat(words(r, 400, 20000), page, words(r, 400, 20000))
	// A 60-word passage shared by two unrelated documents, and a 200-word
	// answer of which 60 words come from a 2,000-word article.
	quote := words(r, 60, 20000)
	withQuoteA := slices.Concat(words(r, 700, 20000), quote, words(r, 300, 20000))
	withQuoteB := slices.Concat(words(r, 100, 20000), quote, words(r, 900, 20000))
	answer := slices.Concat(words(r, 70, 20000), quote, words(r, 70, 20000))
	article := slices.Concat(words(r, 1200, 20000), quote, words(r, 740, 20000))

	sentCfg := cfg
	sentCfg.CharGram, sentCfg.KeepText = 5, 1024
	sentence := strings.Fields("the quick brown fox jumps over the lazy dog near the river bank today")
	sentenceEdited := slices.Clone(sentence)
	sentenceEdited[3] = "cat"

	tests := []struct {
		name    string
		profile Profile
		a, b    *sketch.Features
		kind    Kind
		method  Method
	}{
		{"web identical", WebProfile(), features(t, cfg, base), features(t, cfg, base), Exact, MethodExact},
		{"web near", WebProfile(), features(t, cfg, base), features(t, cfg, edit(r, base, 0.02)), Near, ""},
		{"web page inside a longer one", WebProfile(), features(t, cfg, page), features(t, cfg, long), Partial, MethodContainment},
		{"web longer one holding the page", WebProfile(), features(t, cfg, long), features(t, cfg, page), Partial, MethodContainment},
		{"web unrelated", WebProfile(), features(t, cfg, base), features(t, cfg, other), Distinct, MethodPassage},
		{"web shared passage", WebProfile(), features(t, cfg, withQuoteA), features(t, cfg, withQuoteB), Partial, MethodPassage},
		{"web answer inside an article", WebProfile(), features(t, cfg, answer), features(t, cfg, article), Partial, MethodPassage},
		// Both containments are high: near, not partial.
		{"web near is not partial", WebProfile(), features(t, cfg, base), features(t, cfg, edit(r, base, 0.01)), Near, MethodJaccard},
		{"web tiny page inside", WebProfile(), features(t, cfg, page[:20]), features(t, cfg, long), Distinct, MethodPassage},
		{"books noisy copy", BooksProfile(), features(t, cfg, base), features(t, cfg, edit(r, base, 0.3)), Partial, MethodLCS},
		{"books unrelated", BooksProfile(), features(t, cfg, base), features(t, cfg, other), Distinct, MethodLCS},
		{"sentence edited", SentenceProfile(), features(t, sentCfg, sentence), features(t, sentCfg, sentenceEdited), Near, MethodEdit},
		{"sentence unrelated", SentenceProfile(), features(t, sentCfg, sentence), features(t, sentCfg, words(r, 14, 20000)), Distinct, MethodEdit},
		{"sentence without text", SentenceProfile(), features(t, cfg, sentence), features(t, cfg, sentenceEdited), Distinct, MethodExact},
		{"nil candidate", WebProfile(), features(t, cfg, base), nil, Distinct, ""},
		{"empty documents", WebProfile(), features(t, cfg, nil), features(t, cfg, nil), Distinct, MethodExact},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustNew(t, tt.profile)
			got := v.Verify(tt.a, tt.b)
			t.Logf("%s by %q: %s", got.Kind, got.Check, scoresString(got.Scores))
			if got.Kind != tt.kind {
				t.Errorf("kind %s by %s, want %s", got.Kind, got.Check, tt.kind)
			}
			if tt.method != "" && got.Check != string(tt.method) {
				t.Errorf("decided by %q, want %q", got.Check, tt.method)
			}
		})
	}
}

// Exact means the same normalized text, decided on the whole token stream:
// two long texts one word apart are not exact even when their stored
// shingle samples are identical, and a text is exact with itself at any
// sampling rate.
func TestExactIsWholeText(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	ws := words(r, 20000, 1<<20)
	changed := slices.Clone(ws)
	cfg := sketch.DefaultConfig()
	// Change one word whose five shingles the coarse sample drops, so the
	// samples cannot tell the texts apart.
	stored := func(f *sketch.Features) *sketch.Features {
		var d sketch.Features
		if err := d.UnmarshalBinary(f.AppendBinary(nil, sketch.Limits{MaxShingles: 256})); err != nil {
			t.Fatal(err)
		}
		return &d
	}
	a := stored(features(t, cfg, ws))
	var b *sketch.Features
	for i := 10; ; i++ {
		changed[i] = "nowx"
		b = stored(features(t, cfg, changed))
		if slices.Equal(a.Shingles, b.Shingles) {
			break
		}
		changed[i] = ws[i]
	}
	v := mustNew(t, WebProfile())
	if got := v.Verify(b, a); got.Kind == Exact {
		t.Errorf("one word apart, identical samples: %s by %s, want not exact", got.Kind, got.Check)
	} else if got.Kind != Near {
		t.Errorf("one word apart: %s by %s, want near", got.Kind, got.Check)
	}
	if got := v.Verify(stored(features(t, cfg, ws)), a); got.Kind != Exact {
		t.Errorf("same text: %s, want exact", got.Kind)
	}
}

func TestProfileLimits(t *testing.T) {
	caps := sketch.Limits{MaxShingles: 256, MaxUnique: 8192, IMatch: true, SimHash: true}
	for _, tc := range []struct {
		p    Profile
		want sketch.Limits
	}{
		{WebProfile(), sketch.Limits{MaxShingles: 256, Passages: true}},
		{BooksProfile(), sketch.Limits{MaxShingles: 256, MaxUnique: 8192}},
		{SentenceProfile(), sketch.Limits{}},
		{Profile{Checks: []Check{{Method: MethodIMatch}, {Method: MethodSimHash, Threshold: 3}}}, sketch.Limits{IMatch: true, SimHash: true}},
	} {
		if got := tc.p.Limits(caps); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.p.Name, got, tc.want)
		}
	}
}

// TestCascadeOrder: with the same pair, the first check that fires
// decides, and later checks leave no scores.
func TestCascadeOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	ws := words(r, 400, 20000)
	a, b := features(t, sketch.DefaultConfig(), ws), features(t, sketch.DefaultConfig(), edit(r, ws, 0.01))
	first := mustNew(t, Profile{Checks: []Check{
		{Method: MethodJaccard, Threshold: 0.5},
		{Method: MethodLCS, Threshold: DefaultITS},
	}}).Verify(a, b)
	if first.Check != "jaccard" || first.Scores.Jaccard == nil || first.Scores.ITS != nil {
		t.Errorf("jaccard first: %+v", first)
	}
	second := mustNew(t, Profile{Checks: []Check{
		{Method: MethodLCS, Threshold: DefaultITS, Kind: Near},
		{Method: MethodJaccard, Threshold: 0.5},
	}}).Verify(a, b)
	if second.Check != "lcs" || second.Kind != Near || second.Scores.ITS == nil || second.Scores.Jaccard != nil {
		t.Errorf("lcs first: %+v", second)
	}
	// A reachable containment after an unreachable Jaccard reuses
	// nothing stale: the intersection is recomputed at the lower need.
	page := words(r, 100, 20000)
	long := slices.Concat(words(r, 900, 20000), page)
	fp, fl := features(t, sketch.DefaultConfig(), page), features(t, sketch.DefaultConfig(), long)
	got := mustNew(t, Profile{Checks: []Check{
		{Method: MethodJaccard, Threshold: 0.9},
		{Method: MethodContainment, Threshold: 0.9},
	}}).Verify(fp, fl)
	if got.Kind != Partial || got.Scores.Jaccard != nil || got.Scores.ContainmentAB == nil || *got.Scores.ContainmentAB != 1 {
		t.Errorf("containment after jaccard: %+v %s", got, scoresString(got.Scores))
	}
}

// TestScoresJSON: only computed scores appear, under the schema's names.
func TestScoresJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	ws := words(r, 300, 20000)
	a, b := features(t, sketch.DefaultConfig(), ws), features(t, sketch.DefaultConfig(), edit(r, ws, 0.02))
	v := mustNew(t, Profile{Checks: []Check{
		{Method: MethodSimHash, Threshold: 0},
		{Method: MethodLCS, Threshold: 0.5},
	}})
	got := v.Verify(a, b)
	raw, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Kind   string         `json:"kind"`
		Method string         `json:"method"`
		Scores map[string]any `json:"scores"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(m.Scores))
	for k := range m.Scores {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"hamming", "lcs", "lcs_cs", "lcs_its"}; !slices.Equal(keys, want) {
		t.Errorf("score keys %v, want %v (%s)", keys, want, raw)
	}
	if m.Method != "lcs" || m.Kind != "partial" {
		t.Errorf("%s", raw)
	}
	empty, _ := json.Marshal(Verdict{Kind: Distinct})
	if string(empty) != `{"kind":"distinct","method":"","scores":{}}` {
		t.Errorf("empty verdict: %s", empty)
	}
}

// TestSampledFeatures verifies decoded features stored at different
// sampling rates: the pair is aligned to the coarser rate and a document
// still matches itself fully.
func TestSampledFeatures(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 38))
	f := features(t, sketch.DefaultConfig(), words(r, 5000, 1<<20))
	decode := func(lim sketch.Limits) *sketch.Features {
		var d sketch.Features
		if err := d.UnmarshalBinary(f.AppendBinary(nil, lim)); err != nil {
			t.Fatal(err)
		}
		return &d
	}
	fine := decode(sketch.Limits{MaxShingles: 1 << 20, MaxUnique: 1 << 20})
	coarse := decode(sketch.Limits{MaxShingles: 512, MaxUnique: 512})
	if coarse.ShingleShift == 0 || coarse.UniqueShift == 0 {
		t.Fatalf("limits did not sample: shifts %d/%d", coarse.ShingleShift, coarse.UniqueShift)
	}
	if got := mustNew(t, WebProfile()).Verify(fine, coarse); got.Kind != Exact {
		t.Errorf("the same text stored at two rates: %s by %s, want exact", got.Kind, got.Check)
	}
	v := mustNew(t, Profile{Checks: []Check{
		{Method: MethodJaccard, Threshold: 0.99},
		{Method: MethodLCS, Threshold: 0.99, Kind: Near},
	}})
	got := v.Verify(fine, coarse)
	if got.Kind != Near || got.Check != "jaccard" || *got.Scores.Jaccard != 1 {
		t.Errorf("fine vs coarse: %+v %s", got, scoresString(got.Scores))
	}
	lcsOnly := mustNew(t, Profile{Checks: []Check{{Method: MethodLCS, Threshold: 0.99, MinSize: 1000}}})
	got = lcsOnly.Verify(coarse, fine)
	if got.Kind != Partial || *got.Scores.ITS != 1 || *got.Scores.CS != 1 {
		t.Errorf("its at different rates: %+v %s", got, scoresString(got.Scores))
	}
}

// TestVerifyConcurrent shares one Verifier between goroutines (run with
// -race): each gets the verdict a sequential run gives.
func TestVerifyConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(39, 40))
	v := mustNew(t, BooksProfile())
	var docs []*sketch.Features
	base := words(r, 800, 5000)
	for i := range 8 {
		docs = append(docs, features(t, sketch.DefaultConfig(), edit(r, base, float64(i)/8)))
	}
	want := make([]Verdict, 0, len(docs)*len(docs))
	for _, a := range docs {
		want = v.VerifyAll(want, a, docs)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for k := range len(want) {
				k = (k + g*7) % len(want)
				got := v.Verify(docs[k/len(docs)], docs[k%len(docs)])
				if got.Kind != want[k].Kind || got.Check != want[k].Check {
					t.Errorf("pair %d: %s by %s, sequential %s by %s", k, got.Kind, got.Check, want[k].Kind, want[k].Check)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestHugeFeatures: 100 000 unique words per side stay bounded in time and
// allocations.
func TestHugeFeatures(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	const n = 100_000
	a, b := randSeqs(r, n, n, 2*n, true)
	fa := &sketch.Features{Tokens: n, Unique: a, Shingles: randSet(r, n, 4*n)}
	fb := &sketch.Features{Tokens: n, Unique: b, Shingles: randSet(r, n, 4*n)}
	v := mustNew(t, Profile{Checks: []Check{
		{Method: MethodJaccard, Threshold: 0.5},
		{Method: MethodContainment, Threshold: 0.5},
		{Method: MethodLCS, Threshold: 0.1},
	}})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	got := v.Verify(fa, fb)
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if got.Scores.LCS == nil {
		t.Errorf("checks did not run: %+v", got)
	}
	// The Aligner drops buffers this large after use, so each huge pair
	// allocates afresh: a handful of O(n) buffers, about 40 bytes a word.
	allocs, bytes := after.Mallocs-before.Mallocs, after.TotalAlloc-before.TotalAlloc
	t.Logf("100k words: %v, %d allocations, %d bytes", elapsed, allocs, bytes)
	if allocs > 16 || bytes > 64*n {
		t.Errorf("%d allocations, %d bytes for one huge pair", allocs, bytes)
	}
	if elapsed > time.Second && !raceEnabled {
		t.Errorf("one huge pair took %v", elapsed)
	}
}

// A near or partial verdict carries the aligned passages: here the one
// 60-word passage two unrelated documents share, at its positions on both
// sides, with two-way aligned shares. A run may end a position or a
// chance bridge past the copy (FpBits), never short of it.
func TestVerdictPassages(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	cfg := sketch.DefaultConfig()
	cfg.PassageWords = 40
	quote := words(r, 60, 20000)
	a := features(t, cfg, slices.Concat(words(r, 700, 20000), quote, words(r, 300, 20000)))
	b := features(t, cfg, slices.Concat(words(r, 100, 20000), quote, words(r, 900, 20000)))
	var sa, sb sketch.Features
	lim := WebProfile().Limits(sketch.DefaultLimits())
	a.Stored(&sa, lim)
	b.Stored(&sb, lim)
	got := mustNew(t, WebProfile()).Verify(&sa, &sb)
	if got.Kind != Partial || len(got.Passages) != 1 {
		t.Fatalf("%s by %s with passages %+v, want one partial passage", got.Kind, got.Check, got.Passages)
	}
	p := got.Passages[0]
	// 60 words are 56 shingles: positions 700…755 and 100…155.
	opt := AlignOptions{}.withDefaults()
	slack := opt.Gap + opt.Resume + opt.Drift // one chance bridge
	if p.A0 > 700 || p.A1 < 756 || p.B0 > 100 || p.B1 < 156 || p.Matched < 56 ||
		p.A0 < 700-slack || p.A1 > 756+slack || p.B0 < 100-slack || p.B1 > 156+slack || p.Matched > 56+2*opt.Resume {
		t.Errorf("passage %+v, want [700,756) against [100,156) with 56 matched, give or take a chance bridge", p)
	}
	if got.Scores.Aligned == nil || *got.Scores.Aligned != p.Matched || got.Scores.AlignedAB == nil || got.Scores.AlignedBA == nil {
		t.Fatalf("aligned scores %s", scoresString(got.Scores))
	}
	want := float64(p.Matched) / 1056
	if ab, ba := *got.Scores.AlignedAB, *got.Scores.AlignedBA; math.Abs(ab-want) > 1e-9 || math.Abs(ba-float64(min(p.Matched, p.B1-p.B0))/1056) > 1e-9 {
		t.Errorf("aligned shares %v, %v, want %d/1056 both", ab, ba, p.Matched)
	}
	// Unrelated documents: no passages, distinct.
	c := features(t, cfg, words(r, 1000, 20000))
	var sc sketch.Features
	c.Stored(&sc, lim)
	if v := mustNew(t, WebProfile()).Verify(&sa, &sc); v.Kind != Distinct || len(v.Passages) != 0 {
		t.Errorf("unrelated: %s with %d passages", v.Kind, len(v.Passages))
	}
}
