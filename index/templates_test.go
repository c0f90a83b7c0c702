package index

import (
	"errors"
	"testing"
)

func TestTemplateCodec(t *testing.T) {
	b := AppendTemplate(nil, 1<<40+3, []byte{7, 0, 9})
	by, body, err := DecodeTemplate(b)
	if err != nil || by != 1<<40+3 || string(body) != string([]byte{7, 0, 9}) {
		t.Errorf("DecodeTemplate(AppendTemplate) = %d, %x, %v", by, body, err)
	}
	for name, b := range map[string][]byte{
		"short":       {0, 0, 1},
		"finder only": AppendTemplate(nil, 1, nil),
		"no finder":   AppendTemplate(nil, 0, []byte{1}),
	} {
		if _, _, err := DecodeTemplate(b); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: DecodeTemplate(%x) = %v, want ErrInvalid", name, b, err)
		}
	}
}

// runTemplates is the conformance suite's part for template records: the
// part shared with source records (found_test.go).
func runTemplates(t *testing.T, _ backend, open func(*testing.T, storeOpts) Store) {
	runFound(t, templateRecords, open)
}
