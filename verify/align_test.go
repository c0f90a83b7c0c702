package verify

import (
	"cmp"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/sketch"
)

// side builds an AlignSide from shingle hashes as the pipeline does.
func side(hs []uint64, w int) AlignSide {
	var s AlignSide
	for _, h := range hs {
		s.Fp = append(s.Fp, byte(h>>61))
	}
	as := sketch.Winnow(nil, hs, w)
	for _, a := range as {
		s.Anchors = append(s.Anchors, AlignAnchor{Hash: uint32(a.Hash >> 32), Pos: a.Pos})
	}
	return s
}

func randHashes(r *rand.Rand, n int) []uint64 {
	h := make([]uint64, n)
	for i := range h {
		h[i] = r.Uint64()
	}
	return h
}

func TestAlignPassages(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const w = 26
	tests := []struct {
		name string
		// build returns a, b and the expected passages (±tol positions)
		build func() ([]uint64, []uint64, []AlignPassage)
		tol   int
	}{
		{"one verbatim passage", func() ([]uint64, []uint64, []AlignPassage) {
			a, b := randHashes(r, 500), randHashes(r, 800)
			copy(a[100:220], b[300:420])
			return a, b, []AlignPassage{{A0: 100, A1: 220, B0: 300, B1: 420}}
		}, 1},
		{"two passages in order", func() ([]uint64, []uint64, []AlignPassage) {
			a, b := randHashes(r, 600), randHashes(r, 900)
			copy(a[50:130], b[100:180])
			copy(a[400:480], b[600:680])
			return a, b, []AlignPassage{{A0: 50, A1: 130, B0: 100, B1: 180}, {A0: 400, A1: 480, B0: 600, B1: 680}}
		}, 1},
		{"a changed word inside (5 shingles differ)", func() ([]uint64, []uint64, []AlignPassage) {
			a, b := randHashes(r, 400), randHashes(r, 400)
			copy(a[100:300], b[50:250])
			for i := 180; i < 185; i++ {
				a[i] = r.Uint64()
			}
			return a, b, []AlignPassage{{A0: 100, A1: 300, B0: 50, B1: 250}}
		}, 1},
		{"a word inserted (the diagonal moves by one)", func() ([]uint64, []uint64, []AlignPassage) {
			a, b := randHashes(r, 400), randHashes(r, 400)
			copy(a[100:180], b[50:130])
			for i := 180; i < 184; i++ {
				a[i] = r.Uint64()
			}
			copy(a[184:284], b[133:233])
			return a, b, []AlignPassage{{A0: 100, A1: 284, B0: 50, B1: 233}}
		}, 1},
		{"nothing shared", func() ([]uint64, []uint64, []AlignPassage) {
			return randHashes(r, 300), randHashes(r, 300), nil
		}, 0},
	}
	var al PassageAligner
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b, want := tt.build()
			got, covered := al.Align(nil, side(a, w), side(b, w), AlignOptions{MinMatched: 20})
			if len(got) != len(want) {
				t.Fatalf("got %+v, want %+v", got, want)
			}
			total := 0
			for i, g := range got {
				wp := want[i]
				for _, d := range []int{g.A0 - wp.A0, g.A1 - wp.A1, g.B0 - wp.B0, g.B1 - wp.B1} {
					if d < -tt.tol || d > tt.tol {
						t.Errorf("passage %d: got %+v, want %+v", i, g, wp)
					}
				}
				total += wp.A1 - wp.A0
			}
			if covered < total*9/10 || covered > total+2 {
				t.Errorf("covered %d, want about %d", covered, total)
			}
		})
	}
}

func BenchmarkAlign(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	x, y := randHashes(r, 1000), randHashes(r, 1000)
	copy(x[200:500], y[400:700])
	sx, sy := side(x, 36), side(y, 36)
	var al PassageAligner
	var dst []AlignPassage
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = al.Align(dst[:0], sx, sy, AlignOptions{})
	}
}

