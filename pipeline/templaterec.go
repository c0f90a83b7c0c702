package pipeline

import (
	"context"
	"encoding/binary"
	"slices"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sketch"
)

// Template records.
//
// What a page was found to hold of its site's template is recorded with it
// in the index (index/templates.go), so that what one site shows is known
// wherever else its text appears:
//
//   - A block that is template on some site is template wherever it
//     appears: a consent notice that several sites show is learnt from the
//     first of them whose second page shows it, and a later site's first
//     page is not linked to another site's page through it.
//   - A page compared with a page of another site (an article syndicated
//     to it) is compared without either site's template: its own is left
//     out as its discount says, the other page's as that page's record
//     says, on both sides.
//
// A page's record says which of its stored anchors and of the shingles of
// its stored sample are template, and names its finder: the page that
// found the template (the page itself, or for a site's first page, which
// cannot, the first later page of its site that finds a template with it:
// the part of that template the two pages share). A syndicated article is
// never in a record: records hold only what pages of one site with
// different content share in their frame.
//
// One truth (as for source records, common.go): a document uses a record
// only when its finder came before it in input order (a lower Seq), and
// of two records of one page the earlier finder's is kept, whichever is
// written first (index.Store.RecordTemplates). So two members of a
// consumer group reading a stream in turns, or a member restarting in its
// middle, give the events of one uninterrupted scan.
//
// The records of a batch's candidates are read in one call per batch, and
// those the batch writes are written in one call before the next batch is
// looked up; the index stage keeps only those of the batch at hand. A store
// without template records (no Templater) gives none.

// Templater is what template records need of the index; [index.Store]
// implementations satisfy it.
type Templater interface {
	Templates(ctx context.Context, seqs []uint64) ([][]byte, error)
	RecordTemplates(ctx context.Context, seqs []uint64, recs [][]byte) ([]bool, error)
}

// templateRec is a decoded template record: which of a page's stored
// anchors (in their stored order) and of its stored shingle sample values
// (sorted) are template.
type templateRec struct {
	anchors, shingles []bool
}

// templateRecVersion is the first byte of a record's body (after its
// finder: index.AppendTemplate).
const templateRecVersion = 1

// appendTemplateRec encodes r as a record's body: a version byte, then for anchors and for
// shingles a uvarint count and a bitset, least significant bit first.
func appendTemplateRec(dst []byte, r templateRec) []byte {
	dst = append(dst, templateRecVersion)
	for _, bits := range [][]bool{r.anchors, r.shingles} {
		dst = binary.AppendUvarint(dst, uint64(len(bits)))
		var b byte
		for i, on := range bits {
			if on {
				b |= 1 << (i % 8)
			}
			if i%8 == 7 || i == len(bits)-1 {
				dst = append(dst, b)
				b = 0
			}
		}
	}
	return dst
}

// decodeTemplateRec decodes a record of page f (index.AppendTemplate); ok
// is false when it does not decode or does not fit f's stored anchors and
// sample (written by something else, or for other features).
func decodeTemplateRec(rec []byte, f *sketch.Features) (r templateRec, ok bool) {
	_, b, err := index.DecodeTemplate(rec)
	if err != nil || b[0] != templateRecVersion || f == nil {
		return r, false
	}
	b = b[1:]
	want := []int{len(f.Passage.Anchors), len(f.Shingles)}
	out := [2][]bool{}
	for k := range 2 {
		n, w := binary.Uvarint(b)
		if w <= 0 || n != uint64(want[k]) || len(b) < w+(int(n)+7)/8 {
			return r, false
		}
		b = b[w:]
		bits := make([]bool, n)
		for i := range bits {
			bits[i] = b[i/8]&(1<<(i%8)) != 0
		}
		b = b[(int(n)+7)/8:]
		out[k] = bits
	}
	if len(b) != 0 {
		return r, false
	}
	return templateRec{anchors: out[0], shingles: out[1]}, true
}

