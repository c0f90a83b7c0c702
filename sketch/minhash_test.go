package sketch

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randomPair returns two sets with a chosen overlap: n elements each,
// sharing c of them, so J = c / (2n − c).
func randomPair(r *rand.Rand, n, c int) (a, b []uint64) {
	for range c {
		x := r.Uint64()
		a, b = append(a, x), append(b, x)
	}
	for range n - c {
		a = append(a, r.Uint64())
		b = append(b, r.Uint64())
	}
	return a, b
}

// meanAbsError measures the mean |Ĵ − J| of a signer over random pairs with
// J in [lo, 1].
func meanAbsError(s Signer, pairs int, lo float64, seed uint64) float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	var sum float64
	for range pairs {
		n := 50 + r.IntN(950)
		j := lo + (1-lo)*r.Float64()
		c := int(math.Round(2 * j * float64(n) / (1 + j))) // J = c/(2n−c)
		a, b := randomPair(r, n, c)
		exact := float64(c) / float64(2*n-c)
		est := s.Sign(nil, a).Jaccard(s.Sign(nil, b))
		sum += math.Abs(est - exact)
	}
	return sum / float64(pairs)
}

func TestMinHashConverges(t *testing.T) {
	// For K = 128 the estimator's standard deviation is sqrt(J(1−J)/K) ≤
	// 0.044, so its mean absolute error over J in [0, 1] is about 0.03.
	// The bound 0.04 fails for a broken family (bias or correlated
	// positions) while passing for a correct one.
	for _, tt := range []struct {
		name string
		s    Signer
	}{
		{"classic", NewMinHash(128, 42)},
		{"oph", NewOnePermutation(128, 42)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mae := meanAbsError(tt.s, 600, 0, 1)
			t.Logf("%s K=128: mean |Ĵ−J| = %.4f over 600 pairs", tt.name, mae)
			if mae > 0.04 {
				t.Errorf("mean absolute error %.4f > 0.04", mae)
			}
		})
	}
}

// One-permutation hashing with densification must be as accurate as
// classic MinHash where it matters for deduplication (J ≥ 0.3).
func TestOnePermutationAccuracy(t *testing.T) {
	classic := meanAbsError(NewMinHash(128, 9), 1500, 0.3, 3)
	oph := meanAbsError(NewOnePermutation(128, 9), 1500, 0.3, 3)
	t.Logf("J in [0.3,1], K=128: classic MAE %.4f, one-permutation MAE %.4f (ratio %.3f)", classic, oph, oph/classic)
	if oph > 1.1*classic {
		t.Errorf("one-permutation MAE %.4f > 1.1 × classic %.4f", oph, classic)
	}
}

// Densification must fill every bin of a tiny set deterministically, and
// identical sets must get identical signatures.
func TestOnePermutationDensifies(t *testing.T) {
	o := NewOnePermutation(256, 5)
	sig := o.Sign(nil, []uint64{1, 2, 3})
	for i, v := range sig {
		if v == Empty {
			t.Fatalf("bin %d left empty", i)
		}
	}
	if got := sig.Jaccard(o.Sign(nil, []uint64{3, 2, 1, 1})); got != 1 {
		t.Errorf("same set, Ĵ = %v", got)
	}
	if got := o.Sign(nil, nil).Jaccard(o.Sign(nil, nil)); got != 0 {
		t.Errorf("empty sets estimate %v, want 0", got)
	}
}

// Golden signatures pin determinism across runs and machines; the values
// were cross-checked against an independent Python implementation.
func TestSignatureGolden(t *testing.T) {
	set := []uint64{TokenHash([]byte("a")), TokenHash([]byte("b")), TokenHash([]byte("c"))}
	tests := []struct {
		name string
		s    Signer
		want [4]uint64
	}{
		{"classic", NewMinHash(128, 1), [4]uint64{0x504e187f62b1202c, 0x1b9b8f8e551c8fe6, 0xc6236b98ba1cd31d, 0x27e221a6aad714bf}},
		{"oph", NewOnePermutation(128, 1), [4]uint64{0xd3e80f3d40313863, 0xff00bffbd043e554, 0xff00bffbd043e554, 0xd3e80f3d40313863}},
	}
	for _, tt := range tests {
		got := tt.s.Sign(nil, set)
		if [4]uint64(got[:4]) != tt.want {
			t.Errorf("%s: first positions %#x, want %#x", tt.name, got[:4], tt.want)
		}
	}
}

