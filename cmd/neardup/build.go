package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/buildinfo"
	"github.com/neardup/neardup/internal/suggest"
	"github.com/neardup/neardup/pipeline"
)

// version is a version stamped at link time (-ldflags "-X
// main.version=…", as make image and the Containerfile do); empty, the
// build information the Go toolchain recorded gives it (buildVersion).
var version string

// buildVersion is the version of this binary: what version and events'
// params.version say and neardup_build_info carries (internal/buildinfo).
func buildVersion() string { return buildinfo.Read(version).Version }

// openIndex builds the pipeline configuration of c and opens its index in
// mode (pipeline.OpenIndex: index.Options.RequireExisting for an index that
// must exist, ReadOnly for one only looked at), as every command does;
// configuration errors, a bad index.url among them, wrap errUsage.
func openIndex(ctx context.Context, c *config.Config, mode index.Options) (pipeline.Config, index.Store, error) {
	pc, store, err := pipeline.OpenIndex(ctx, c, buildVersion(), mode)
	return pc, store, openError(c, err)
}

// openError marks configuration errors as usage errors and says, for an
// index that cannot be reached, which server was tried.
func openError(c *config.Config, err error) error {
	switch {
	case errors.Is(err, config.ErrInvalid) || errors.Is(err, index.ErrInvalid):
		return usagef("%w", err)
	case errors.Is(err, index.ErrUnavailable):
		return fmt.Errorf("%w (is the Redis server of index.url %s up and reachable?)", err, index.RedactURL(c.Index.URL))
	}
	return err
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
		return cfg, usagef("%w", err)
	}
	return cfg, nil
}

// missingNamespace explains a command (delete, check) whose namespace does
// not exist on the server: nothing, in what's words, to do there. It is no
// data loss when the server holds other namespaces (a mistyped or
// never-written name: the closest one is suggested); a server with no
// index at all was never written to, or lost its data. Either is a usage
// error (exit 2), as a path that does not exist is.
func missingNamespace(ctx context.Context, cfg *config.Config, what string) error {
	ns := cfg.Index.Namespace
	if rc, _, err := index.ParseURL(cfg.Index.URL, index.Options{Namespace: ns}); err == nil {
		ns = rc.Namespace // ?namespace= of the URL, when given
	}
	where := index.RedactURL(cfg.Index.URL)
	names, complete, err := index.Namespaces(ctx, cfg.Index.URL, index.Options{Timeout: cfg.Index.Timeout}, 5*time.Second)
	switch {
	case err != nil:
		return fmt.Errorf("namespace %q does not exist on %s, and listing the others failed: %w", ns, where, err)
	case len(names) == 0 && complete:
		return usagef("namespace %q does not exist on %s, nor does any other index: %s. "+
			"The server was never written to by neardup (check --index), or it restarted without its data (docs/operations.md, \"Redis persistence\")", ns, where, what)
	}
	hint := ""
	if best := suggest.Closest(ns, names); best != "" {
		hint = fmt.Sprintf("; did you mean --index.namespace %s?", best)
	}
	more := ""
	if !complete {
		more = " (and maybe more: the listing was cut short)"
	}
	return usagef("namespace %q does not exist on %s: %s (the server holds %s%s%s)",
		ns, where, what, strings.Join(names, ", "), more, hint)
}
