package pipeline

import (
	"errors"
	"time"
	"unicode/utf8"

	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sketch"
)

// prepare turns a decoded document into an index entry, or a dead letter.
func (p *Pipeline) prepare(s *sketch.Sketcher, f *sketch.Features, j *job) {
	it := j.item
	if it.Err != nil {
		j.dead = p.deadLetter(it, it.Err)
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
	enc := f.AppendBinary(nil, p.limits)
	stored := &sketch.Features{}
	f.Stored(stored, p.limits) // what enc decodes to, without decoding
	j.feats = stored
	j.entry = index.Entry{
		ID:         it.Doc.ID,
		Bands:      sketch.BandKeys(make([]uint64, 0, p.cfg.Bands), f.Signature, p.cfg.Bands, p.cfg.Rows),
		SimHash:    f.SimHash,
		HasSimHash: p.cfg.SimHashK >= 0,
		IMatch:     f.IMatch,
		HasIMatch:  f.HasIMatch,
		Features:   enc,
	}
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
