package sketch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/bitstream"
)

func TestEncodeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	cfg := DefaultConfig()
	cfg.KeepText = 1 << 20
	f := mustSketch(t, cfg, syntheticDoc(r, 20000))
	b := f.AppendBinary(nil, Limits{MaxShingles: 1 << 20, MaxUnique: 1 << 20, IMatch: true, SimHash: true})
	var g Features
	if err := g.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if g.Tokens != f.Tokens || g.Content != f.Content || g.ShingleCount != len(f.Shingles) || g.SimHash != f.SimHash ||
		g.IMatch != f.IMatch || g.HasIMatch != f.HasIMatch || string(g.Text) != string(f.Text) {
		t.Fatalf("scalar fields differ after round trip")
	}
	want := make([]uint64, 0, len(f.Shingles))
	for _, h := range f.Shingles {
		want = append(want, StoredShingle(h, 0))
	}
	slices.Sort(want)
	want = slices.Compact(want)
	if !slices.Equal(g.Shingles, want) {
		t.Errorf("shingles: %d decoded, %d expected", len(g.Shingles), len(want))
	}
	if len(g.Unique) != len(f.Unique) {
		t.Fatalf("unique: %d decoded, %d stored", len(g.Unique), len(f.Unique))
	}
	for i, u := range f.Unique {
		if g.Unique[i] != (UniqueWord{u.Hash >> 32, u.Pos}) {
			t.Fatalf("unique %d: %+v, want %+v", i, g.Unique[i], u)
		}
	}
	only := f.AppendBinary(nil, Limits{MaxShingles: 1 << 20})
	perShingle := float64(len(only)-len(f.Text)-30) / float64(len(f.Shingles))
	t.Logf("%d shingles, %d unique words, %d text bytes → %d bytes; shingles alone %d bytes (≈ %.2f B per shingle)",
		len(f.Shingles), len(f.Unique), len(f.Text), len(b), len(only), perShingle)
	// Rice coding costs about log2 of the mean gap + 1.6 bits.
	if bound := (StoredBits - math.Log2(float64(len(want))) + 2.5) / 8; perShingle > bound {
		t.Errorf("%.2f bytes per stored shingle: Rice coding should stay under %.2f", perShingle, bound)
	}
}

// Limits select what is stored: a zero field stores nothing of its kind,
// and the content digest and token count are always there.
func TestEncodeSections(t *testing.T) {
	cfg := DefaultConfig()
	cfg.KeepText = 1 << 10
	f := mustSketch(t, cfg, syntheticDoc(rand.New(rand.NewPCG(4, 4)), 3000))
	f.Text = nil
	for _, lim := range []Limits{{}, {MaxShingles: 256}, {MaxUnique: 300}, {IMatch: true}, {SimHash: true}, DefaultLimits()} {
		var g Features
		b := f.AppendBinary(nil, lim)
		if err := g.UnmarshalBinary(b); err != nil {
			t.Fatalf("%+v: %v", lim, err)
		}
		if g.Content != f.Content || g.Tokens != f.Tokens {
			t.Errorf("%+v: content or token count lost", lim)
		}
		if (len(g.Shingles) > 0) != (lim.MaxShingles > 0) || (len(g.Unique) > 0) != (lim.MaxUnique > 0) ||
			g.HasIMatch != (lim.IMatch && f.HasIMatch) || (g.SimHash != 0) != lim.SimHash {
			t.Errorf("%+v: decoded %d shingles, %d unique words, imatch %v, simhash %x", lim, len(g.Shingles), len(g.Unique), g.HasIMatch, g.SimHash)
		}
		if lim.MaxShingles > 0 && (len(g.Shingles) > lim.MaxShingles || g.ShingleCount != len(f.Shingles)) {
			t.Errorf("%+v: %d shingles kept (of %d, recorded %d)", lim, len(g.Shingles), len(f.Shingles), g.ShingleCount)
		}
		t.Logf("%+v: %d bytes", lim, len(b))
	}
}