// A copy whose neighbours differ ends where the copy ends, unless chance
// resumes the run after the gap: AlignOptions.Resume matching positions
// at one of Gap·(2·Drift+1) tries, 84·2^-(FpBits·Resume) per end, the
// same 2% at three bits and four matches as at four bits and three. The
// share of passages that come out longer than the copy stays near that,
// and none is shorter.
func TestAlignChanceOvershoot(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const trials, n, lo, hi = 4000, 300, 100, 156
	over := 0
	var al PassageAligner
	for range trials {
		a := AlignSide{Fp: make([]byte, n), Anchors: []AlignAnchor{{Hash: 1, Pos: 120}}}
		b := AlignSide{Fp: make([]byte, n), Anchors: []AlignAnchor{{Hash: 1, Pos: 120}}}
		for i := range n {
			a.Fp[i], b.Fp[i] = byte(r.Uint32()), byte(r.Uint32())
		}
		// Unrelated positions next to the copy differ, so its ends are
		// where the copy ends.
		for _, i := range []int{lo - 1, hi} {
			b.Fp[i] = a.Fp[i] ^ 1
		}
		copy(b.Fp[lo:hi], a.Fp[lo:hi])
		ps, _ := al.Align(nil, a, b, AlignOptions{})
		if len(ps) != 1 || ps[0].A0 > lo || ps[0].A1 < hi || ps[0].Matched < hi-lo {
			t.Fatalf("passages %+v, want one holding [%d,%d)", ps, lo, hi)
		}
		if ps[0].Matched > hi-lo {
			over++
		}
	}
	q := 1.0 / (1 << FpBits)
	opt := AlignOptions{}.withDefaults()
	tries := float64(opt.Gap * (2*opt.Drift + 1))
	perEnd := tries * math.Pow(q, float64(opt.Resume))
	want := 1 - (1-perEnd)*(1-perEnd)
	got := float64(over) / trials
	t.Logf("%d bits, resume %d: %.4f of the passages overshoot, model %.4f", FpBits, opt.Resume, got, want)
	if before := tries * math.Pow(2, -12); perEnd > before {
		t.Errorf("defaults bridge by chance at %.4f per end, four bits and three matches %.4f", perEnd, before)
	}
	if got > 2*want+0.005 {
		t.Errorf("%.4f of the passages overshoot the copy, model %.4f", got, want)
	}
}