func TestBands(t *testing.T) {
	tests := []struct {
		k    int
		t    float64
		b, r int
	}{
		{128, 0.8, 9, 13},
		{128, 0.5, 25, 5},
	}
	for _, tt := range tests {
		b, r := Bands(tt.k, tt.t)
		if b != tt.b || r != tt.r {
			t.Errorf("Bands(%d, %v) = %d×%d, want %d×%d", tt.k, tt.t, b, r, tt.b, tt.r)
		}
	}
	for _, tt := range []struct {
		k    int
		t, w float64
		b, r int
	}{{128, 0.5, 0.8, 30, 4}, {256, 0.3, 0.9, 85, 3}} {
		if b, r := BandsWeighted(tt.k, tt.t, tt.w); b != tt.b || r != tt.r {
			t.Errorf("BandsWeighted(%d, %v, %v) = %d×%d, want %d×%d", tt.k, tt.t, tt.w, b, r, tt.b, tt.r)
		}
	}
	if p := Collision(0.8, 9, 13); p < 0.3 || p > 0.7 {
		t.Errorf("P(0.8) for 9×13 = %v: the threshold should sit near the curve's midpoint", p)
	}
	if Collision(0, 9, 13) != 0 || Collision(1, 9, 13) != 1 {
		t.Error("P(0) must be 0 and P(1) must be 1")
	}
}

func TestBandKeys(t *testing.T) {
	s := NewOnePermutation(128, 1)
	a := s.Sign(nil, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	b := append(Signature(nil), a...)
	b[0]++ // differ in band 0 only
	ka, kb := BandKeys(nil, a, 9, 13), BandKeys(nil, b, 9, 13)
	if ka[0] == kb[0] {
		t.Error("band 0 keys equal after changing a row of band 0")
	}
	for i := 1; i < 9; i++ {
		if ka[i] != kb[i] {
			t.Errorf("band %d key changed", i)
		}
	}
}

func TestSimHash(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	toks := make([]uint64, 1000)
	for i := range toks {
		toks[i] = r.Uint64()
	}
	fp := SimHash(toks)
	// Equal weights must agree with the weighted reference.
	if w := SimHashWeighted(toks, func(uint64) float64 { return 1 }); w != fp {
		t.Errorf("SimHash %x != SimHashWeighted with unit weights %x", fp, w)
	}
	near := append([]uint64(nil), toks...)
	for i := 0; i < 20; i++ { // change 2% of the tokens
		near[r.IntN(len(near))] = r.Uint64()
	}
	if d := Hamming(fp, SimHash(near)); d > 6 {
		t.Errorf("2%% token change moved SimHash by %d bits", d)
	}
	other := make([]uint64, 1000)
	for i := range other {
		other[i] = r.Uint64()
	}
	if d := Hamming(fp, SimHash(other)); d < 16 {
		t.Errorf("unrelated token sets only %d bits apart", d)
	}
}

func TestSimHashBlocks(t *testing.T) {
	fp := uint64(0xfedcba9876543210)
	got := SimHashBlocks(nil, fp, 3)
	want := []uint64{0x3210, 0x7654, 0xba98, 0xfedc}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("blocks = %x, want %x", got, want)
		}
	}
	// Pigeonhole: any fingerprint within distance k shares a block.
	r := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		a := r.Uint64()
		b := a
		for range r.IntN(4) {
			b ^= 1 << r.IntN(64)
		}
		ba, bb := SimHashBlocks(nil, a, 3), SimHashBlocks(nil, b, 3)
		shared := false
		for i := range ba {
			shared = shared || ba[i] == bb[i]
		}
		if !shared {
			t.Fatalf("%x and %x (distance %d) share no block", a, b, Hamming(a, b))
		}
	}
	if got := SimHashBlocks(nil, fp, 0); len(got) != 1 || got[0] != fp {
		t.Errorf("k=0 block = %x", got)
	}
}