// Sampling keeps sets under the cap, and two documents stored at different
// rates still agree on the shingles both keep at the coarser rate.
func TestEncodeSampling(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	big := make([]uint64, 20000)
	for i := range big {
		big[i] = r.Uint64()
	}
	slices.Sort(big)
	small := slices.Clone(big[:3000]) // a subset stored unsampled
	lim := Limits{MaxShingles: 4096, MaxUnique: 4096}
	if n := len((&Features{Shingles: big}).AppendBinary(nil, lim)); n > 4096*4 {
		t.Errorf("%d bytes for at most 4096 sampled shingles", n)
	}
	var a, b Features
	if err := a.UnmarshalBinary((&Features{Shingles: big}).AppendBinary(nil, lim)); err != nil {
		t.Fatal(err)
	}
	if err := b.UnmarshalBinary((&Features{Shingles: small}).AppendBinary(nil, lim)); err != nil {
		t.Fatal(err)
	}
	if len(a.Shingles) > 4096 || a.ShingleShift == 0 || b.ShingleShift != 0 {
		t.Fatalf("big: %d kept at shift %d; small shift %d", len(a.Shingles), a.ShingleShift, b.ShingleShift)
	}
	sa, sb, _, _ := AlignSamples(&a, &b)
	in := map[uint64]bool{}
	for _, x := range sa {
		in[x] = true
	}
	for _, x := range sb {
		if !in[x] {
			t.Fatalf("small's sampled shingle %x missing from big's sample", x)
		}
	}
	if len(sb) == 0 || len(sb) > len(small)/2 {
		t.Errorf("aligned small sample has %d of %d", len(sb), len(small))
	}
}

