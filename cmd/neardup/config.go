package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/pipeline"
)

// runConfig implements "neardup config example|check".
func runConfig(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("want 'config example [--profile P]' or 'config check [FILE] [flags]'")
	}
	switch args[0] {
	case "example":
		fs := flag.NewFlagSet("config example", flag.ContinueOnError)
		fs.SetOutput(stderr)
		profile := fs.String("profile", "web", "profile whose defaults to print: web, books or sentence")
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return usagef("unexpected arguments %q", fs.Args())
		}
		out := &errWriter{w: stdout}
		if err := config.Example(out, *profile); err != nil {
			return usagef("%w", err)
		}
		return out.err
	case "check":
		fs := flag.NewFlagSet("config check", flag.ContinueOnError)
		fs.SetOutput(stderr)
		overrides, path := config.RegisterFlags(fs)
		fs.Usage = func() {
			fmt.Fprint(stderr, `Usage: neardup config check [FILE | --config FILE] [--key=value ...]

Loads the configuration exactly as serve and scan do (defaults, profile,
FILE, NEARDUP_* environment variables, flags), validates it, and prints
every key's resulting value (secrets masked). Exit codes: 0 valid, 2 the
file is missing or invalid, or a key, variable or flag is unknown or bad.

Flags:
`)
			fs.PrintDefaults()
		}
		file, err := parseWithFile(fs, args[1:], path)
		if err != nil {
			return err
		}
		c, err := config.Load(file, os.Environ(), overrides)
		if err != nil {
			return usagef("%w", err)
		}
		if _, err := pipeline.FromConfig(&c, buildVersion()); err != nil {
			return usagef("%w", err)
		}
		what := "defaults and environment"
		if file != "" {
			what = file
		}
		out := &errWriter{w: stdout}
		fmt.Fprintf(out, "configuration is valid: %s (profile %s)\n", what, c.Profile)
		shown := c.Redacted()
		for _, k := range config.Keys() {
			fmt.Fprintf(out, "%s=%s\n", k, shown[k])
		}
		return out.err
	}
	return usagef("unknown 'config %s'", args[0])
}

// parseWithFile parses "[FILE] [flags]" or "[flags] [FILE]": at most one
// positional argument, the configuration file, which must agree with
// --config when both are given. Flags may follow FILE.
func parseWithFile(fs *flag.FlagSet, args []string, path *string) (string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return "", err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case len(pos) > 1:
		return "", usagef("want one configuration file, got %q", pos)
	case len(pos) == 1 && *path != "" && *path != pos[0]:
		return "", usagef("two configuration files: %s and --config %s", pos[0], *path)
	case len(pos) == 1:
		return pos[0], nil
	}
	return *path, nil
}
