package pipeline

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
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
		Retry:      c.Index.Retry,
		// The index is opened with the same bound (index.Options).
		MaxCandidates: c.Verify.MaxCandidates,
		MaxEventBytes: c.Pipeline.MaxEventBytes,
	}
	pc.Params = Params{
		Profile: c.Profile, Shingle: c.Sketch.Shingle, CharGram: c.Sketch.CharGram, K: c.Sketch.K,
		Method: c.Sketch.Method, Bands: b, Rows: r, Seed: c.Sketch.Seed, SimHashK: c.Sketch.SimHashK,
		Index: indexKind(c.Index.URL), Version: version,
	}
	if c.Pipeline.Granularity == "sentence" {
		pc.Params.Granularity = "sentence"
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
	p = p.WithThresholds(verify.Thresholds{Jaccard: v.Jaccard, Containment: v.Containment, ITS: v.ITS, CS: v.CS, Edit: v.Edit})
	if c.Sketch.PassageWords > 0 && c.Sketch.CharGram == 0 {
		p = p.WithPassages(v.PassageShared)
	}
	if c.Pipeline.Granularity == "sentence" {
		p.Sentences = &verify.SentenceCheck{Threshold: v.Edit, MaxMatches: c.Pipeline.MaxSentenceMatches}
	}
	return p, nil
}

// OpenStore returns the pipeline configuration of c and opens the index
// it names (index.url) with the parameters that configuration gives band
// keys. Configuration errors wrap config.ErrInvalid.
func OpenStore(ctx context.Context, c *config.Config, version string) (Config, index.Store, error) {
	return OpenIndex(ctx, c, version, index.Options{})
}

// OpenIndex is OpenStore in one of the index's modes (mode's
// RequireExisting and ReadOnly; its other fields are ignored, the
// configuration gives them): RequireExisting for a caller that has
// written to the index before (a service whose consumer group has
// committed offsets, a delete), so that a Redis namespace that does not
// exist is index.ErrIndexLost instead of a new, empty one; ReadOnly for a
// caller that only looks (neardup check): a Redis index is opened
// read-only (the namespace must exist, nothing is created, superseded,
// swept or written, a write fails on the server), the memory index as
// usual (it lives and dies with the process; wrap it in index.ReadOnly to
// store nothing). It is where every command turns its configuration into
// the pipeline's settings and its index.
func OpenIndex(ctx context.Context, c *config.Config, version string, mode index.Options) (Config, index.Store, error) {
	pc, err := FromConfig(c, version)
	if err != nil {
		return pc, nil, fmt.Errorf("%w: %w", config.ErrInvalid, err)
	}
	probe, err := New(pc, nil)
	if err != nil {
		return pc, nil, fmt.Errorf("%w: %w", config.ErrInvalid, err)
	}
	tc, err := redisTLS(c)
	if err != nil {
		return pc, nil, fmt.Errorf("%w: %w", config.ErrInvalid, err)
	}
	ix := c.Index
	store, err := index.Open(ctx, ix.URL, index.Options{
		Params:          probe.IndexParams(),
		Namespace:       ix.Namespace,
		Retention:       ix.Retention,
		Generation:      ix.Generation,
		RefreshOnMatch:  ix.RefreshOnMatch,
		CommonDocs:      ix.CommonDocs,
		MaxCandidates:   c.Verify.MaxCandidates,
		Capacity:        ix.Capacity,
		Batch:           ix.Batch,
		Timeout:         ix.Timeout,
		TLS:             tc,
		RequireExisting: mode.RequireExisting,
		ReadOnly:        mode.ReadOnly,
	})
	return pc, store, err
}

// redisTLS builds the Redis TLS settings from index.tls_*; nil when none
// is set (rediss:// then uses the system roots).
func redisTLS(c *config.Config) (*tls.Config, error) {
	ix := c.Index
	if ix.TLSCA == "" && ix.TLSCert == "" && ix.TLSKey == "" {
		return nil, nil
	}
	return config.ClientTLS("index.tls_", ix.TLSCA, ix.TLSCert, ix.TLSKey)
}