func TestDecodeCorrupt(t *testing.T) {
	f := mustSketch(t, DefaultConfig(), []byte("a short document with some words in it, enough for a digest maybe"))
	good := f.AppendBinary(nil, DefaultLimits())
	var g Features
	for n := range len(good) {
		if err := g.UnmarshalBinary(good[:n]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("truncated to %d bytes: err = %v", n, err)
		}
	}
	if err := g.UnmarshalBinary(append(slices.Clone(good), 0)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("trailing byte: %v", err)
	}
	for name, tail := range map[string][]byte{
		"huge count":            {0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0xff, 0xff, 0x0f, 3, 0xff},
		"kept more than count":  {0, 2, 3, 0, 0},
		"shift over 31":         {40, 1, 1, 0, 0},
		"v3 value over 32 bits": {0, 1, 1, 0, 0xff, 0xff, 0xff, 0xff, 0xff},
		"v4 value over 20 bits": {0, 1, 1, StoredBits - 1, 0b1100_0000, 0, 0, 0},
		"repeated value":        {0, 2, 2, 1, 0b10_00_0000},
		"unknown flag":          {},
		"long unary, no end":    {0, 1, 1, 0, 0xff, 0xff},
		"unique count too high": {},
		"version 1":             {},
		"version 6":             {},
	} {
		version := byte(encodingVersion)
		if strings.HasPrefix(name, "v3 ") {
			version = passageV3
		}
		b := append(append([]byte{version, flagShingle, 0}, make([]byte, 16)...), tail...)
		switch name {
		case "version 1", "version 6":
			b = slices.Clone(good)
			b[0] = name[len(name)-1] - '0'

		case "unknown flag":
			b[1] = 0x80
		case "unique count too high":
			b = append([]byte{encodingVersion, flagUnique, 0}, make([]byte, 16)...)
			b = append(b, 0, 0xff, 0x01, 1, 2, 3)
		}
		if err := g.UnmarshalBinary(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	doc := mustSketch(f, DefaultConfig(), []byte("the quick brown fox jumps over the lazy dog again and again"))
	f.Add(doc.AppendBinary(nil, DefaultLimits()))
	f.Add([]byte{1, 3, 0})
	f.Add(doc.AppendBinary(nil, Limits{MaxShingles: 4}))
	pcfg := DefaultConfig()
	pcfg.PassageWords = 6
	pdoc := mustSketch(f, pcfg, []byte("the quick brown fox jumps over the lazy dog again and again"))
	f.Add(pdoc.AppendBinary(nil, Limits{Passages: true}))
	scfg := DefaultConfig()
	scfg.Sentence = SentenceConfig{On: true, MinChars: 5}.WithDefaults()
	sdoc := mustSketch(f, scfg, []byte("The quick brown fox. It jumps over the lazy dog! Again and again?"))
	f.Add(sdoc.AppendBinary(nil, Limits{Sentences: true}))
	f.Fuzz(func(t *testing.T, b []byte) {
		var g Features
		if err := g.UnmarshalBinary(b); err != nil {
			return
		}
		// Whatever decodes satisfies the invariants verification relies on.
		for i, x := range g.Shingles {
			if x > shingleMask(int(g.ShingleShift)) || (i > 0 && x <= g.Shingles[i-1]) {
				t.Fatalf("shingles not strictly increasing stored values: %x", g.Shingles)
			}
		}
		for i, u := range g.Unique {
			if u.Hash >= 1<<32 || (i > 0 && u.Pos < g.Unique[i-1].Pos) {
				t.Fatalf("unique sequence out of order: %+v", g.Unique)
			}
		}
		p := g.Passage
		for _, a := range p.Anchors {
			if a.Hash >= 1<<StoredBits || int(a.Pos) >= len(p.Fp) {
				t.Fatalf("anchor %+v outside %d positions", a, len(p.Fp))
			}
		}
		for i := range p.Starts {
			if p.Ends[i] < p.Starts[i] || (i > 0 && p.Starts[i] < p.Ends[i-1]) {
				t.Fatalf("token offsets out of order at %d", i)
			}
		}
		ss := g.Sentences
		for i, it := range ss.Items {
			if len(it.Keys) != ss.Bands || len(it.Sig) != ss.Bands*ss.Rows || it.Offset < 0 || it.Length < 0 ||
				(i > 0 && it.Offset < ss.Items[i-1].Offset+ss.Items[i-1].Length) {
				t.Fatalf("sentence %d malformed: %+v of %d bands × %d rows", i, it, ss.Bands, ss.Rows)
			}
			for _, k := range it.Keys {
				if k >= 1<<32 {
					t.Fatalf("sentence key %x over 32 bits", k)
				}
			}
		}
	})
}

// Stored must equal decoding the storage encoding, sampled or not, into a
// fresh Features or into one reused from earlier documents (as the
// pipeline recycles them).
func TestStoredMatchesDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	cfg := DefaultConfig()
	cfg.KeepText = 1 << 20
	cfg.PassageWords = 40
	cfg.Sentence = SentenceConfig{On: true}.WithDefaults()
	same := func(dec, st *Features) bool {
		return slices.Equal(dec.Shingles, st.Shingles) && slices.Equal(dec.Unique, st.Unique) && dec.ShingleShift == st.ShingleShift &&
			dec.UniqueShift == st.UniqueShift && string(dec.Text) == string(st.Text) && dec.Tokens == st.Tokens && dec.SimHash == st.SimHash &&
			dec.IMatch == st.IMatch && dec.HasIMatch == st.HasIMatch && dec.Content == st.Content && dec.ShingleCount == st.ShingleCount &&
			slices.Equal(dec.Passage.Fp, st.Passage.Fp) && slices.Equal(dec.Passage.Anchors, st.Passage.Anchors) &&
			slices.Equal(dec.Passage.Starts, st.Passage.Starts) && slices.Equal(dec.Passage.Ends, st.Passage.Ends) &&
			len(dec.Sentences.Items) == len(st.Sentences.Items)
	}
	var reused Features
	for _, lim := range []Limits{DefaultLimits(), {MaxShingles: 100, MaxUnique: 50}, {MaxShingles: 256}, {}, {Passages: true}, {Sentences: true}} {
		for _, size := range []int{0, 50, 5000, 40000, 50} {
			f := mustSketch(t, cfg, syntheticDoc(r, size))
			var dec, st Features
			if err := dec.UnmarshalBinary(f.AppendBinary(nil, lim)); err != nil {
				t.Fatal(err)
			}
			f.Stored(&st, lim)
			if !same(&dec, &st) {
				t.Errorf("size %d, limits %+v: Stored differs from the decoded encoding", size, lim)
			}
			f.Stored(&reused, lim)
			if !same(&dec, &reused) {
				t.Errorf("size %d, limits %+v: Stored into a reused Features differs from the decoded encoding", size, lim)
			}
		}
	}
}

// Version 3 stores token offsets as 4-bit codes. Every gap and length
// round-trips, a version 2 encoding of the same features still decodes to
// the same passage section, and on text with punctuation version 3 is
// smaller.
func TestPassageOffsetsV3(t *testing.T) {
	var p Passage
	var end uint32
	// gap, length pairs covering every code: 1/1–14, 2/1–15, and escapes.
	for _, gl := range [][2]uint32{{0, 3}, {1, 1}, {1, 14}, {1, 15}, {2, 1}, {2, 15}, {2, 16}, {3, 4}, {1, 0}, {7, 0},
		{1000, 70000}, {1, 5}, {2, 7}, {0, 1}, {1, 9}} {
		s := end + gl[0]
		p.Starts, p.Ends = append(p.Starts, s), append(p.Ends, s+gl[1])
		end = s + gl[1]
	}
	for odd := range 2 {
		q := p
		q.Starts, q.Ends = p.Starts[:len(p.Starts)-odd], p.Ends[:len(p.Ends)-odd]
		var got Passage
		d := decoder{b: appendPassageV3(nil, &q)}
		decodePassageV3(&d, &got)
		if d.err != nil || d.remaining() != 0 {
			t.Fatalf("decode: %v, %d bytes left", d.err, d.remaining())
		}
		if !slices.Equal(got.Starts, q.Starts) || !slices.Equal(got.Ends, q.Ends) {
			t.Errorf("offsets: got %v %v, want %v %v", got.Starts, got.Ends, q.Starts, q.Ends)
		}
	}

	cfg := DefaultConfig()
	cfg.PassageWords = 40
	var text []byte
	for i := range 300 {
		text = append(text, "The keeper, who had seen the lights; said nothing. \"Why?\" asked the boy — and "...)
		text = append(text, byte('a'+i%26), ' ')
	}
	f := mustSketch(t, cfg, text)
	lim := Limits{Passages: true}
	v3, v2 := appendOld(f, lim, passageV3), appendOld(f, lim, passageV2)
	sec3 := appendPassageV3(nil, &f.Passage)
	var a, b Features
	if err := a.UnmarshalBinary(v3); err != nil {
		t.Fatal(err)
	}
	if err := b.UnmarshalBinary(v2); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Passage.Starts, b.Passage.Starts) || !slices.Equal(a.Passage.Ends, b.Passage.Ends) ||
		!slices.Equal(a.Passage.Fp, b.Passage.Fp) || !slices.Equal(a.Passage.Anchors, b.Passage.Anchors) {
		t.Error("version 2 and version 3 encodings decode to different passage sections")
	}
	n := len(f.Passage.Starts)
	t.Logf("%d tokens: version 2 %d bytes, version 3 %d bytes (offsets %.2f → %.2f bits per token)", n, len(v2), len(v3),
		8.0, 8-float64(8*(len(v2)-len(v3)))/float64(n))
	if len(v3) >= len(v2) {
		t.Errorf("version 3 (%d bytes) is not smaller than version 2 (%d)", len(v3), len(v2))
	}
	// Truncated or padded wrongly: an error, never a panic.
	for cut := len(v3) - len(sec3); cut < len(v3); cut++ {
		var c Features
		if err := c.UnmarshalBinary(v3[:cut]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut at %d of %d: %v, want ErrCorrupt", cut, len(v3), err)
		}
	}
}