// TestResumeWords: the word-at-a-time search for where a broken run
// resumes finds what the search a try at a time finds, at every break of
// copies with words changed, inserted and deleted, in both directions,
// under the default options and others it handles, near the ends of the
// documents too (resumeEdge; one break in four is within 24 positions of
// an end of a).
func TestResumeWords(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 4))
	// b is a with edits every few positions: substitutions, insertions
	// and deletions of one to four positions, so that runs break and
	// resume off the diagonal.
	a := make([]byte, 3000)
	for i := range a {
		a[i] = byte(r.IntN(256)) // high bits are noise the match ignores
	}
	var b []byte
	for i := 0; i < len(a); {
		n := 1 + r.IntN(30)
		b = append(b, a[i:min(i+n, len(a))]...)
		i += n
		switch k := 1 + r.IntN(4); r.IntN(3) {
		case 0: // substitute
			for range k {
				b = append(b, byte(r.IntN(8)))
			}
			i += k
		case 1: // insert
			for range k {
				b = append(b, byte(r.IntN(8)))
			}
		case 2: // delete
			i += k
		}
	}
	fp := fpPair{a: a, b: b}
	for _, opt := range []AlignOptions{
		{},
		{Gap: 8, Resume: 8, Drift: 1},
		{Gap: 16, Resume: 1, Drift: 7},
		{Gap: 5, Resume: 2, Drift: -1}, // no drift
		{Gap: 13, Resume: 4, Drift: 2},
	} {
		opt = opt.withDefaults()
		fast, edge, found := 0, 0, 0
		for range 20000 {
			i, dir := r.IntN(len(a)), 1-2*r.IntN(2)
			if r.IntN(4) == 0 {
				i = r.IntN(24)
				if r.IntN(2) == 0 {
					i = len(a) - 1 - i
				}
			}
			j := min(max(i*len(b)/len(a)+r.IntN(9)-4, 0), len(b)-1)
			wi, wj, wok := resumeSlow(fp, i, j, dir, opt, nil)
			gi, gj, gok := resume(fp, i, j, dir, opt)
			if gi != wi || gj != wj || gok != wok {
				t.Fatalf("%+v: break at (%d, %d) dir %d: resume gives (%d, %d, %v), the slow search (%d, %d, %v)", opt, i, j, dir, gi, gj, gok, wi, wj, wok)
			}
			// With an accept test (extend's: the words), the first
			// place in the slow search's order that passes it.
			accept := func(ri, rj, dir, n int) bool { return (ri*7+rj*13+dir+n)%3 == 0 }
			wi, wj, wok = resumeSlow(fp, i, j, dir, opt, accept)
			if gi, gj, gok := resumeAccept(fp, i, j, dir, opt, accept); gi != wi || gj != wj || gok != wok {
				t.Fatalf("%+v: break at (%d, %d) dir %d: resumeAccept gives (%d, %d, %v), the slow search (%d, %d, %v)", opt, i, j, dir, gi, gj, gok, wi, wj, wok)
			}
			if _, _, _, done := resumeWords(fp, i, j, dir, opt); done {
				fast++
			} else if _, _, ok := resumeEdge(fp, i, j, dir, opt); ok {
				edge++
			}
			if gok {
				found++
			}
		}
		if fast < 10000 || edge < 200 || found < 1000 {
			t.Errorf("%+v: %d of 20000 breaks decided by resumeWords, %d resumed by resumeEdge, %d resumed in all: the test covers too little", opt, fast, edge, found)
		}
	}
}

// alignReference is Align as it was with its seeds and b's anchors in
// slices of structs sorted by comparison functions: TestAlignSortKeys
// holds Align, which sorts them as packed words, to its answers.
func (al *PassageAligner) alignReference(dst []AlignPassage, a, b AlignSide, opt AlignOptions) ([]AlignPassage, int) {
	opt = opt.withDefaults()
	if len(a.Anchors) == 0 || len(b.Anchors) == 0 || len(a.Fp) == 0 || len(b.Fp) == 0 {
		return dst, 0
	}
	var byHash []AlignAnchor
	for _, x := range b.Anchors {
		if int(x.Pos) < len(b.Fp) {
			byHash = append(byHash, x)
		}
	}
	slices.SortFunc(byHash, func(x, y AlignAnchor) int { return cmp.Compare(x.Hash, y.Hash) })
	var seeds []seed
	for _, x := range a.Anchors {
		if int(x.Pos) >= len(a.Fp) {
			continue
		}
		i, _ := slices.BinarySearchFunc(byHash, x.Hash, func(e AlignAnchor, h uint32) int { return cmp.Compare(e.Hash, h) })
		for ; i < len(byHash) && byHash[i].Hash == x.Hash; i++ {
			seeds = append(seeds, seed{int(x.Pos), int(byHash[i].Pos)})
		}
	}
	if len(seeds) == 0 {
		return dst, 0
	}
	slices.SortFunc(seeds, func(x, y seed) int {
		return cmp.Or(cmp.Compare(x.b-x.a, y.b-y.a), cmp.Compare(x.a, y.a))
	})
	al.chains = al.chains[:0]
	al.cover = slices.Grow(al.cover[:0], len(a.Fp))[:len(a.Fp)]
	clear(al.cover)
	match := fpPair{a: a.Fp, b: b.Fp}
	for _, s := range seeds {
		if al.covered(s) {
			continue
		}
		c := al.extend(s, match, opt)
		al.chains = append(al.chains, c)
	}
	// Merge chains that follow each other on both sides.
	slices.SortFunc(al.chains, func(x, y AlignPassage) int { return cmp.Or(cmp.Compare(x.A0, y.A0), cmp.Compare(x.B0, y.B0)) })
	merged := al.chains[:0]
	for _, c := range al.chains {
		if n := len(merged); n > 0 {
			p := &merged[n-1]
			if c.A0 <= p.A1+opt.Merge && c.B0 <= p.B1+opt.Merge && c.B1 >= p.B0-opt.Merge && c.B0 >= p.B0-opt.Merge {
				p.A1, p.B0, p.B1 = max(p.A1, c.A1), min(p.B0, c.B0), max(p.B1, c.B1)
				continue
			}
		}
		merged = append(merged, c)
	}
	covered := 0
	out := dst
	start := len(dst)
	for _, p := range merged {
		p.Matched = 0
		for i := p.A0; i < p.A1; i++ {
			if al.cover[i] != 0 {
				p.Matched++
			}
		}
		if p.Matched >= opt.MinMatched {
			out = append(out, p)
			covered += p.Matched
		}
	}
	if res := out[start:]; len(res) > opt.MaxPassages {
		slices.SortStableFunc(res, func(x, y AlignPassage) int { return cmp.Compare(y.Matched, x.Matched) })
		out = out[:start+opt.MaxPassages]
		slices.SortFunc(out[start:], func(x, y AlignPassage) int { return cmp.Compare(x.A0, y.A0) })
	}
	return out, covered
}

