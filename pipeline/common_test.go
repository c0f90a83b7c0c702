package pipeline

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/dataset"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// discount turns the common anchors the index reports into common
// passages: runs of two or more within a winnowing window of each other,
// widened by a window less one, or a lone anchor that many documents
// hold; a document mostly made of them is judged whole.
func TestDiscount(t *testing.T) {
	p, err := New(testConfig(t, "web"), nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	w := sketch.PassageWindow(n, p.passageWords(), p.cfg.Sketch.Shingle)
	seq := make([]uint32, n)
	for i := range seq {
		seq[i] = uint32(i + 1)
	}
	// Anchors every 20 positions; key k is anchor k's hash.
	var anchors []sketch.Anchor
	var keys []uint64
	for pos := 0; pos < n; pos += 20 {
		anchors = append(anchors, sketch.Anchor{Hash: uint64(pos + 1), Pos: uint32(pos)})
		keys = append(keys, uint64(1000+pos))
	}
	job := func(common []uint64, docs []int) *job {
		j := &job{seq: seq, feats: &sketch.Features{Passage: sketch.Passage{Anchors: anchors}},
			entry: index.Entry{Anchors: keys}, sentenceBase: len(keys),
			res: index.Result{CommonAnchors: common, CommonAnchorDocs: docs}}
		return j
	}
	for _, tt := range []struct {
		name   string
		common []uint64
		docs   []int
		want   []verify.Range
		whole  bool
	}{
		{"none", nil, nil, nil, false},
		{"a lone anchor held by a few", []uint64{1100}, []int{3}, nil, false},
		{"a lone anchor held by many", []uint64{1100}, []int{boilerplateDocs}, []verify.Range{{Lo: 100 - (w - 1), Hi: 100 + w}}, false},
		{"a run of three", []uint64{1500, 1520, 1540}, []int{3, 3, 3}, []verify.Range{{Lo: 500 - (w - 1), Hi: 540 + w}}, false},
		{"two runs far apart", []uint64{1000, 1020, 1900, 1920}, []int{3, 3, 3, 3}, []verify.Range{{Lo: 0, Hi: 20 + w}, {Lo: 900 - (w - 1), Hi: 920 + w}}, false},
		{"a template and a copied passage", []uint64{1000, 1020, 1040, 1060, 1080, 1100, 1500, 1520}, []int{boilerplateDocs, boilerplateDocs, boilerplateDocs, boilerplateDocs, boilerplateDocs, boilerplateDocs, 3, 3},
			[]verify.Range{{Lo: 0, Hi: 100 + w}}, false},
		{"most of the document", func() []uint64 {
			var c []uint64
			for pos := 0; pos < 800; pos += 20 {
				c = append(c, uint64(1000+pos))
			}
			return c
		}(), nil, []verify.Range{{Lo: 0, Hi: 780 + w}}, true},
	} {
		j := job(tt.common, tt.docs)
		d := p.discount(j)
		var got []verify.Range
		if d != nil {
			got = d.Common
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: common ranges %v, want %v", tt.name, got, tt.want)
			continue
		}
		if d == nil {
			continue
		}
		covered := 0
		for _, r := range tt.want {
			covered += r.Hi - r.Lo
		}
		if tt.name == "a template and a copied passage" {
			covered += 520 + w - (500 - (w - 1)) // the copied passage is left out of resemblance all the same
		}
		if want := float64(covered) / n; j.commonShare != want {
			t.Errorf("%s: share %v, want %v", tt.name, j.commonShare, want)
		}
		if wantRun := slices.Contains(tt.docs, boilerplateDocs) && len(tt.want) > 0; (d.MinRun == w) != wantRun || d.MinRun != 0 && d.MinRun != w {
			t.Errorf("%s: MinRun %d, want the window (%d) only with a known template", tt.name, d.MinRun, w)
		}
		if whole := d.Shingles == nil; whole != tt.whole {
			t.Errorf("%s: judged whole %v, want %v", tt.name, whole, tt.whole)
		}
		if !tt.whole && len(d.Shingles) != covered {
			t.Errorf("%s: %d shingles left out, want %d", tt.name, len(d.Shingles), covered)
		}
	}
}

// templateDocs: when most of a document's common text is held by many
// documents, a passage held by fewer is a copied text, not its template;
// when most of it is held by few, only passages held by fewer than the
// most widely held of them are.
func TestTemplateDocs(t *testing.T) {
	run := func(lo, hi, docs int) commonRun { return commonRun{Range: verify.Range{Lo: lo, Hi: hi}, docs: docs} }
	for _, tt := range []struct {
		name string
		runs []commonRun
		want int
	}{
		{"a known template and a copied passage", []commonRun{run(0, 100, 40), run(300, 360, 4)}, boilerplateDocs},
		{"a known template only", []commonRun{run(0, 100, 255)}, boilerplateDocs},
		{"a young template", []commonRun{run(0, 100, 4), run(400, 450, 4)}, 4},
		{"a young template, a widely shared notice", []commonRun{run(0, 60, 30), run(100, 300, 5)}, 5},
		{"no template, two copied passages", []commonRun{run(0, 100, 6), run(200, 260, 3)}, 6},
		{"equal shares: the known template decides", []commonRun{run(0, 100, 9), run(200, 300, 3)}, boilerplateDocs},
	} {
		if got := templateDocs(tt.runs); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

// copiedWhole: a document copied a candidate whole when most of the
// document is common text the candidate holds and most of the candidate
// is that text; a page that is mostly its template (a short article) did
// not copy the template's exemplar, a page with an article of its own.
// Of a page copied whole with its template, the copied text is the part
// held by few documents.
func TestCopiedWhole(t *testing.T) {
	anchors := func(lo, hi int) []sketch.Anchor {
		var as []sketch.Anchor
		for h := lo; h < hi; h++ {
			as = append(as, sketch.Anchor{Hash: uint64(h), Pos: uint32(20 * h)})
		}
		return as
	}
	common := func(docs int, ranges ...[2]int) []anchorAt {
		var out []anchorAt
		for _, r := range ranges {
			for h := r[0]; h < r[1]; h++ {
				out = append(out, anchorAt{hash: uint32(h), pos: 20 * h, docs: docs})
			}
		}
		return out
	}
	hashes := func(lo, hi int) []uint32 {
		var out []uint32
		for h := lo; h < hi; h++ {
			out = append(out, uint32(h))
		}
		return out
	}
	// own is a document's anchors: those of the given ranges, then text
	// of its own (hashes no candidate holds) up to n anchors.
	own := func(n int, ranges ...[2]int) []sketch.Anchor {
		var as []sketch.Anchor
		for _, r := range ranges {
			as = append(as, anchors(r[0], r[1])...)
		}
		for h := 10000; len(as) < n; h++ {
			as = append(as, sketch.Anchor{Hash: uint64(h), Pos: uint32(20 * h)})
		}
		return as
	}
	for _, tt := range []struct {
		name   string
		common []anchorAt      // the document's common anchors, by hash
		own    []sketch.Anchor // the document's anchors
		cand   []sketch.Anchor
		want   []uint32
	}{
		{"a near copy of a widely copied text", common(4, [2]int{0, 45}), own(50, [2]int{0, 45}), anchors(0, 50), hashes(0, 45)},
		{"the same, held by many", common(30, [2]int{0, 45}), own(50, [2]int{0, 45}), anchors(0, 50), hashes(0, 45)},
		// Noisy copies before it broke some of the text's anchors, so
		// fewer than 2/3 of them are common yet; the copy still holds
		// 45 of the candidate's 50.
		{"a near copy of a text whose earlier copies were noisy", common(3, [2]int{0, 25}), own(50, [2]int{0, 45}), anchors(0, 50), hashes(0, 45)},
		{"a page that is mostly its template, against the template's exemplar", common(12, [2]int{0, 40}), own(50, [2]int{0, 40}), anchors(0, 100), nil},
		{"a partial copy of a widely copied text", common(6, [2]int{10, 30}), own(50, [2]int{10, 30}), anchors(0, 50), nil},
		{"mostly common text, little of it the candidate's", common(6, [2]int{0, 45}), own(50, [2]int{0, 45}), anchors(30, 80), nil},
		{"a page copied whole with its template", append(common(20, [2]int{0, 15}), common(3, [2]int{15, 45})...), own(50, [2]int{0, 45}), anchors(0, 50), hashes(15, 45)},
		{"a page copied whole with its template, the copied text not common yet", common(20, [2]int{0, 15}), own(50, [2]int{0, 45}), anchors(0, 50), hashes(15, 45)},
		{"no common anchors", nil, own(50, [2]int{0, 50}), anchors(0, 50), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := slices.Clone(tt.common)
			slices.SortFunc(c, func(a, b anchorAt) int { return int(a.hash) - int(b.hash) })
			got := copiedWhole(c, tt.own, &sketch.Features{Passage: sketch.Passage{Anchors: tt.cand}})
			if !slices.Equal(got, tt.want) {
				t.Errorf("copied text %v, want %v", got, tt.want)
			}
		})
	}
}

// sourceCommon: against a source, a common passage whose anchors are
// mostly the source's copied text is evidence; the others (a template
// around the copy) stay out.
func TestSourceCommon(t *testing.T) {
	at := func(hash uint32, pos int) anchorAt { return anchorAt{hash: hash, pos: pos, docs: 5} }
	rs := []verify.Range{{Lo: 0, Hi: 100}, {Lo: 200, Hi: 400}}
	common := []anchorAt{at(1, 10), at(2, 30), at(3, 60), at(10, 210), at(11, 250), at(12, 300), at(13, 350)}
	for _, tt := range []struct {
		name   string
		copied []uint32
		kept   []verify.Range
		ok     bool
	}{
		{"the second passage is the copied text", []uint32{10, 11, 12, 13}, []verify.Range{{Lo: 0, Hi: 100}}, true},
		{"most of the second passage", []uint32{10, 11, 13}, []verify.Range{{Lo: 0, Hi: 100}}, true},
		{"half of it is not most", []uint32{10, 12}, rs, false},
		{"both passages", []uint32{1, 2, 3, 10, 11, 12, 13}, nil, true},
		{"another text", []uint32{40, 41}, rs, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kept, ok := sourceCommon(rs, common, tt.copied)
			if ok != tt.ok || !slices.Equal(kept, tt.kept) {
				t.Errorf("kept %v (%v), want %v (%v)", kept, ok, tt.kept, tt.ok)
			}
		})
	}
}

// sourceSet keeps the first copied text of a source (by its Seq) and at
// most max sources, the oldest out first.
func TestSourceSet(t *testing.T) {
	s := newSourceSet(2)
	s.add(1, 10, []uint32{1})
	s.add(1, 11, []uint32{2}) // the first whole copy says what was copied
	s.add(2, 12, []uint32{3})
	s.add(3, 13, nil)
	if got := s.copied[1]; !slices.Equal(got.hashes, []uint32{1}) || got.by != 10 {
		t.Errorf("1: %v, want [1] found by 10", got)
	}
	if _, ok := s.copied[3]; ok || len(s.copied) != 2 {
		t.Errorf("sources %v, want 1 and 2", s.copied)
	}
	s.add(4, 14, []uint32{4})
	if _, ok := s.copied[1]; ok || s.copied[2].hashes == nil || s.copied[4].hashes == nil {
		t.Errorf("sources %v, want 2 and 4 (1 out first)", s.copied)
	}
}

// markSources: of the candidates a document copied whole (the source
// and earlier copies of it), only the earliest becomes a source, so a
// cluster of copies takes one place in the bounded set, not one per
// copy. With one place per copy, a copy-dense stream of more clusters
// than a few times the bound forgot most sources before their partial
// copies came (recall 0.8377 instead of 0.9644 on bench/corpus real at
// 100,000 documents with the bound scaled to its clusters as 65,536 is
// to 1,000,000 documents' 50,000).
func TestMarkSourcesEarliest(t *testing.T) {
	const n = 50
	anchors := make([]sketch.Anchor, n)
	keys := make([]uint64, n)
	for i := range anchors {
		anchors[i] = sketch.Anchor{Hash: uint64(i + 1), Pos: uint32(20 * i)}
		keys[i] = uint64(1000 + i)
	}
	var commonKeys []uint64
	var docs []int
	for i := 0; i < 45; i++ {
		commonKeys, docs = append(commonKeys, keys[i]), append(docs, 5)
	}
	copyFeats := &sketch.Features{Passage: sketch.Passage{Anchors: anchors}}
	feats := map[uint64]*sketch.Features{1: copyFeats, 3: copyFeats, 5: copyFeats}
	for _, tt := range []struct {
		name  string
		cands []index.Candidate
		want  uint64
	}{
		{"ranked most recent first", []index.Candidate{{ID: "copy2", Seq: 5}, {ID: "copy1", Seq: 3}, {ID: "source", Seq: 1}}, 1},
		{"ranked oldest first", []index.Candidate{{ID: "source", Seq: 1}, {ID: "copy1", Seq: 3}, {ID: "copy2", Seq: 5}}, 1},
		{"the source is gone", []index.Candidate{{ID: "copy2", Seq: 5}, {ID: "copy1", Seq: 3}}, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &Pipeline{sources: newSourceSet(8)}
			j := &job{
				entry:        index.Entry{Anchors: keys},
				feats:        copyFeats,
				res:          index.Result{Seq: 9, CommonAnchors: commonKeys, CommonAnchorDocs: docs},
				cands:        tt.cands,
				earlier:      len(tt.cands),
				sentenceBase: n,
				discount:     &verify.Discount{},
				commonShare:  0.9,
			}
			p.markSources([]*job{j}, func(c *index.Candidate) *sketch.Features { return feats[c.Seq] })
			if src, ok := p.sources.copied[tt.want]; len(p.sources.copied) != 1 || !ok || src.by != 9 {
				var got []uint64
				for seq := range p.sources.copied {
					got = append(got, seq)
				}
				t.Errorf("sources %v, want only %d, found by 9", got, tt.want)
			}
		})
	}
}

