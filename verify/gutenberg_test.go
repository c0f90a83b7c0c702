package verify

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/internal/dataset"
	"github.com/neardup/neardup/sketch"
)

// gutenbergDir returns the gutenberg-editions data set (internal/dataset:
// skipped when absent, failed under CI).
func gutenbergDir(t testing.TB) string {
	t.Helper()
	return dataset.Dir(t, "gutenberg-editions")
}

type gutenbergPair struct {
	a, b     string
	sameWork bool
}

func readPairs(t testing.TB, dir string) []gutenbergPair {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "pairs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []gutenbergPair
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		if first {
			continue // header
		}
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) < 5 {
			t.Fatalf("pairs.tsv: bad line %q", sc.Text())
		}
		out = append(out, gutenbergPair{a: fields[0], b: fields[1], sameWork: fields[4] == "1"})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("pairs.tsv: no pairs")
	}
	return out
}

// sketchFiles computes the default features of each named text, two at a
// time (the books are up to 1.2 MB).
func sketchFiles(t testing.TB, dir string, names []string) map[string]*sketch.Features {
	t.Helper()
	out := make(map[string]*sketch.Features, len(names))
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, len(names))
	sem := make(chan struct{}, 2)
	for _, name := range names {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			text, err := os.ReadFile(filepath.Join(dir, "texts", name))
			if err != nil {
				errs <- err
				return
			}
			s, err := sketch.New(sketch.DefaultConfig(), nil)
			if err != nil {
				errs <- err
				return
			}
			var f sketch.Features
			if err := s.Sketch(text, &f); err != nil {
				errs <- err
				return
			}
			mu.Lock()
			out[name] = &f
			mu.Unlock()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return out
}

// TestGutenbergEditions is the DUPNIQ Table 2 sanity check on real books:
// two editions of one work score its ≥ 0.72 (and cs ≥ 0.12), different
// works score well below, the lower bound prunes every different-work
// pair without alignment, and the books profile agrees.
func TestGutenbergEditions(t *testing.T) {
	dir := gutenbergDir(t)
	pairs := readPairs(t, dir)
	var names []string
	seen := map[string]bool{}
	for _, p := range pairs {
		for _, n := range []string{p.a, p.b} {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	feats := sketchFiles(t, dir, names)
	v, err := New(BooksProfile())
	if err != nil {
		t.Fatal(err)
	}
	var al Aligner
	maxDiffITS, minSameITS := 0.0, 1.0
	for _, p := range pairs {
		fa, fb := feats[p.a], feats[p.b]
		x, y := len(fa.Unique), len(fb.Unique)
		aln := al.Align(fa.Unique, fb.Unique)
		cs, its := CS(aln.Len, x, y), ITS(aln.Len, x, y)
		bound, _ := MinLCS(ScoreITS, DefaultITS, x, y)
		t.Logf("%-12s %-12s same=%-5v |X|=%5d |Y|=%5d common=%5d LCS=%5d cs=%.3f its=%.3f L=%d J=%.3f",
			p.a, p.b, p.sameWork, x, y, aln.Common, aln.Len, cs, its, bound, Jaccard(fa.Shingles, fb.Shingles))
		verdict := v.Verify(fa, fb)
		if p.sameWork {
			minSameITS = min(minSameITS, its)
			if its < DefaultITS || cs < DefaultCS {
				t.Errorf("%s/%s, same work: its %.3f cs %.3f, want ≥ %.2f and ≥ %.2f", p.a, p.b, its, cs, DefaultITS, DefaultCS)
			}
			if verdict.Kind == Distinct {
				t.Errorf("%s/%s, same work: books profile says distinct (%+v)", p.a, p.b, verdict)
			}
			continue
		}
		maxDiffITS = max(maxDiffITS, its)
		if its >= DefaultITS || cs >= DefaultCS {
			t.Errorf("%s/%s, different works: its %.3f cs %.3f reach a threshold", p.a, p.b, its, cs)
		}
		if aln.Common >= bound {
			t.Errorf("%s/%s, different works: %d common words pass the lower bound %d", p.a, p.b, aln.Common, bound)
		}
		if verdict.Kind != Distinct {
			t.Errorf("%s/%s, different works: books profile says %s by %s", p.a, p.b, verdict.Kind, verdict.Check)
		}
	}
	t.Logf("same work: min its %.3f; different works: max its %.3f", minSameITS, maxDiffITS)
}

// TestGutenbergPartial cuts the first part of one edition and verifies it
// against the whole other edition: a real partial duplicate, where the
// resemblance is low because the lengths differ but the unique words still
// align (DUPNIQ's partial-duplicate case).
func TestGutenbergPartial(t *testing.T) {
	dir := gutenbergDir(t)
	tests := []struct {
		part, whole string
		frac        float64
		want        Kind
	}{
		{"pg2701.txt", "pg15.txt", 0.3, Partial},    // a third of Moby-Dick in Moby-Dick
		{"pg1342.txt", "pg42671.txt", 0.5, Partial}, // half of Pride and Prejudice
		{"pg1342.txt", "pg15.txt", 0.5, Distinct},   // half of Pride and Prejudice in Moby-Dick
	}
	v, err := New(BooksProfile())
	if err != nil {
		t.Fatal(err)
	}
	s, err := sketch.New(sketch.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.part+"-in-"+tt.whole, func(t *testing.T) {
			part, err := os.ReadFile(filepath.Join(dir, "texts", tt.part))
			if err != nil {
				t.Fatal(err)
			}
			whole, err := os.ReadFile(filepath.Join(dir, "texts", tt.whole))
			if err != nil {
				t.Fatal(err)
			}
			var fp, fw sketch.Features
			if err := s.Sketch(part[:int(tt.frac*float64(len(part)))], &fp); err != nil {
				t.Fatal(err)
			}
			if err := s.Sketch(whole, &fw); err != nil {
				t.Fatal(err)
			}
			got := v.Verify(&fp, &fw)
			t.Logf("verdict %s by %s: %s", got.Kind, got.Check, scoresString(got.Scores))
			if got.Kind != tt.want {
				t.Errorf("verdict %s by %s, want %s", got.Kind, got.Check, tt.want)
			}
		})
	}
}

func scoresString(s Scores) string {
	var b strings.Builder
	f := func(name string, v *float64) {
		if v != nil {
			fmt.Fprintf(&b, "%s=%.3f ", name, *v)
		}
	}
	f("jaccard", s.Jaccard)
	f("c_ab", s.ContainmentAB)
	f("c_ba", s.ContainmentBA)
	f("cs", s.CS)
	f("its", s.ITS)
	f("edit", s.Edit)
	if s.LCS != nil {
		fmt.Fprintf(&b, "lcs=%d", *s.LCS)
	}
	return b.String()
}
