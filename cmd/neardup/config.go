package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/neardup/neardup/config"
)

// runConfig implements "neardup config example|check".
func runConfig(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: want 'config example [--profile P]' or 'config check [flags]'", errUsage)
	}
	switch args[0] {
	case "example":
		fs := flag.NewFlagSet("config example", flag.ContinueOnError)
		fs.SetOutput(stderr)
		profile := fs.String("profile", "web", "profile whose defaults to print: web, books or sentence")
		if err := fs.Parse(args[1:]); err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
		return config.Example(stdout, *profile)
	case "check":
		fs := flag.NewFlagSet("config check", flag.ContinueOnError)
		fs.SetOutput(stderr)
		overrides, path := config.RegisterFlags(fs)
		if err := fs.Parse(args[1:]); err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
		c, err := config.Load(*path, os.Environ(), overrides)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "configuration is valid (profile %s)\n", c.Profile)
		for _, k := range config.Keys() {
			v, _ := c.Display(k)
			fmt.Fprintf(stdout, "%s=%s\n", k, v)
		}
		return nil
	}
	return fmt.Errorf("%w: unknown 'config %s'", errUsage, args[0])
}