// EncodedSections splits an encoding into sections that add up to its
// length, with nothing in the sections the limits leave out, and fails on
// what UnmarshalBinary rejects.
func TestEncodedSections(t *testing.T) {
	cfg := DefaultConfig()
	cfg.KeepText = 1 << 20
	cfg.PassageWords = 40
	f := mustSketch(t, cfg, syntheticDoc(rand.New(rand.NewPCG(9, 9)), 5000))
	for _, lim := range []Limits{{}, {MaxShingles: 256}, {MaxUnique: 300, Passages: true}, {MaxShingles: 256, Passages: true}, DefaultLimits()} {
		b := f.AppendBinary(nil, lim)
		sz, err := EncodedSections(b)
		if err != nil {
			t.Fatalf("%+v: %v", lim, err)
		}
		sum := sz.Header + sz.Shingles + sz.Unique + sz.Text + sz.Fingerprints + sz.Anchors + sz.Offsets + sz.Sentences
		if sum != len(b) {
			t.Errorf("%+v: sections %+v add up to %d, want %d", lim, sz, sum, len(b))
		}
		if (sz.Shingles > 0) != (lim.MaxShingles > 0) || (sz.Unique > 0) != (lim.MaxUnique > 0) ||
			(sz.Fingerprints > 0) != lim.Passages || (sz.Anchors > 0) != lim.Passages || (sz.Offsets > 0) != lim.Passages ||
			sz.Text != len(f.Text)+varintLen(len(f.Text)) || sz.Header < 18 {
			t.Errorf("%+v: sections %+v", lim, sz)
		}
		if _, err := EncodedSections(b[:len(b)-1]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%+v: truncated encoding: %v, want ErrCorrupt", lim, err)
		}
	}
}

