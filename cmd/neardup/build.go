package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/pipeline"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// openStore builds the pipeline configuration of c and opens its index
// (pipeline.OpenStore); configuration errors, a bad index.url among them,
// wrap errUsage.
func openStore(ctx context.Context, c *config.Config) (pipeline.Config, index.Store, error) {
	pc, store, err := pipeline.OpenStore(ctx, c, version)
	if errors.Is(err, config.ErrInvalid) || errors.Is(err, index.ErrInvalid) {
		err = fmt.Errorf("%w: %w", errUsage, err)
	}
	return pc, store, err
}

// loadConfig loads the configuration from path, the environment and the flag
// overrides, with ixURL (the --index shorthand, when given) as index.url; a
// configuration that does not load is errUsage.
func loadConfig(path, ixURL string, overrides *config.Overrides) (config.Config, error) {
	if ixURL != "" {
		overrides.Add("index.url", ixURL)
	}
	cfg, err := config.Load(path, os.Environ(), overrides)
	if err != nil {
		return cfg, fmt.Errorf("%w: %w", errUsage, err)
	}
	return cfg, nil
}

// openExistingStore is openStore for an index that must exist
// (pipeline.OpenExistingStore): a missing namespace is index.ErrIndexLost.
func openExistingStore(ctx context.Context, c *config.Config) (pipeline.Config, index.Store, error) {
	pc, store, err := pipeline.OpenExistingStore(ctx, c, version)
	if errors.Is(err, config.ErrInvalid) || errors.Is(err, index.ErrInvalid) {
		err = fmt.Errorf("%w: %w", errUsage, err)
	}
	return pc, store, err
}

// openReadOnlyStore is openStore for a command that only looks
// (pipeline.OpenReadOnlyStore): a Redis namespace is opened read-only.
func openReadOnlyStore(ctx context.Context, c *config.Config) (pipeline.Config, index.Store, error) {
	pc, store, err := pipeline.OpenReadOnlyStore(ctx, c, version)
	if errors.Is(err, config.ErrInvalid) || errors.Is(err, index.ErrInvalid) {
		err = fmt.Errorf("%w: %w", errUsage, err)
	}
	return pc, store, err
}