// TestSampledOut: a discount that lists only the common shingles the
// document's stored sample keeps gives the verdicts that listing every
// common shingle gives, against candidates stored at the same, a finer
// and a coarser sampling rate (documents of 300 to 20,000 words of a
// Gutenberg book, overlapping by parts, with random common ranges).
func TestSampledOut(t *testing.T) {
	b, err := os.ReadFile(dataset.Gutenberg(t, "pg1342.txt"))
	if err != nil {
		t.Fatal(err)
	}
	words := bytes.Fields(b)
	cfg := sketch.DefaultConfig()
	cfg.PassageWords = 40
	sk, err := sketch.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	prof := verify.WebProfile()
	lim := prof.Limits(sketch.Limits{MaxShingles: 256})
	v, err := verify.New(prof)
	if err != nil {
		t.Fatal(err)
	}
	type doc struct {
		stored *sketch.Features
		seq    []uint32 // stored value at each shingle position
	}
	mk := func(from, n int) doc {
		var f sketch.Features
		if err := sk.Sketch(bytes.Join(words[from:from+n], []byte(" ")), &f); err != nil {
			t.Fatal(err)
		}
		var st sketch.Features
		f.Stored(&st, lim)
		var seq []uint32
		for _, h := range sketch.AppendShingles(nil, sk.Tokens().Hash, cfg.Shingle) {
			seq = append(seq, uint32(sketch.StoredShingle(h, int(st.ShingleShift))))
		}
		return doc{&st, seq}
	}
	var docs []doc
	for _, n := range []int{300, 700, 1500, 3000, 6000, 20000} {
		docs = append(docs, mk(1000, n), mk(1000+n/3, n/2))
	}
	shifts := map[byte]bool{}
	r := rand.New(rand.NewPCG(1, 2))
	compared, filtered := 0, 0
	for i, a := range docs {
		shifts[a.stored.ShingleShift] = true
		for k := range 4 {
			lo := r.IntN(len(a.seq))
			hi := lo + r.IntN(len(a.seq)-lo) + 1
			var all, kept []uint64
			unkept := sampledOut(a.stored.ShingleShift)
			for _, h := range a.seq[lo:hi] {
				all = append(all, uint64(h))
				if h&unkept == 0 {
					kept = append(kept, uint64(h))
				}
			}
			slices.Sort(all)
			slices.Sort(kept)
			all, kept = slices.Compact(all), slices.Compact(kept)
			filtered += len(all) - len(kept)
			common := []verify.Range{{Lo: lo, Hi: hi}}
			for j, c := range docs {
				if i == j {
					continue
				}
				want := v.VerifyDiscounted(a.stored, c.stored, &verify.Discount{Shingles: all, Common: common})
				got := v.VerifyDiscounted(a.stored, c.stored, &verify.Discount{Shingles: kept, Common: common})
				if !reflect.DeepEqual(want, got) {
					t.Fatalf("doc %d (shift %d) against %d (shift %d), range %d: every common shingle gives %+v, the kept ones %+v",
						i, a.stored.ShingleShift, j, c.stored.ShingleShift, k, fmt.Sprint(want), fmt.Sprint(got))
				}
				compared++
			}
		}
	}
	if len(shifts) < 3 || filtered == 0 {
		t.Fatalf("sampling shifts %v, %d shingles filtered: the test covers too little", shifts, filtered)
	}
	t.Logf("%d verdicts compared, shifts %v, %d common shingles left out", compared, shifts, filtered)
}