// templateAnchors returns the stored hashes (sorted, distinct) of f's
// anchors that r marks.
func (r templateRec) templateAnchors(f *sketch.Features) []uint32 {
	var out []uint32
	for i, on := range r.anchors {
		if on {
			out = append(out, uint32(f.Passage.Anchors[i].Hash))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// templateShingles returns f's stored sample values that r marks (sorted).
func (r templateRec) templateShingles(f *sketch.Features) []uint64 {
	var out []uint64
	for i, on := range r.shingles {
		if on {
			out = append(out, f.Shingles[i])
		}
	}
	return out
}

// recordOf returns the record body of page f whose template is the anchors
// whose hash is in anchors (sorted) and the sample values in shingles
// (sorted, stored at width shift); ok is false when it marks nothing.
func recordOf(f *sketch.Features, anchors []uint32, shingles []uint64, shift byte) (rec []byte, ok bool) {
	r := templateRec{anchors: make([]bool, len(f.Passage.Anchors)), shingles: make([]bool, len(f.Shingles))}
	for i, a := range f.Passage.Anchors {
		if _, in := slices.BinarySearch(anchors, uint32(a.Hash)); in {
			r.anchors[i], ok = true, true
		}
	}
	// Values stored at different shifts are compared at the narrower
	// width (sketch.AlignSamples).
	narrow := min(shift, f.ShingleShift)
	mask := func(v uint64, s byte) uint64 {
		if s == narrow {
			return v
		}
		return sketch.MaskShingles(nil, []uint64{v}, narrow)[0]
	}
	drop := make([]uint64, 0, len(shingles))
	for _, v := range shingles {
		drop = append(drop, mask(v, shift))
	}
	slices.Sort(drop)
	for i, v := range f.Shingles {
		if _, in := slices.BinarySearch(drop, mask(v, f.ShingleShift)); in {
			r.shingles[i], ok = true, true
		}
	}
	if !ok {
		return nil, false
	}
	return appendTemplateRec(nil, r), true
}

// templateRecs holds the template records of a batch: those read for its
// candidates and those its documents wrote, by the page's Seq.
type templateRecs struct {
	// off: the index keeps no records, so none is read or written, not
	// even within the batch (what the stream decides must not depend on
	// how it is cut into batches).
	off     bool
	got     map[uint64][]byte // Seq → record read; empty: read, none
	pending []uint64
	written map[uint64][]byte
}

// of returns the record of page seq that document j may use, its finder
// before j (nil: none): of the one this batch wrote and the one read, the
// earlier finder's, as the index keeps it.
func (t *templateRecs) of(j *job, seq uint64) []byte {
	if t.off {
		return nil
	}
	var best []byte
	var bestBy uint64
	for _, r := range [][]byte{t.written[seq], t.got[seq]} {
		by, _, err := index.DecodeTemplate(r)
		if err != nil || by >= j.res.Seq {
			continue
		}
		if best == nil || by < bestBy {
			best, bestBy = r, by
		}
	}
	return best
}

// write records body as the template record of page seq, found by j,
// unless the page has a record j may use (the earliest finder's is kept:
// a later one's would be replaced). It reports whether it wrote.
func (t *templateRecs) write(j *job, seq uint64, body []byte) bool {
	if t.off || t.of(j, seq) != nil {
		return false
	}
	if t.written == nil {
		t.written = map[uint64][]byte{}
	}
	if _, ok := t.written[seq]; !ok {
		t.pending = append(t.pending, seq)
	}
	t.written[seq] = index.AppendTemplate(nil, j.res.Seq, body)
	return true
}

// fetchTemplates reads the template records of the earlier candidates of
// the jobs with a host, in one call. Without a Templater there are none.
func (p *Pipeline) fetchTemplates(ctx context.Context, jobs []*job) (*templateRecs, error) {
	t := &templateRecs{got: map[uint64][]byte{}}
	tr, ok := p.ix.(Templater)
	if !ok {
		t.off = true
		return t, nil
	}
	var seqs []uint64
	for _, j := range jobs {
		if j.feats == nil || j.feats.Host == 0 {
			continue
		}
		for _, c := range j.cands[:min(j.earlier, len(j.cands))] {
			if _, seen := t.got[c.Seq]; !seen {
				t.got[c.Seq] = nil
				seqs = append(seqs, c.Seq)
			}
		}
	}
	if len(seqs) == 0 {
		return t, nil
	}
	var recs [][]byte
	if err := p.retry(ctx, "templates", func(ctx context.Context) error {
		var err error
		recs, err = tr.Templates(ctx, seqs)
		return err
	}); err != nil {
		return nil, err
	}
	for i, seq := range seqs {
		if i < len(recs) {
			t.got[seq] = recs[i]
		}
	}
	return t, nil
}

// recordTemplates writes the records the batch found, in one call.
func (p *Pipeline) recordTemplates(ctx context.Context, t *templateRecs) error {
	tr, ok := p.ix.(Templater)
	if !ok || t == nil || len(t.pending) == 0 {
		return nil
	}
	recs := make([][]byte, len(t.pending))
	for i, seq := range t.pending {
		recs[i] = t.written[seq]
	}
	// Stored false: the page was deleted or expired meanwhile.
	return p.retry(ctx, "record-templates", func(ctx context.Context) error {
		_, err := tr.RecordTemplates(ctx, t.pending, recs)
		return err
	})
}