func varintLen(n int) int { return len(binary.AppendUvarint(nil, uint64(n))) }

// appendOld writes f as a build of version 2, 3 or 4 did: 32 bits of
// each shingle and anchor hash (versions 2 and 3), version 2's byte per
// token offset, four bits of fingerprint a position (2 to 4; the lowest,
// bit 60 of the shingle hash, which version 5 drops, is set at every
// other position so that decoding must drop it).
func appendOld(f *Features, lim Limits, version byte) []byte {
	v5 := f.AppendBinary(nil, lim)
	sz, err := EncodedSections(v5)
	if err != nil {
		panic(err)
	}
	out := append([]byte{version}, v5[1:sz.Header]...)
	if lim.MaxShingles > 0 && version < hashesV4 {
		out = appendShingles32(out, f, lim.MaxShingles)
	} else {
		out = append(out, v5[sz.Header:sz.Header+sz.Shingles]...)
	}
	at := sz.Header + sz.Shingles
	out = append(out, v5[at:at+sz.Unique+sz.Text]...)
	if sz.Fingerprints > 0 {
		p := f.Passage
		p.Fp = slices.Clone(p.Fp)
		for i := range p.Fp {
			p.Fp[i] = p.Fp[i]<<1 | byte(i&1)
		}
		switch version {
		case passageV2:
			out = p.appendPassage(out)
		case passageV3:
			out = appendPassageV3(out, &p)
		default:
			out = appendPassageV4(out, &p)
		}
	}
	return append(out, v5[len(v5)-sz.Sentences:]...)
}

// appendShingles32 is the shingle section of versions 2 and 3: the top 32
// bits of each kept hash.
func appendShingles32(dst []byte, f *Features, limit int) []byte {
	count := max(f.ShingleCount, len(f.Shingles))
	shift := sampleShift(len(f.Shingles), limit)
	n, span := 0, uint64(0)
	prev := ^uint64(0)
	for _, h := range f.Shingles {
		if top := h >> 32; keep(h, shift) && top != prev {
			n++
			span, prev = top>>shift, top
		}
	}
	k := bitstream.RiceParam(span, n)
	dst = append(dst, byte(shift))
	dst = binary.AppendUvarint(dst, uint64(count))
	dst = binary.AppendUvarint(dst, uint64(n))
	dst = append(dst, byte(k))
	w := bitstream.NewWriter(dst)
	var last uint64
	prev = ^uint64(0)
	for _, h := range f.Shingles {
		top := h >> 32
		if !keep(h, shift) || top == prev {
			continue
		}
		v := top >> shift
		w.Rice(v-last, k)
		last, prev = v, top
	}
	return w.Flush()
}

