package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/pipeline"
	"github.com/neardup/neardup/verify"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// pipelineConfig turns the configuration into the pipeline's.
func pipelineConfig(c *config.Config) (pipeline.Config, error) {
	lex, err := c.Lexicon()
	if err != nil {
		return pipeline.Config{}, err
	}
	prof, err := verifyProfile(c)
	if err != nil {
		return pipeline.Config{}, err
	}
	b, r := c.BandsRows()
	pc := pipeline.Config{
		Sketch:     c.SketchConfig(),
		Lexicon:    lex,
		Limits:     c.Limits(),
		Bands:      b,
		Rows:       r,
		SimHashK:   c.Sketch.SimHashK,
		Verify:     prof,
		Workers:    c.Verify.Workers,
		Batch:      c.Index.Batch,
		EmitUnique: c.Pipeline.Emit == "all",
		MaxMatches: c.Pipeline.MaxMatches,
	}
	pc.Params = pipeline.Params{
		Profile: c.Profile, Shingle: c.Sketch.Shingle, CharGram: c.Sketch.CharGram, K: c.Sketch.K,
		Method: c.Sketch.Method, Bands: b, Rows: r, Seed: c.Sketch.Seed, SimHashK: c.Sketch.SimHashK,
		Index: indexKind(c.Index.URL), Version: version,
	}
	return pc, nil
}

func indexKind(url string) string {
	if i := strings.Index(url, "://"); i > 0 {
		return url[:i]
	}
	return url
}

// openIndex opens the configured band store with the pipeline's parameters.
func openIndex(ctx context.Context, c *config.Config, params index.Params) (index.Store, error) {
	if c.Index.URL == "memory" {
		return index.NewMemory(index.MemoryConfig{
			Params:         params,
			Retention:      c.Index.Retention,
			RefreshOnMatch: c.Index.RefreshOnMatch,
			MaxBucket:      c.Index.MaxBucket,
		})
	}
	return nil, fmt.Errorf("index.url %q: only memory is supported by this build", c.Index.URL)
}

// verifyProfile returns the verification profile of the configuration:
// the named profile with any thresholds the configuration sets.
func verifyProfile(c *config.Config) (verify.Profile, error) {
	p, err := verify.ProfileByName(c.Profile)
	if err != nil {
		return verify.Profile{}, err
	}
	v := c.Verify
	return p.WithThresholds(verify.Thresholds{Jaccard: v.Jaccard, Containment: v.Containment, ITS: v.ITS, CS: v.CS, Edit: v.Edit}), nil
}
