package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/kafkatest"
	"github.com/neardup/neardup/internal/schematest"
	"github.com/neardup/neardup/internal/synth"
)

// Issue 37, point 5: neardup delete does what a member answering a
// tombstone does: after the index, for every id, found or not, the
// deleted event goes to kafka.output_topic and a tombstone to
// kafka.unique_topic (on main it produced nothing, though the README said
// it "does the same"). Run again after a stop between the index and the
// brokers, the ids say not_found and the records still go out.
func TestDeleteProducesEventsAndTombstones(t *testing.T) {
	dir := t.TempDir()
	g := synth.NewGenerator(5, 5000)
	for _, name := range []string{"a.txt", "b.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(g.Text(g.Words(200))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ix := "redis://" + redistest.StartServer(t) + "/0?namespace=dk"
	if code, _, errOut := neardup(t, "scan", "--quiet", "--index", ix, dir); code != 0 {
		t.Fatalf("scan into Redis: exit %d: %s", code, errOut)
	}
	cl := kafkatest.Start(t, kafkatest.Topic("ev", 1), kafkatest.Topic("uniq", 1), kafkatest.Topic("dead", 1))
	a := filepath.Join(dir, "a.txt")
	del := func(ids ...string) string {
		t.Helper()
		args := append([]string{"delete", "--index", ix, "--kafka.brokers", cl.Brokers, "--kafka.output_topic", "ev",
			"--kafka.unique_topic", "uniq", "--kafka.dead_letter_topic", "dead"}, ids...)
		code, out, errOut := neardup(t, args...)
		if code != 0 {
			t.Fatalf("delete %v: exit %d: %s", ids, code, errOut)
		}
		if !strings.Contains(errOut, "deleted events to ev and tombstones to uniq") {
			t.Errorf("delete %v: summary %q does not say what was produced", ids, errOut)
		}
		return out
	}
	if out := del(a, "never-stored"); !strings.Contains(out, `{"id":"`+a+`","kind":"deleted"}`) ||
		!strings.Contains(out, `{"id":"never-stored","kind":"deleted","not_found":true}`) {
		t.Errorf("delete: stdout %q", out)
	}
	del(a) // again: not found now, the records go out all the same
	schema := schematest.Load(t, "event.schema.json")
	var got []string
	for _, m := range cl.WaitFor(t, "ev", 3, time.Minute, nil) {
		schema.Validate(t, m.Value)
		var ev struct {
			ID       string `json:"id"`
			Kind     string `json:"kind"`
			Cluster  string `json:"cluster"`
			NotFound bool   `json:"not_found"`
		}
		if err := json.Unmarshal(m.Value, &ev); err != nil {
			t.Fatal(err)
		}
		if string(m.Key) != ev.ID || ev.Kind != "deleted" || ev.Cluster != ev.ID {
			t.Errorf("event %s keyed %q: want a deleted event keyed by its id", m.Value, m.Key)
		}
		got = append(got, ev.ID+map[bool]string{true: " not_found"}[ev.NotFound])
	}
	if want := []string{a, "never-stored not_found", a + " not_found"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	got = nil
	for _, m := range cl.WaitFor(t, "uniq", 3, time.Minute, nil) {
		if m.Value != nil {
			t.Errorf("unique topic record %q has a value, want a tombstone", m.Key)
		}
		got = append(got, string(m.Key))
	}
	if want := []string{a, "never-stored", a}; !slices.Equal(got, want) {
		t.Errorf("tombstones %q, want %q", got, want)
	}
	// Without brokers the index is changed and the summary says nothing
	// went out.
	code, _, errOut := neardup(t, "delete", "--index", ix, filepath.Join(dir, "b.txt"))
	if code != 0 || !strings.Contains(errOut, "no deleted events or tombstones were produced") {
		t.Errorf("delete without brokers: exit %d %q", code, errOut)
	}
}