// TestAlignSortKeys: Align gives what alignReference gives, passages and
// covered positions, on copies with edits, moved passages and repeated
// text (anchors of equal hash at several positions), both ways round.
func TestAlignSortKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 17))
	var al, ref PassageAligner
	for round := range 300 {
		x := randHashes(r, 200+r.IntN(1500))
		var y []uint64
		for len(y) < len(x) {
			switch k := r.IntN(10); {
			case k < 6: // a run copied from anywhere in x
				at, n := r.IntN(len(x)), 10+r.IntN(120)
				y = append(y, x[at:min(at+n, len(x))]...)
			case k < 8: // new text
				y = append(y, randHashes(r, 1+r.IntN(20))...)
			default: // a run of y repeated
				if len(y) > 0 {
					at := r.IntN(len(y))
					y = append(y, y[at:min(at+30, len(y))]...)
				}
			}
		}
		sx, sy := side(x, 20+r.IntN(30)), side(y, 20+r.IntN(30))
		opt := AlignOptions{MinMatched: r.IntN(30), MaxPassages: 1 + r.IntN(40)}
		for _, pair := range [2][2]AlignSide{{sx, sy}, {sy, sx}} {
			got, gotN := al.Align(nil, pair[0], pair[1], opt)
			want, wantN := ref.alignReference(nil, pair[0], pair[1], opt)
			if gotN != wantN || !slices.Equal(got, want) {
				t.Fatalf("round %d: Align %v (%d covered), reference %v (%d)", round, got, gotN, want, wantN)
			}
		}
	}
}

