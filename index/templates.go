package index

import (
	"context"
	"fmt"
)

// Template records.
//
// A site's template is learnt from its pages (pipeline/template.go): text
// that pages of the site with different content share in their frame.
// What a document was found to hold of its site's template is recorded
// with it, so that a later document of another site knows it too: a
// consent notice that several sites show is template wherever it appears
// once one of those sites has shown it on two pages, and a page that
// republishes another site's article is compared with that article
// without the other site's template around it.
//
// A template record is a found record (found.go): the Seq of the document
// that found the template (the page itself, or for a site's first page
// the later page of its site that found it), then bytes opaque to the
// index (the caller's encoding of which of the document's stored anchors
// and shingles are template). Of two records of one document the earlier
// finder's is kept whatever the order of the writes, and a document uses
// a record only when its finder came before it, as with source records.
// It is read by Seq (Templates) and removed with its document (Remove,
// Delete, a generation's expiry). In Redis it is one more record hash
// kind, P t<n>, beside P f<n>, P v<n> and P s<n>.

// MaxTemplateBytes bounds a template record, its finder included.
const MaxTemplateBytes = 1 << 14

// templateKind is the template records' kind of found record (found.go).
var templateKind = foundKind{name: "template", max: MaxTemplateBytes, body: func([]byte) error { return nil }}

// AppendTemplate appends the template record of a document to dst: by,
// the Seq of the document that found the template, 6 bytes big-endian,
// then body (the caller's encoding, at least one byte).
func AppendTemplate(dst []byte, by uint64, body []byte) []byte {
	return append(appendFinder(dst, by), body...)
}

// DecodeTemplate returns the finder and the body of a template record
// (AppendTemplate); a record without a finder, with finder 0 or without a
// body is an error. The body is a part of b.
func DecodeTemplate(b []byte) (by uint64, body []byte, err error) {
	by, body, err = templateKind.split(b)
	if err != nil {
		return 0, nil, fmt.Errorf("decode template record: %w", err)
	}
	return by, body, nil
}

// Templates implements [Store].
func (m *Memory) Templates(ctx context.Context, seqs []uint64) ([][]byte, error) {
	return m.readFound(ctx, seqs, func(d *memDoc) *[]byte { return &d.template })
}

// RecordTemplates implements [Store].
func (m *Memory) RecordTemplates(ctx context.Context, seqs []uint64, recs [][]byte) ([]bool, error) {
	return m.recordFound(ctx, templateKind, seqs, recs, func(d *memDoc) *[]byte { return &d.template })
}

// RecordTemplates records nothing and reports every document as stored,
// as RecordVerdicts does.
func (r readOnly) RecordTemplates(_ context.Context, seqs []uint64, recs [][]byte) ([]bool, error) {
	return r.recordNothing(templateKind, seqs, recs)
}