// TestOwnText: a source's copied text is what no earlier distinct text
// holds. A section that a different, earlier page held first (a
// generated section many reference pages carry) is not the source's own;
// what an earlier copy of the source itself holds (one text), and what
// pages after the source hold (its copies and quotes), is.
func TestOwnText(t *testing.T) {
	hashes := func(lo, hi int) []uint32 {
		var out []uint32
		for h := lo; h < hi; h++ {
			out = append(out, uint32(h))
		}
		return out
	}
	page := func(anchors []uint32, shingles ...int) *sketch.Features {
		f := &sketch.Features{}
		for i, h := range anchors {
			f.Passage.Anchors = append(f.Passage.Anchors, sketch.Anchor{Hash: uint64(h), Pos: uint32(20 * i)})
		}
		for _, s := range shingles {
			for v := s; v < s+100; v++ {
				f.Shingles = append(f.Shingles, uint64(v))
			}
		}
		return f
	}
	source := page(hashes(1, 31), 1000, 2000)
	feats := map[uint64]*sketch.Features{
		2: page(hashes(1, 11), 5000),        // another text, earlier: its section
		3: page(hashes(11, 21), 1000, 2000), // an earlier copy of the source's text
		5: source,
		7: page(hashes(21, 26), 7000), // a later page quoting the source
	}
	cands := []index.Candidate{{Seq: 7}, {Seq: 5}, {Seq: 3}, {Seq: 2}}
	p := &Pipeline{}
	got := p.ownText(hashes(1, 31), &cands[1], source, cands, func(c *index.Candidate) *sketch.Features { return feats[c.Seq] })
	if want := hashes(11, 31); !slices.Equal(got, want) {
		t.Errorf("copied text %v, want %v", got, want)
	}
	delete(feats, 2) // the other text gone: the whole shared text is the source's
	if got := p.ownText(hashes(1, 31), &cands[1], source, cands, func(c *index.Candidate) *sketch.Features { return feats[c.Seq] }); !slices.Equal(got, hashes(1, 31)) {
		t.Errorf("without the earlier text: copied text %v, want all of it", got)
	}
}