// Records of versions 2 to 4, written by older builds, decode to what
// version 5 stores (StoredHash values of their 32-bit hashes, three bits
// of their four-bit fingerprints), so that they compare with documents
// stored since; and version 5 is smaller.
func TestOldVersionsDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	cfg := DefaultConfig()
	cfg.PassageWords = 40
	for _, lim := range []Limits{{MaxShingles: 256, Passages: true}, {MaxShingles: 16}, DefaultLimits(), {Passages: true}} {
		for _, size := range []int{0, 60, 5000, 40000} {
			f := mustSketch(t, cfg, syntheticDoc(r, size))
			v5 := f.AppendBinary(nil, lim)
			var want Features
			if err := want.UnmarshalBinary(v5); err != nil {
				t.Fatal(err)
			}
			for _, version := range []byte{passageV2, passageV3, fpV4} {
				old := appendOld(f, lim, version)
				var got Features
				if err := got.UnmarshalBinary(old); err != nil {
					t.Fatalf("size %d, %+v, version %d: %v", size, lim, version, err)
				}
				if !slices.Equal(got.Shingles, want.Shingles) || got.ShingleShift != want.ShingleShift || got.ShingleCount != want.ShingleCount ||
					!slices.Equal(got.Passage.Anchors, want.Passage.Anchors) || !slices.Equal(got.Passage.Fp, want.Passage.Fp) ||
					!slices.Equal(got.Passage.Starts, want.Passage.Starts) || !slices.Equal(got.Passage.Ends, want.Passage.Ends) ||
					!slices.Equal(got.Unique, want.Unique) || got.Content != want.Content {
					t.Errorf("size %d, %+v: version %d decodes to other features than version 5", size, lim, version)
				}
				smaller := lim.MaxShingles > 0 || lim.Passages
				if version == fpV4 {
					smaller = lim.Passages
				}
				if size >= 5000 && smaller && len(v5) >= len(old) {
					t.Errorf("size %d, %+v: version 5 %d bytes, version %d %d", size, lim, len(v5), version, len(old))
				}
				if version >= passageV3 && size == 5000 {
					t.Logf("%+v: version %d %d bytes, version 5 %d", lim, version, len(old), len(v5))
				}
			}
		}
	}
}

// Version 4's token offsets: every symbol and escape round-trips, the
// prefix code is chosen on English text and version 3's 4-bit codes on
// text it fits worse (adjacent one-character tokens, as in scripts
// without spaces), and a cut section is an error.
func TestOffsetsV4(t *testing.T) {
	var all Passage
	var end uint32
	for g := uint32(0); g <= 4; g++ {
		for l := uint32(0); l <= 17; l++ {
			all.Starts, all.Ends = append(all.Starts, end+g), append(all.Ends, end+g+l)
			end += g + l
		}
	}
	all.Starts, all.Ends = append(all.Starts, end+1000), append(all.Ends, end+1000+70000)
	var cjk Passage
	for i := range uint32(500) {
		cjk.Starts, cjk.Ends = append(cjk.Starts, i), append(cjk.Ends, i+1)
	}
	cfg := DefaultConfig()
	cfg.PassageWords = 40
	english := mustSketch(t, cfg, []byte(strings.Repeat("The keeper, who had seen the lights; said nothing to anyone at all. ", 60))).Passage
	// Every symbol and escape after English text: the prefix code.
	mixed := Passage{Starts: slices.Clone(english.Starts), Ends: slices.Clone(english.Ends)}
	last := mixed.Ends[len(mixed.Ends)-1]
	for i, s := range all.Starts {
		mixed.Starts, mixed.Ends = append(mixed.Starts, last+s), append(mixed.Ends, last+all.Ends[i])
	}
	for _, tt := range []struct {
		name string
		p    Passage
		mode byte
	}{{"every symbol", mixed, 1}, {"every symbol alone", all, 0}, {"adjacent characters", cjk, 0}, {"english", english, 1}, {"none", Passage{}, 0}} {
		b := appendOffsetsV4(nil, &tt.p)
		if len(tt.p.Starts) > 0 && b[0]&1 != tt.mode {
			t.Errorf("%s: mode %d, want %d", tt.name, b[0]&1, tt.mode)
		}
		var got Passage
		d := decoder{b: b}
		decodeOffsetsV4(&d, &got)
		if d.err != nil || d.remaining() != 0 || !slices.Equal(got.Starts, tt.p.Starts) || !slices.Equal(got.Ends, tt.p.Ends) {
			t.Errorf("%s: %v, %d bytes left, offsets differ: %v", tt.name, d.err, d.remaining(), !slices.Equal(got.Starts, tt.p.Starts))
		}
		if n := len(tt.p.Starts); n > 0 {
			v3 := appendOffsets(nil, &tt.p)
			t.Logf("%s: %d tokens, %.2f bits a token (version 3: %.2f)", tt.name, n, float64(8*len(b))/float64(n), float64(8*len(v3))/float64(n))
			if len(b) > len(v3)+1 { // +1: the mode bit may lengthen the count
				t.Errorf("%s: %d bytes, version 3 %d", tt.name, len(b), len(v3))
			}
		}
		for cut := range len(b) {
			d := decoder{b: b[:cut]}
			decodeOffsetsV4(&d, &got)
			if !errors.Is(d.err, ErrCorrupt) {
				t.Fatalf("%s: cut at %d of %d bytes: %v, want ErrCorrupt", tt.name, cut, len(b), d.err)
			}
		}
	}
}

