package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/pipeline"
)

// deleteBatch is the ids removed per index call.
const deleteBatch = 500

// runDelete implements "neardup delete --index URL [--from FILE] [ID ...]".
func runDelete(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("delete", flag.ContinueOnError)
	fs.SetOutput(stderr)
	overrides, path := config.RegisterFlags(fs, config.PipelineSections...)
	var from pathList
	fs.Var(&from, "from", "read ids from FILE (- for standard input): one id per line, or JSON lines with \"id\" (repeatable)")
	ixURL := fs.String("index", "", "the Redis index (shorthand for --index.url)")
	quiet := fs.Bool("quiet", false, "no summary")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: neardup delete --index URL [--from FILE ...] [ID ...]

Removes documents from a Redis index, as a tombstone on the service's input
topic does: the id, the features, the verdict, and the document's entries in
every bucket and lane. Later documents that named it keep their verdicts.
Writes one JSON line per id to standard output, {"id":…,"kind":"deleted"},
with "not_found":true when the id was not stored (never seen, expired, or
deleted already: deleting twice is harmless).

Exit codes: 0 done (ids not found included), 1 failed (the index
unavailable), 2 bad usage: no id, an id that is not valid, a FILE that does
not exist, the memory index, or bad configuration.

Flags (any configuration key is also a flag; see 'neardup config example'):
`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := loadConfig(*path, *ixURL, overrides)
	if err != nil {
		return err
	}
	if cfg.Index.URL == "" || index.IsMemory(cfg.Index.URL) {
		return usagef("--index names a Redis index (the memory index lives in one process)")
	}
	ids := fs.Args()
	for _, f := range from {
		more, err := readIDs(f)
		if err != nil {
			return err
		}
		ids = append(ids, more...)
	}
	if len(ids) == 0 {
		return usagef("no id (give IDs or --from FILE)")
	}
	for _, id := range ids {
		if err := pipeline.CheckID(id); err != nil {
			return usagef("id %.60q: %w", id, err)
		}
	}
	_, store, err := openExistingStore(ctx, &cfg)
	if errors.Is(err, index.ErrIndexLost) {
		return missingNamespace(ctx, &cfg, "nothing to delete")
	}
	if err != nil {
		return err
	}
	defer store.Close()
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	type line struct {
		ID       string `json:"id"`
		Kind     string `json:"kind"`
		NotFound bool   `json:"not_found,omitempty"`
	}
	removed, missing := 0, 0
	for lo := 0; lo < len(ids); lo += deleteBatch {
		batch := ids[lo:min(lo+deleteBatch, len(ids))]
		found, err := store.Remove(ctx, batch)
		if err != nil {
			return fmt.Errorf("%w (%d of %d ids done)", err, lo, len(ids))
		}
		for i, id := range batch {
			if found[i] {
				removed++
			} else {
				missing++
			}
			if err := enc.Encode(line{ID: id, Kind: pipeline.KindDeleted, NotFound: !found[i]}); err != nil {
				return fmt.Errorf("write: %w", err)
			}
		}
	}
	if !*quiet {
		fmt.Fprintf(stderr, "neardup delete: %d ids: %d deleted, %d not found\n", len(ids), removed, missing)
	}
	return nil
}

// readIDs reads ids from a file (- for standard input): one per line, or
// JSON objects with "id", one per line; blank lines are skipped.
func readIDs(name string) ([]string, error) {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, usagef("%w", err)
		}
		defer f.Close()
		r = f
	}
	var ids []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		b := bytes.TrimSpace(sc.Bytes())
		switch {
		case len(b) == 0:
			continue
		case b[0] == '{':
			var v struct {
				ID *string `json:"id"`
			}
			if err := json.Unmarshal(b, &v); err != nil || v.ID == nil {
				return nil, usagef("%s line %d: a JSON line without a string \"id\"", name, n)
			}
			ids = append(ids, *v.ID)
		default:
			ids = append(ids, string(b))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return ids, nil
}
