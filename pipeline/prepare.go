package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/metrics"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/stream"
)

// prepare turns a decoded document into an index entry, or a dead letter.
// A panic while extracting or sketching (a bug that some input triggers)
// becomes the document's dead letter; the run goes on.
// f and enc are the worker's scratch.
func (p *Pipeline) prepare(s *sketch.Sketcher, f *sketch.Features, enc *[]byte, j *job) (fresh *sketch.Sketcher) {
	defer func() {
		if r := recover(); r != nil {
			j.dead = p.deadLetter(j.item, &InvalidError{Reason: ReasonInternal, ID: j.item.Doc.ID, Detail: fmt.Sprintf("preparing the document panicked: %v", r)})
			j.entry = index.Entry{}
			fresh = nil // the sketcher's buffers may be inconsistent
		}
	}()
	p.prepareDoc(s, f, enc, j)
	// A long document's scratch (hundreds of MiB for 16 MiB of text)
	// is not kept by the worker for the next ones.
	s.Trim()
	f.Trim()
	if cap(*enc) > maxEncScratch {
		*enc = nil
	}
	return s
}

// maxEncScratch is the largest encoding buffer a worker keeps between
// documents.
const maxEncScratch = 1 << 20

func (p *Pipeline) prepareDoc(s *sketch.Sketcher, f *sketch.Features, enc *[]byte, j *job) {
	if j.item.Lazy != nil {
		t0 := time.Now()
		j.item.Decode()
		p.cfg.Metrics.Stage(metrics.StageDecode, time.Since(t0))
	}
	if j.item.Delete {
		p.prepareDelete(j)
		return
	}
	it := j.item
	if it.Err != nil {
		j.dead = p.deadLetter(it, it.Err)
		return
	}
	if err := CheckID(it.Doc.ID); err != nil {
		j.dead = p.deadLetter(it, &InvalidError{Reason: ReasonBadID, ID: strings.ToValidUTF8(stream.Shorten(it.Doc.ID), "?"), Detail: err.Error()})
		return
	}
	text := it.Doc.Text
	if it.Doc.IsHTML {
		if err := extract.CheckText(text); err != nil {
			j.dead = p.deadLetter(it, &InvalidError{Reason: ReasonBinary, ID: it.Doc.ID, Detail: err.Error()})
			return
		}
		text = extract.MainText(text, it.Doc.URL)
	}
	if err := extract.CheckText(text); err != nil {
		j.dead = p.deadLetter(it, &InvalidError{Reason: ReasonBinary, ID: it.Doc.ID, Detail: err.Error()})
		return
	}
	if err := s.Sketch(text, f); err != nil {
		r := ReasonTooLarge
		if !errors.Is(err, sketch.ErrTooLarge) {
			r = ReasonBadField
		}
		j.dead = p.deadLetter(it, &InvalidError{Reason: r, ID: it.Doc.ID, Detail: err.Error()})
		return
	}
	if f.Tokens == 0 {
		j.dead = p.deadLetter(it, &InvalidError{Reason: ReasonEmpty, ID: it.Doc.ID, Detail: "no words after normalization"})
		return
	}
	f.Host = pageHost(it.Doc) // template.go
	if f.Host == 0 {
		f.Host = edgeHost(s.Tokens().Hash, s.Config().Shingle)
		j.edge = f.Host != 0
		j.noSite = j.edge // until its site's pages show three texts (template.go)
	}
	// Encoded in the worker's buffer, then copied out at its exact size:
	// one allocation instead of a dozen growing ones. stored is what enc
	// decodes to, without decoding.
	stored, _ := p.stored.Get().(*sketch.Features)
	if stored == nil {
		stored = &sketch.Features{}
	}
	*enc = s.Encode((*enc)[:0], f, stored, p.limits)
	j.feats = stored
	j.entry = index.Entry{
		ID:         it.Doc.ID,
		Bands:      sketch.BandKeys(make([]uint64, 0, p.cfg.Bands), f.Signature, p.cfg.Bands, p.cfg.Rows),
		SimHash:    f.SimHash,
		HasSimHash: p.cfg.SimHashK >= 0,
		IMatch:     f.IMatch,
		HasIMatch:  f.HasIMatch,
		Content:    f.Content,
		HasContent: true,
		Anchors:    appendSentenceKeys(anchorKeys(f.Passage.Anchors), &f.Sentences),
		Features:   slices.Clone(*enc),
		Origin:     origin(it.Source),
	}
	j.sentenceBase = len(f.Passage.Anchors)
	if f.Host != 0 && len(j.entry.Anchors) < index.MaxAnchors {
		// Every page of a site holds its host's key: its count is the
		// number of the site's pages (template.go).
		j.entry.Anchors = append(j.entry.Anchors, hostKey(f.Host))
	}
	if n := len(f.Passage.Fp); n > 0 && len(f.Passage.Anchors) > 0 {
		// The stored form of the shingle at each position: what a
		// discount of the document's common passages leaves out.
		seq := s.ShingleSeq()[:n]
		j.seq = nil
		if b, ok := p.seqs.Get().(*[]uint32); ok && cap(*b) >= n {
			j.seq = (*b)[:n]
		} else {
			j.seq = make([]uint32, n)
		}
		for i, h := range seq {
			j.seq[i] = uint32(sketch.StoredShingle(h, int(stored.ShingleShift)))
		}
	}
}

// sentenceSalt separates sentence band keys from passage anchors in the
// index's passage table.
const sentenceSalt = 0x73656e74656e6365 // "sentence"

// appendSentenceKeys appends the band keys of a document's sketched
// sentences (sentence mode) to its anchors: a later document with a
// sentence in one of the same buckets finds it through the index's
// passage table, in the same round trip, with the same hot-bucket guard.
func appendSentenceKeys(dst []uint64, s *sketch.Sentences) []uint64 {
	for _, it := range s.Items {
		for _, k := range it.Keys {
			dst = append(dst, sketch.Mix64(k^sentenceSalt))
		}
	}
	return dst
}

// deadLetter describes a rejected input.
func (p *Pipeline) deadLetter(it Item, err error) *DeadLetter {
	dl := &DeadLetter{Reason: ReasonBadField, Error: err.Error(), Source: it.Source, At: p.cfg.Now().UTC().Format(time.RFC3339Nano)}
	var inv *InvalidError
	if errors.As(err, &inv) {
		dl.Reason, dl.ID = inv.Reason, inv.ID
	}
	if dl.ID == "" {
		dl.ID = it.Doc.ID
	}
	raw := it.Raw
	if raw == nil && it.Err == nil {
		raw = it.Doc.Text
	}
	if len(raw) > MaxRawBytes {
		raw, dl.Truncated = raw[:MaxRawBytes], true
	}
	if utf8.Valid(raw) {
		dl.Input = string(raw)
	} else {
		dl.InputBase64 = raw
	}
	return dl
}

// anchorKeys returns the hashes of a document's passage anchors, the keys
// of the index's passage table (nil when the lane is off).
func anchorKeys(as []sketch.Anchor) []uint64 {
	if len(as) == 0 {
		return nil
	}
	out := make([]uint64, len(as))
	for i, a := range as {
		out[i] = a.Hash
	}
	return out
}

// origin is the index's origin of a record read from a Kafka partition
// (index.Origin), "" for other inputs: with it, a document deleted after
// it was stored is not stored again when its record is read again
// (Result.Gone), whatever the records are keyed by.
func origin(src Source) string {
	if src.Topic == "" || src.Partition == nil || src.Offset == nil {
		return ""
	}
	return index.Origin(src.Topic, *src.Partition, *src.Offset)
}