// TestCopyOwnLinks: a document that is a near duplicate of an earlier
// candidate takes no passage evidence against a third candidate from the
// text that all three hold (the earlier copy's own event reported that
// link); what it shares with the third beyond its copy's text stays
// evidence, and against the copy itself nothing changes. Without an
// earlier near duplicate there is no such discount.
// anchorPage returns the features of a page of 200 stored shingles from
// shingles on, holding the passage anchors of the hash ranges [lo, hi)
// given, anchor h at position 5h.
func anchorPage(shingles int, anchors ...[2]int) *sketch.Features {
	f := &sketch.Features{}
	for _, r := range anchors {
		for h := r[0]; h < r[1]; h++ {
			f.Passage.Anchors = append(f.Passage.Anchors, sketch.Anchor{Hash: uint64(h), Pos: uint32(5 * h)})
		}
	}
	for v := shingles; v < shingles+200; v++ {
		f.Shingles = append(f.Shingles, uint64(v))
	}
	return f
}

func TestCopyOwnLinks(t *testing.T) {
	page := anchorPage
	doc := page(1000, [2]int{1, 21}, [2]int{30, 41})
	copyOf := page(1000, [2]int{1, 21})                // an earlier version of the document's text
	other := page(5000, [2]int{1, 11}, [2]int{30, 41}) // another text sharing a section with both
	p := &Pipeline{}
	run := func(feats map[uint64]*sketch.Features) *verify.Discount {
		j := &job{feats: doc, seq: make([]uint32, 4200), cands: []index.Candidate{{Seq: 1}, {Seq: 2}}, earlier: 2}
		p.copyOwnLinks(j, func(c *index.Candidate) *sketch.Features { return feats[c.Seq] }, &hashBits{})
		return j.discount
	}
	d := run(map[uint64]*sketch.Features{1: other, 2: copyOf})
	if d == nil || len(d.Sources) != 1 || d.Sources[0].Features != other {
		t.Fatalf("discount %+v, want one entry, for the other text", d)
	}
	w := sketch.PassageWindow(4200, p.passageWords(), p.cfg.Sketch.Shingle)
	want := []verify.Range{{Lo: max(5-(w-1), 0), Hi: 50 + w}}
	if got := d.Sources[0].Common; !reflect.DeepEqual(got, want) {
		t.Errorf("kept out against the other text %v, want %v (the section all three hold, not 30–40)", got, want)
	}
	if d := run(map[uint64]*sketch.Features{1: other, 2: page(9000, [2]int{1, 21})}); d != nil {
		t.Errorf("no earlier near duplicate: discount %+v, want none", d)
	}
}
