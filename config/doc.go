// Package config holds neardup's configuration: one YAML file whose every
// key can be overridden by an environment variable (NEARDUP_ plus the key in
// upper case with dots and dashes as underscores: sketch.k →
// NEARDUP_SKETCH_K) and by a command-line flag (--sketch.k=128).
//
// Precedence, lowest first: built-in defaults, the profile's defaults, the
// file, the environment, flags. Load validates the result and names the
// offending key and its allowed values on error, so a bad setting fails at
// start, never mid-stream.
package config