// TestAheadMatchesOneAtATime: ahead's eight-at-a-time count is the number
// of positions match accepts in a row, and it declines near the ends.
func TestAheadMatchesOneAtATime(t *testing.T) {
	r := rand.New(rand.NewPCG(101, 102))
	for range 2000 {
		a, b := make([]byte, 1+r.IntN(40)), make([]byte, 1+r.IntN(40))
		for i := range a {
			a[i] = byte(r.IntN(256))
		}
		for i := range b {
			b[i] = byte(r.IntN(256))
			if i < len(a) && r.IntN(3) > 0 {
				b[i] = a[i] ^ byte(r.IntN(2)<<FpBits) // same fingerprint, other high bits
			}
		}
		f := fpPair{a: a, b: b}
		i, j := r.IntN(len(a)+2)-1, r.IntN(len(b)+2)-1
		for _, dir := range []int{-1, 1} {
			n, ok := f.ahead(i, j, dir)
			inside := true
			for k := 1; k <= 8; k++ {
				x, y := i+dir*k, j+dir*k
				inside = inside && x >= 0 && y >= 0 && x < len(a) && y < len(b)
			}
			if ok != inside {
				t.Fatalf("ahead(%d, %d, %d) on %d/%d positions: ok %v, want %v", i, j, dir, len(a), len(b), ok, inside)
			}
			if !ok {
				continue
			}
			want := 0
			for want < 8 && f.match(i+dir*(want+1), j+dir*(want+1)) {
				want++
			}
			if n != want {
				t.Fatalf("ahead(%d, %d, %d) = %d, match accepts %d", i, j, dir, n, want)
			}
		}
	}
}

// TestSameAheadMatchesOneAtATime: sameAhead's count is the number of
// positions after (i, j), in order, whose words sameNewWord takes, on
// word lists of random lengths, wherever ahead reads eight positions.
func TestSameAheadMatchesOneAtATime(t *testing.T) {
	r := rand.New(rand.NewPCG(103, 104))
	words := func(n int) (starts, ends []uint32) { return randWords(r, n, 4) }
	checked := 0
	for range 3000 {
		k := 1 + r.IntN(6)
		na, nb := 1+r.IntN(40), 1+r.IntN(40)
		sa, ea := words(na + k - 1)
		sb, eb := words(nb + k - 1)
		w := newWordPair(sa, ea, sb, eb, k)
		ref := &wordsRef{sa, ea, sb, eb, k}
		i, j := r.IntN(na+2)-1, r.IntN(nb+2)-1
		for _, dir := range []int{-1, 1} {
			if _, ok := (fpPair{a: make([]byte, na), b: make([]byte, nb)}).ahead(i, j, dir); !ok {
				continue
			}
			n := r.IntN(9)
			want := 0
			for want < n && ref.sameNewWord(i+dir*(want+1), j+dir*(want+1), dir) {
				want++
			}
			if got := w.sameAhead(i, j, dir, n); got != want {
				t.Fatalf("k %d, (%d, %d) dir %d, n %d on %d/%d positions: sameAhead %d, sameNewWord takes %d", k, i, j, dir, n, na, nb, got, want)
			}
			checked++
		}
	}
	if checked < 500 {
		t.Errorf("%d cases checked: the test covers too little", checked)
	}
	var none *wordPair
	if got := none.sameAhead(3, 4, 1, 5); got != 5 {
		t.Errorf("no words: sameAhead = %d, want 5", got)
	}
}

// wordsRef is wordPair as first written: where the words lie on both
// sides (AlignSide.Starts and Ends), their lengths taken at each test.
type wordsRef struct {
	sa, ea, sb, eb []uint32
	k              int
}

// newWordPair is the wordPair of words at starts and ends.
func newWordPair(sa, ea, sb, eb []uint32, k int) *wordPair {
	return &wordPair{wordLens(nil, AlignSide{Starts: sa, Ends: ea}), sb, eb, k}
}

// sameNewWord is wordPair.sameNewWord as first written, on the words'
// ranges.
func (w *wordsRef) sameNewWord(i, j, dir int) bool {
	if dir > 0 {
		i, j = i+w.k-1, j+w.k-1
	}
	if i < 0 || j < 0 || i >= len(w.sa) || j >= len(w.sb) {
		return true
	}
	return w.ea[i]-w.sa[i] == w.eb[j]-w.sb[j]
}

// sameRunRef is sameRun as first written, a shingle's words and then
// each next position's word through sameNewWord, on the words' ranges.
func (w *wordsRef) sameRunRef(i, j, dir, n int) bool {
	for m := 0; m < w.k; m++ {
		if !w.sameNewWord(i-dir*m, j-dir*m, dir) {
			return false
		}
	}
	for m := 1; m < n; m++ {
		if !w.sameNewWord(i+dir*m, j+dir*m, dir) {
			return false
		}
	}
	return true
}

