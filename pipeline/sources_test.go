package pipeline

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// markSources reads a candidate's source from what the index returned
// with it (Candidate.Source) and from what an earlier job of the batch
// found, and records a source only when the index has none for it.
func TestMarkSourcesFromIndex(t *testing.T) {
	const n = 50
	anchors := make([]sketch.Anchor, n)
	keys := make([]uint64, n)
	var copied []uint32 // the source's copied text: anchors 0…44
	for i := range anchors {
		anchors[i] = sketch.Anchor{Hash: uint64(i + 1), Pos: uint32(20 * i)}
		keys[i] = uint64(1000 + i)
		if i < 45 {
			copied = append(copied, uint32(i+1))
		}
	}
	commonKeys, docs := keys[:45], slices.Repeat([]int{5}, 45)
	feats := &sketch.Features{Passage: sketch.Passage{Anchors: anchors}}
	rec := index.AppendSource(nil, 5, copied)    // found by document 5
	later := index.AppendSource(nil, 30, copied) // found by document 30
	// whole copies the source whole; partial holds its text as a common
	// passage among text of its own. Both stand at Seq seq.
	whole := func(src []byte, seq uint64) *job {
		return &job{entry: index.Entry{Anchors: keys}, feats: feats, sentenceBase: n,
			res:   index.Result{Seq: seq, CommonAnchors: commonKeys, CommonAnchorDocs: docs},
			cands: []index.Candidate{{ID: "source", Seq: 1, Source: src}}, earlier: 1,
			discount: &verify.Discount{}, commonShare: 0.9}
	}
	// own copies the source whole but little of it is common yet (a page
	// of its own site's frame around a lightly edited copy); with a url
	// (host) it finds the source all the same (findsSources).
	own := func(host uint64) *job {
		f := *feats
		f.Host = host
		return &job{entry: index.Entry{Anchors: keys}, feats: &f, sentenceBase: n,
			res:   index.Result{Seq: 10, CommonAnchors: commonKeys[:5], CommonAnchorDocs: docs[:5]},
			cands: []index.Candidate{{ID: "source", Seq: 1, Source: []byte{}}}, earlier: 1,
			discount: &verify.Discount{Common: []verify.Range{{Lo: 0, Hi: 100}}}, commonShare: 0.1}
	}
	partial := func(src []byte, seq uint64) *job {
		return &job{entry: index.Entry{Anchors: keys}, feats: feats, sentenceBase: n,
			res:   index.Result{Seq: seq, CommonAnchors: commonKeys, CommonAnchorDocs: docs},
			cands: []index.Candidate{{ID: "source", Seq: 1, Source: src}}, earlier: 1,
			discount: &verify.Discount{Common: []verify.Range{{Lo: 0, Hi: 20 * 45}}}, commonShare: 0.5}
	}
	for _, tt := range []struct {
		name     string
		jobs     []*job
		recorded []uint64 // sources the batch records
		evidence []bool   // per job: the source's text is evidence
	}{
		{"a source in the index", []*job{partial(rec, 20)}, nil, []bool{true}},
		{"no source in the index", []*job{partial([]byte{}, 20)}, nil, []bool{false}},
		{"an undecodable record", []*job{partial([]byte{1, 2, 3}, 20)}, nil, []bool{false}},
		// A source a later document found (one decided before this one was
		// replayed) is not this one's: an uninterrupted run had not found
		// it yet.
		{"a source found later", []*job{partial(later, 20)}, nil, []bool{false}},
		{"a whole copy records a new source", []*job{whole([]byte{}, 10)}, []uint64{1}, []bool{false}},
		{"a whole copy of a known source records nothing", []*job{whole(rec, 10)}, nil, []bool{false}},
		{"an earlier whole copy records it again", []*job{whole(later, 10)}, []uint64{1}, []bool{false}},
		{"a later job of the batch sees it", []*job{whole([]byte{}, 10), partial([]byte{}, 20)}, []uint64{1}, []bool{false, true}},
		{"a page with a url copied whole records a new source", []*job{own(7)}, []uint64{1}, []bool{false}},
		{"a document without a url, mostly its own text, records none", []*job{own(0)}, nil, []bool{false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &Pipeline{sources: newSourceSet(8)}
			p.markSources(tt.jobs, func(*index.Candidate) *sketch.Features { return feats })
			if !slices.Equal(p.sources.pending, tt.recorded) {
				t.Errorf("recorded %v, want %v", p.sources.pending, tt.recorded)
			}
			for i, j := range tt.jobs {
				if got := len(j.discount.Sources) > 0; got != tt.evidence[i] {
					t.Errorf("job %d: sources %v, want evidence %v", i, j.discount.Sources, tt.evidence[i])
				}
			}
			// A whole copy records the text it shares with the source,
			// common yet or not: here all of the source's anchors.
			if want := hashesOf(anchors); len(tt.recorded) > 0 && (!slices.Equal(p.sources.copied[1].hashes, want) || p.sources.copied[1].by != 10) {
				t.Errorf("copied text %v, want %v found by 10", p.sources.copied[1], want)
			}
		})
	}
}

func hashesOf(as []sketch.Anchor) []uint32 {
	out := make([]uint32, len(as))
	for i, a := range as {
		out[i] = uint32(a.Hash)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
