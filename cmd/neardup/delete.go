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
	"log/slog"
	"os"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/pipeline"
	"github.com/neardup/neardup/service"
	"github.com/neardup/neardup/sink"
)

// deleteBatch is the ids removed per index call.
const deleteBatch = 500

// runDelete implements "neardup delete --index URL [--from FILE] [ID ...]".
func runDelete(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("delete", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// kafka: with kafka.brokers set, delete produces the deleted events and
	// the unique topic's tombstones a member would.
	overrides, path := config.RegisterFlags(fs, slices.Concat(config.PipelineSections, []string{"kafka"})...)
	var from pathList
	fs.Var(&from, "from", "read ids from FILE (- for standard input): one id per line, or JSON lines with \"id\" (repeatable)")
	ixURL := fs.String("index", "", "the Redis index (shorthand for --index.url)")
	quiet := fs.Bool("quiet", false, "no summary")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: neardup delete --index URL [--from FILE ...] [ID ...]

Removes documents from a Redis index, as a tombstone on the service's input
topic does: the id, the features, the verdict, and the document's entries in
every bucket and lane. Later documents that named it keep their verdicts.

With Kafka configured (kafka.brokers), it then does what a member answering
a tombstone does: for every id, found or not, the 'deleted' event goes to
kafka.output_topic (keyed by the id) and, when kafka.unique_topic is set, a
tombstone keyed by the id goes there, so a compacted unique topic drops the
document; nothing goes through the input topic. The index is changed first:
if the command stops before the records are acknowledged, run it again (the
ids then say not_found, and the event and tombstone still go out).

Writes one JSON line per id to standard output once it is done with it,
{"id":…,"kind":"deleted"}, with "not_found":true when the id was not stored
(never seen, expired, or deleted already: deleting twice is harmless).

Exit codes: 0 done (ids not found included), 1 failed (the index or the
brokers unavailable: run it again), 2 bad usage: no id, an id that is not
valid, a FILE that does not exist, the memory index, or bad
configuration.

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
	pc, store, err := openIndex(ctx, &cfg, index.Options{RequireExisting: true})
	if errors.Is(err, index.ErrIndexLost) {
		return missingNamespace(ctx, &cfg, "nothing to delete")
	}
	if err != nil {
		return err
	}
	defer store.Close()
	var out *deleteOutputs
	if cfg.Kafka.Brokers != "" {
		if out, err = newDeleteOutputs(ctx, &cfg, pc); err != nil {
			return err
		}
		defer out.close()
	}
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
		if out != nil {
			if err := out.produce(ctx, batch, found); err != nil {
				return fmt.Errorf("delete: %w (%d of %d ids done; the index has removed the next %d: run the command again)", err, lo, len(ids), len(batch))
			}
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
		if out == nil {
			fmt.Fprintln(stderr, "neardup delete: no kafka.brokers: no deleted events or tombstones were produced")
		} else {
			fmt.Fprintf(stderr, "neardup delete: %d deleted events to %s%s\n", len(ids), cfg.Kafka.OutputTopic, out.tombstones())
		}
	}
	return nil
}

// deleteOutputs produces what a member produces for a tombstone: the
// deleted event and, with a unique topic, the tombstone (sink.Kafka, the
// service's sink).
type deleteOutputs struct {
	pl     *pipeline.Pipeline
	snk    *sink.Kafka
	unique string
}

func newDeleteOutputs(ctx context.Context, cfg *config.Config, pc pipeline.Config) (*deleteOutputs, error) {
	k := cfg.Kafka
	if k.OutputTopic == "" {
		return nil, fmt.Errorf("%w: delete: kafka.brokers is set but kafka.output_topic is empty", errUsage)
	}
	pl, err := pipeline.New(pc, nil)
	if err != nil {
		return nil, err
	}
	opts, err := service.ClientOptions(k, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, fmt.Errorf("%w: delete: %w", errUsage, err)
	}
	snk, err := sink.NewKafka(sink.KafkaConfig{Client: opts, EventsTopic: k.OutputTopic, DeadLetterTopic: k.DeadLetterTopic,
		UniqueTopic: k.UniqueTopic, DeliveryTimeout: k.ProduceTimeout})
	if err != nil {
		return nil, err
	}
	return &deleteOutputs{pl: pl, snk: snk, unique: k.UniqueTopic}, nil
}

// produce writes the events (and tombstones) of ids, found[i] telling
// whether ids[i] was stored, and waits until every record is acknowledged.
func (d *deleteOutputs) produce(ctx context.Context, ids []string, found []bool) error {
	errs := make(chan error, len(ids))
	for i, id := range ids {
		ev := d.pl.DeletedEvent(pipeline.Document{ID: id}, pipeline.Source{}, found[i])
		// The record a member answers: a tombstone keyed by the id.
		d.snk.Write(ctx, pipeline.Output{Event: ev}, &kgo.Record{Key: []byte(id)}, func(err error) { errs <- err })
	}
	var first error
	for range ids {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (d *deleteOutputs) tombstones() string {
	if d.unique == "" {
		return " (no kafka.unique_topic: no tombstones)"
	}
	return " and tombstones to " + d.unique
}

func (d *deleteOutputs) close() { d.snk.Close() }

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