// TestSameRunReference holds sameRun, which compares one stretch of
// words a side, to the reference, near the ends of the word lists too.
func TestSameRunReference(t *testing.T) {
	r := rand.New(rand.NewPCG(105, 106))
	words := func(n int) (starts, ends []uint32) { return randWords(r, n, 3) }
	same, differ := 0, 0
	for range 20000 {
		k := 1 + r.IntN(6)
		sa, ea := words(r.IntN(30))
		sb, eb := words(r.IntN(30))
		w := newWordPair(sa, ea, sb, eb, k)
		i, j, dir, n := r.IntN(36)-3, r.IntN(36)-3, 1-2*r.IntN(2), r.IntN(6)
		want := (&wordsRef{sa, ea, sb, eb, k}).sameRunRef(i, j, dir, n)
		if got := w.sameRun(i, j, dir, n); got != want {
			t.Fatalf("k %d, (%d, %d) dir %d n %d on %d/%d words: sameRun %v, the reference %v", k, i, j, dir, n, len(sa), len(sb), got, want)
		}
		if want {
			same++
		} else {
			differ++
		}
	}
	if same < 2000 || differ < 2000 {
		t.Errorf("%d runs the same, %d not: the test covers too little", same, differ)
	}
}

// randWords returns n words one code point apart, each of 1 to maxLen
// code points: few lengths, so that many are equal by chance.
func randWords(r *rand.Rand, n, maxLen int) (starts, ends []uint32) {
	var end uint32
	for range n {
		s := end + 1
		end = s + uint32(1+r.IntN(maxLen))
		starts, ends = append(starts, s), append(ends, end)
	}
	return starts, ends
}

// runStartsRef is runStarts as first written: the mask ANDed with itself
// shifted by one position, resume − 1 times.
func runStartsRef(a0, a1, b0, b1 uint64, resume int) (s0, s1 uint64) {
	m0, m1 := matchBytes(a0^b0), matchBytes(a1^b1)
	s0, s1 = m0, m1
	for k := 1; k < resume; k++ {
		m0 = m0>>8 | m1<<56
		m1 >>= 8
		s0 &= m0
		s1 &= m1
	}
	return s0, s1
}

// TestRunStartsReference holds runStarts, on sixteen bits whose shifts
// double, to the shifts by one a byte a position, for every resume from 1
// to 8, on windows where most positions match (so that long runs are
// common).
func TestRunStartsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(107, 108))
	// A byte that matches 0 with probability 7/8 in its low FpBits.
	fps := func() uint64 {
		var x uint64
		for k := range 8 {
			if r.IntN(8) == 0 {
				x |= uint64(1+r.IntN(fpMask)) << (8 * k)
			}
			x |= uint64(r.IntN(32)) << (8*k + FpBits) // noise above
		}
		return x
	}
	places := 0
	for range 20000 {
		a0, a1, b0, b1 := fps(), fps(), fps(), fps()
		for resume := 1; resume <= 8; resume++ {
			w0, w1 := runStartsRef(a0, a1, b0, b1, resume)
			var want uint32 // the high bit of byte k of (w0, w1) as bit k
			for k := range 16 {
				if [2]uint64{w0, w1}[k/8]>>(8*(k%8)+7)&1 != 0 {
					want |= 1 << k
				}
			}
			if got := runStarts(matchMask(a0^b0, a1^b1), resume); got != want {
				t.Fatalf("resume %d on %#x %#x / %#x %#x: runStarts %#04x, by one a byte a position %#04x", resume, a0, a1, b0, b1, got, want)
			}
			places += bits.OnesCount32(want)
		}
	}
	if places < 100000 {
		t.Errorf("%d places: the test covers too little", places)
	}
}