// BenchmarkDecodeVersions decodes the web profile's stored features of a
// 5,000-byte page as versions 3, 4 and 5 wrote them (candidates'
// features are decoded in the hot path).
//
//	go test ./sketch/ -run '^$' -bench DecodeVersions
func BenchmarkDecodeVersions(b *testing.B) {
	cfg := DefaultConfig()
	cfg.PassageWords = 40
	f := mustSketch(b, cfg, syntheticDoc(rand.New(rand.NewPCG(7, 7)), 5000))
	lim := Limits{MaxShingles: 256, Passages: true}
	for _, v := range []struct {
		name string
		b    []byte
	}{{"v3", appendOld(f, lim, passageV3)}, {"v4", appendOld(f, lim, fpV4)}, {"v5", f.AppendBinary(nil, lim)}} {
		b.Run(v.name, func(b *testing.B) {
			var g Features
			b.ReportAllocs()
			b.ReportMetric(float64(len(v.b)), "bytes")
			for b.Loop() {
				if err := g.UnmarshalBinary(v.b); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Two unrelated large documents, sampled at a high shift, share almost no
// stored shingle: StoredBits tell kept shingles apart beyond the sampling
// bits (about n²/2^StoredBits false matches per pair). Two documents of
// different sizes, one holding the other's shingles, still agree on every
// shingle both keep once aligned, and a discount held at the larger one's
// width, cut to the smaller one's (MaskShingles), is what the smaller
// one's stored values are.
func TestStoredShingleWidth(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	random := func(n int) []uint64 {
		set := make([]uint64, n)
		for i := range set {
			set[i] = r.Uint64()
		}
		slices.Sort(set)
		return set
	}
	lim := Limits{MaxShingles: 256}
	false_ := 0
	for range 20 {
		var a, b Features
		if err := a.UnmarshalBinary((&Features{Shingles: random(200000)}).AppendBinary(nil, lim)); err != nil {
			t.Fatal(err)
		}
		if err := b.UnmarshalBinary((&Features{Shingles: random(200000)}).AppendBinary(nil, lim)); err != nil {
			t.Fatal(err)
		}
		if a.ShingleShift < 8 {
			t.Fatalf("shift %d for 200,000 shingles", a.ShingleShift)
		}
		sa, sb, _, _ := AlignSamples(&a, &b)
		for _, x := range sa {
			if _, ok := slices.BinarySearch(sb, x); ok {
				false_++
			}
		}
	}
	// Expected 20 × 256²/2^20 ≈ 1.3; a width that counted the sampling
	// bits would give hundreds.
	if false_ > 8 {
		t.Errorf("%d stored shingles shared by 20 pairs of unrelated documents", false_)
	}

	big := random(100000)
	small := slices.Clone(big[:5000])
	var a, b Features
	if err := a.UnmarshalBinary((&Features{Shingles: big}).AppendBinary(nil, lim)); err != nil {
		t.Fatal(err)
	}
	if err := b.UnmarshalBinary((&Features{Shingles: small}).AppendBinary(nil, lim)); err != nil {
		t.Fatal(err)
	}
	if a.ShingleShift <= b.ShingleShift {
		t.Fatalf("shifts %d and %d", a.ShingleShift, b.ShingleShift)
	}
	sa, sb, _, _ := AlignSamples(&a, &b)
	for _, x := range sb {
		if _, ok := slices.BinarySearch(sa, x); !ok {
			t.Fatalf("the small document's aligned shingle %x is not among the big one's", x)
		}
	}
	var disc []uint64
	for _, h := range small {
		disc = append(disc, StoredShingle(h, int(a.ShingleShift)))
	}
	slices.Sort(disc)
	var want []uint64
	for _, h := range small {
		want = append(want, StoredShingle(h, int(b.ShingleShift)))
	}
	slices.Sort(want)
	if got := MaskShingles(nil, slices.Compact(disc), b.ShingleShift); !slices.Equal(got, slices.Compact(want)) {
		t.Error("a discount cut to the narrower width differs from the narrower stored values")
	}
}

// Records builds of versions 3 and 4 wrote (main 2f1b114 and e9103ca:
// the web profile's shingle sample and passage section of two synthetic
// documents, syntheticDoc with PCG(12, size), one small and one sampled
// at a high shift) decode to what this build stores for the same
// documents.
func TestDecodeGolden(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PassageWords = 40
	lim := Limits{MaxShingles: 256, Passages: true}
	for _, tt := range []struct {
		version byte
		size    int
	}{{passageV3, 3000}, {passageV3, 60000}, {fpV4, 3000}, {fpV4, 60000}} {
		size := tt.size
		old, err := os.ReadFile(fmt.Sprintf("testdata/features-v%d-%d.bin", tt.version, size))
		if err != nil {
			t.Fatal(err)
		}
		if old[0] != tt.version {
			t.Fatalf("golden record of version %d, want %d", old[0], tt.version)
		}
		var got, want Features
		if err := got.UnmarshalBinary(old); err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		f := mustSketch(t, cfg, syntheticDoc(rand.New(rand.NewPCG(12, uint64(size))), size))
		if err := want.UnmarshalBinary(f.AppendBinary(nil, lim)); err != nil {
			t.Fatal(err)
		}
		if got.Tokens != want.Tokens || got.Content != want.Content || got.ShingleShift != want.ShingleShift ||
			got.ShingleCount != want.ShingleCount || !slices.Equal(got.Shingles, want.Shingles) ||
			!slices.Equal(got.Passage.Fp, want.Passage.Fp) || !slices.Equal(got.Passage.Anchors, want.Passage.Anchors) ||
			!slices.Equal(got.Passage.Starts, want.Passage.Starts) || !slices.Equal(got.Passage.Ends, want.Passage.Ends) {
			t.Errorf("size %d: the version %d record decodes to other features than this build stores", size, tt.version)
		}
		if size == 60000 && got.ShingleShift < 4 {
			t.Errorf("size %d: shift %d, the golden record should be sampled", size, got.ShingleShift)
		}
		t.Logf("size %d: shift %d, %d shingles, version %d %d bytes, version 5 %d", size, got.ShingleShift, len(got.Shingles),
			tt.version, len(old), len(f.AppendBinary(nil, lim)))
	}
}

// Sketcher.Encode must give the bytes of AppendBinary and the features of
// Stored, sampled or not, with its scratch and the stored features reused
// from document to document (as a pipeline worker reuses them).
func TestEncodeMatchesAppendBinaryAndStored(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	cfg := DefaultConfig()
	cfg.KeepText = 1 << 20
	cfg.PassageWords = 40
	cfg.Sentence = SentenceConfig{On: true}.WithDefaults()
	s, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var f, st, reused Features // st and reused go through the same documents
	var enc []byte
	for _, lim := range []Limits{DefaultLimits(), {MaxShingles: 100, MaxUnique: 50}, {MaxShingles: 256}, {MaxShingles: 8}, {}, {Passages: true}, {Sentences: true}} {
		for _, size := range []int{0, 50, 300, 5000, 40000, 50} {
			if err := s.Sketch(syntheticDoc(r, size), &f); err != nil {
				t.Fatal(err)
			}
			want := f.AppendBinary(nil, lim)
			f.Stored(&st, lim)
			enc = s.Encode(enc[:0], &f, &reused, lim)
			if !bytes.Equal(enc, want) {
				t.Errorf("size %d, limits %+v: Encode's bytes differ from AppendBinary's", size, lim)
			}
			if !reflect.DeepEqual(&reused, &st) {
				t.Errorf("size %d, limits %+v: Encode's stored features differ from Stored's", size, lim)
			}
			if size >= 5000 && lim.MaxShingles > 0 && len(st.Shingles) < 32 && lim.MaxShingles > 32 {
				t.Fatalf("size %d: %d stored shingles, too few to take the radix sort", size, len(st.Shingles))
			}
		}
	}
}
