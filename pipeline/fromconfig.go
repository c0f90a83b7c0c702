package pipeline

import (
	"strings"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/verify"
)

// FromConfig returns the pipeline configuration that a loaded
// configuration describes; version is echoed in events.
func FromConfig(c *config.Config, version string) (Config, error) {
	lex, err := c.Lexicon()
	if err != nil {
		return Config{}, err
	}
	prof, err := VerifyProfile(c)
	if err != nil {
		return Config{}, err
	}
	b, r := c.BandsRows()
	pc := Config{
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
		// The index is opened with the same bound (index.Options).
		MaxCandidates: c.Verify.MaxCandidates,
		MaxEventBytes: c.Pipeline.MaxEventBytes,
	}
	pc.Params = Params{
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

// VerifyProfile returns the verification profile of a configuration: the
// named profile with the thresholds the configuration sets.
func VerifyProfile(c *config.Config) (verify.Profile, error) {
	p, err := verify.ProfileByName(c.Profile)
	if err != nil {
		return verify.Profile{}, err
	}
	v := c.Verify
	return p.WithThresholds(verify.Thresholds{Jaccard: v.Jaccard, Containment: v.Containment, ITS: v.ITS, CS: v.CS, Edit: v.Edit}), nil
}
