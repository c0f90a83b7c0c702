package main

import (
	"context"
	"errors"
	"fmt"

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

// openExistingStore is openStore for an index that must exist
// (pipeline.OpenExistingStore): a missing namespace is index.ErrIndexLost.
func openExistingStore(ctx context.Context, c *config.Config) (pipeline.Config, index.Store, error) {
	pc, store, err := pipeline.OpenExistingStore(ctx, c, version)
	if errors.Is(err, config.ErrInvalid) || errors.Is(err, index.ErrInvalid) {
		err = fmt.Errorf("%w: %w", errUsage, err)
	}
	return pc, store, err
}
