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
// A template record is opaque bytes to the index (the caller's encoding of
// which of the document's stored anchors and shingles are template),
// written once (the first write wins, like a verdict or a source record:
// a replayed batch changes nothing), read by id (Templates), and removed
// with its document (Remove, Delete, a generation's expiry). In Redis it is
// one more record hash kind, P t<n>, beside P f<n>, P v<n> and P s<n>.
//
// Memory and Redis implement Templates and RecordTemplates; they are not
// part of [Store], and a caller whose store lacks them has no template
// records.

// MaxTemplateBytes bounds a template record.
const MaxTemplateBytes = 1 << 14

// checkTemplates validates a RecordTemplates call.
func checkTemplates(ids []string, recs [][]byte) error {
	if len(ids) != len(recs) {
		return fmt.Errorf("%w: %d ids, %d template records", ErrInvalid, len(ids), len(recs))
	}
	for i, c := range recs {
		switch {
		case len(c) == 0:
			return fmt.Errorf("%w: empty template record for %q", ErrInvalid, ids[i])
		case len(c) > MaxTemplateBytes:
			return fmt.Errorf("%w: template record of %d bytes for %q, want ≤ %d", ErrInvalid, len(c), ids[i], MaxTemplateBytes)
		}
	}
	return nil
}

// Templates returns the template record of each id (RecordTemplates), nil
// for ids that are unknown, deleted, expired or have none. The returned
// slices must not be modified.
func (m *Memory) Templates(ctx context.Context, ids []string) ([][]byte, error) {
	return m.records(ctx, ids, func(d *memDoc) []byte { return d.template })
}

// RecordTemplates records recs[i] as the template record of ids[i], first
// write wins; stored[i] is false when ids[i] is not stored.
func (m *Memory) RecordTemplates(ctx context.Context, ids []string, recs [][]byte) ([]bool, error) {
	if err := checkTemplates(ids, recs); err != nil {
		return nil, err
	}
	return m.eachDoc(ctx, ids, func(i int, d *memDoc) {
		if d.template == nil {
			d.template = append([]byte{}, recs[i]...)
		}
	})
}

// Templates of a read-only store are read as they are, when the store
// keeps them.
func (r readOnly) Templates(ctx context.Context, ids []string) ([][]byte, error) {
	t, ok := r.Store.(interface {
		Templates(context.Context, []string) ([][]byte, error)
	})
	if !ok {
		return make([][]byte, len(ids)), nil
	}
	return t.Templates(ctx, ids)
}

// RecordTemplates records nothing and reports every id as stored, as
// RecordVerdicts does.
func (r readOnly) RecordTemplates(_ context.Context, ids []string, recs [][]byte) ([]bool, error) {
	if err := checkTemplates(ids, recs); err != nil {
		return nil, err
	}
	stored := make([]bool, len(ids))
	for i := range stored {
		stored[i] = true
	}
	return stored, nil
}
