package main

import (
	"context"
	"fmt"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

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
