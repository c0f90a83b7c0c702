package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/neardup/neardup/sketch"
)

// SketchConfig returns the sketch configuration these settings describe.
// Method is the MinHash variant; pass "" for the configured one.
func (c *Config) SketchConfig() sketch.Config {
	s := c.Sketch
	sc := sketch.Config{
		Normalize: sketch.Normalization{FoldQuotes: s.FoldQuotes, StripAccents: s.StripAccents, DropDigits: s.DropDigits},
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

// Limits returns the storage limits of sketched features.
func (c *Config) Limits() sketch.Limits {
	return sketch.Limits{MaxShingles: c.Sketch.MaxShingles, MaxUnique: c.Sketch.MaxUnique, Passages: c.Sketch.PassageWords > 0,
		Sentences: c.Pipeline.Granularity == "sentence"}
}

// BandsRows returns the LSH bands and rows: the configured ones, or those
// sketch.BandsWeighted chooses for k, the threshold and the recall weight.
func (c *Config) BandsRows() (b, r int) {
	if c.Sketch.Bands > 0 {
		return c.Sketch.Bands, c.Sketch.Rows
	}
	return sketch.BandsWeighted(c.Sketch.K, c.Sketch.Threshold, c.Sketch.RecallWeight)
}

// Lexicon loads the configured I-Match lexicon, or returns nil for the
// built-in one.
func (c *Config) Lexicon() (*sketch.Lexicon, error) {
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
