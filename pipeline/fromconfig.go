// This file is the one place that turns configuration into components:
// the sketcher's settings and lexicon, the verification profile, the
// index (opened with its TLS settings) and the pipeline's Config. Every
// command (scan, check, delete, serve, demo) goes through it; config
// itself only loads, checks and resolves settings (config.BandsRows).

package pipeline

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// FromConfig returns the pipeline configuration that a loaded
// configuration describes; version is echoed in events.
func FromConfig(c *config.Config, version string) (Config, error) {
	lex, err := Lexicon(c)
	if err != nil {
		return Config{}, err
	}
	prof, err := VerifyProfile(c)
	if err != nil {
		return Config{}, err
	}
	b, r := c.BandsRows()
	pc := Config{
		Sketch:     SketchConfig(c),
		Lexicon:    lex,
		Limits:     Limits(c),
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
		SettleAfter:   c.Verify.SettleAfter,
		MaxEventBytes: c.Pipeline.MaxEventBytes,
	}
	if pc.GeneratedHosts, err = c.Pipeline.GeneratedHostList(); err != nil {
		return Config{}, fmt.Errorf("pipeline.generated_hosts: %w", err)
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
// RequireExisting and ReadOnly, and Clock, a benchmark's clock; its other
// fields are ignored, the configuration gives them): RequireExisting for a caller that has
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
		Clock:           mode.Clock,
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
	return ClientTLS("index.tls_", ix.TLSCA, ix.TLSCert, ix.TLSKey)
}

// SketchConfig returns the sketch configuration c describes.
func SketchConfig(c *config.Config) sketch.Config {
	s := c.Sketch
	sc := sketch.Config{
		Normalize: sketch.Normalization{FoldQuotes: s.FoldQuotes, StripAccents: s.StripAccents, DropDigits: s.DropDigits, JoinHyphens: s.JoinHyphens},
		Shingle:   s.Shingle,
		CharGram:  s.CharGram,
		K:         s.K,
		Method:    sketch.Method(s.Method),
		Seed:      s.Seed,
		IMatch: sketch.IMatch{
			Mode: sketch.IMatchMode(s.IMatch), Cutoff: s.IMatchCutoff, Keep: s.IMatchKeep, MinTerms: s.IMatchMin,
		},
		KeepText:     s.KeepText,
		SimHashIDF:   s.SimHashIDF,
		MaxBytes:     s.MaxBytes,
		PassageWords: s.PassageWords,
	}
	if c.Pipeline.Granularity == "sentence" {
		p := c.Pipeline
		sc.Sentence = sketch.SentenceConfig{On: true, CharGram: s.SentenceCharGram, Bands: s.SentenceBands, Rows: s.SentenceRows,
			MinChars: p.SentenceMinChars, MaxChars: p.SentenceMaxChars, MaxSentences: p.MaxSentences}
	}
	if s.IMatch == "off" {
		// No digest: a minimum no document reaches.
		sc.IMatch.Mode = sketch.IMatchIDF
		sc.IMatch.MinTerms = 1 << 30
	}
	return sc.WithDefaults()
}

// Limits returns the storage limits of sketched features c sets.
func Limits(c *config.Config) sketch.Limits {
	return sketch.Limits{MaxShingles: c.Sketch.MaxShingles, MaxUnique: c.Sketch.MaxUnique, Passages: c.Sketch.PassageWords > 0,
		Sentences: c.Pipeline.Granularity == "sentence"}
}

// Lexicon loads the I-Match lexicon c names (sketch.lexicon), or returns nil for the
// built-in one.
func Lexicon(c *config.Config) (*sketch.Lexicon, error) {
	if c.Sketch.Lexicon == "" {
		return nil, nil
	}
	f, err := os.Open(c.Sketch.Lexicon)
	if err != nil {
		return nil, fmt.Errorf("config: sketch.lexicon: %w", err)
	}
	defer f.Close()
	lex, err := sketch.ReadLexicon(f)
	if err != nil {
		return nil, fmt.Errorf("config: sketch.lexicon %s: %w", c.Sketch.Lexicon, err)
	}
	return lex, nil
}

// ClientTLS builds a client's TLS settings from PEM files: ca, the roots
// that sign the server's certificate (the system's when empty), and cert
// and key, a client certificate for mutual TLS (both or neither). prefix
// names their keys in errors ("kafka.tls." for kafka.tls.ca, "index.tls_"
// for index.tls_ca). The files are read now, so a bad path fails at
// start, naming its key.
func ClientTLS(prefix, ca, cert, key string) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%sca: %w", prefix, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%sca %s: no PEM certificate found", prefix, ca)
		}
		tc.RootCAs = pool
	}
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("%scert and %skey go together", prefix, prefix)
	}
	if cert != "" {
		c, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%scert/%skey: %w", prefix, prefix, err)
		}
		tc.Certificates = []tls.Certificate{c}
	}
	return tc, nil
}
