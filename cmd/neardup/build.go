package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// openIndex opens the configured band store with the pipeline's parameters.
func openIndex(ctx context.Context, c *config.Config, params index.Params) (index.Store, error) {
	tc, err := tlsConfig(c)
	if err != nil {
		return nil, err
	}
	return index.Open(ctx, c.Index.URL, index.Options{
		Params:         params,
		Namespace:      c.Index.Namespace,
		Retention:      c.Index.Retention,
		Generation:     c.Index.Generation,
		RefreshOnMatch: c.Index.RefreshOnMatch,
		MaxBucket:      c.Index.MaxBucket,
		MaxCandidates:  c.Verify.MaxCandidates,
		Capacity:       c.Index.Capacity,
		Batch:          c.Index.Batch,
		Timeout:        c.Index.Timeout,
		TLS:            tc,
	})
}

// tlsConfig builds the Redis TLS settings from index.tls_*; nil when none
// is set (rediss:// then uses the system roots).
func tlsConfig(c *config.Config) (*tls.Config, error) {
	ix := c.Index
	if ix.TLSCA == "" && ix.TLSCert == "" && ix.TLSKey == "" {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if ix.TLSCA != "" {
		pem, err := os.ReadFile(ix.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("index.tls_ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("index.tls_ca %s: no PEM certificate found", ix.TLSCA)
		}
		tc.RootCAs = pool
	}
	if (ix.TLSCert == "") != (ix.TLSKey == "") {
		return nil, fmt.Errorf("index.tls_cert and index.tls_key go together")
	}
	if ix.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(ix.TLSCert, ix.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("index.tls_cert/tls_key: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}
