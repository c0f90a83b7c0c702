package pipeline

import (
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/synth"
)

func TestExplore(t *testing.T) {
	for _, tc := range []struct {
		prof string
		sc   synth.Config
	}{
		{"web", synth.Config{Docs: 10000, Seed: 42, Contain: true}},
		{"books", synth.Config{Docs: 10000, Seed: 42, PartialReplace: 0.2}},
	} {
		docs := synth.Corpus(tc.sc)
		cfg := testConfig(t, tc.prof)
		outs := run(t, cfg, func(p *Pipeline) index.Store { return memoryIndex(t, p) }, synthItems(docs))
		s := score(docs, outs)
		t.Logf("%s bands %dx%d: planted %v found %v wrongKind %v falsePos %d recall %.3f precision %.3f missed %d e.g. %v", tc.prof, cfg.Bands, cfg.Rows, s.planted, s.found, s.wrongKind, s.falsePos, s.recall(), s.precision(), len(s.missed), s.missed[:min(5, len(s.missed))])
	}
}
