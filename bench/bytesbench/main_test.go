package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/index"
)

func TestCallDist(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	tests := []struct {
		name     string
		logged   []time.Duration
		calls    int64
		slowAt   time.Duration
		p50, p99 string
		max      time.Duration
		over20   int
	}{
		{"none", nil, 0, ms(1), "–", "–", 0, 0},
		{"all below the threshold", nil, 100, ms(1), "< 1ms", "< 1ms", 0, 0},
		{"tail logged", []time.Duration{ms(25), ms(3)}, 100, ms(1), "< 1ms", "3ms", ms(25), 1},
		{"every call logged", []time.Duration{ms(4), ms(2), ms(3), ms(21)}, 4, 0, "3ms", "21ms", ms(21), 1},
		{"half logged", []time.Duration{ms(6), ms(5)}, 4, ms(1), "< 1ms", "6ms", ms(6), 0},
		{"threshold unknown", []time.Duration{ms(30)}, 10, -1, "?", "30ms", ms(30), 1},
		{"more logged than counted", []time.Duration{ms(2), ms(7), ms(9)}, 2, ms(1), "7ms", "9ms", ms(9), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := callDist(tt.logged, tt.calls, tt.slowAt)
			if d.p50 != tt.p50 || d.p99 != tt.p99 || d.max != tt.max || d.over20 != tt.over20 {
				t.Errorf("callDist = %+v, want p50 %s p99 %s max %v over20 %d", d, tt.p50, tt.p99, tt.max, tt.over20)
			}
		})
	}
}

// A whole run, small, on each kind of index: every table is printed
// without an error, including the sections of stored features when the
// sample holds exact copies, which keep none on Redis.
func TestRunSmall(t *testing.T) {
	for _, ix := range []string{"memory", "local-redis"} {
		t.Run(ix, func(t *testing.T) {
			if err := run("generated", 400, "", "web", ix, "200,400", "", 1000, 0, 20000); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A window prints the candidates per document the index returned since
// the previous checkpoint, from its counters; "–" without counters.
func TestWindowCandidates(t *testing.T) {
	var c uint64
	stats := func() index.Stats { return index.Stats{Candidates: c} }
	tests := []struct {
		name  string
		stats func() index.Stats
		docs  int
		cands uint64
		want  string
	}{
		{"first window", stats, 200, 500, "| 2.50 |"},
		{"second window", stats, 400, 600, "| 0.50 |"},
		{"no counters", nil, 200, 0, "| – |"},
	}
	w := &window{t0: time.Now(), stats: stats}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.stats == nil {
				w = &window{t0: time.Now()}
			}
			c = tt.cands
			got := captureStdout(t, func() {
				if err := w.report(context.Background(), tt.docs, 0); err != nil {
					t.Fatal(err)
				}
			})
			if !strings.HasSuffix(strings.TrimSpace(got), tt.want) {
				t.Errorf("row %q, want it to end with %q", got, tt.want)
			}
		})
	}
}

func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = wr
	f()
	os.Stdout = old
	wr.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// insideOf splits a window's commands: script calls, the commands they
// ran, the client's HMGETs, and leaves out the benchmark's own.
func TestInsideOf(t *testing.T) {
	before := map[string][2]float64{"evalsha": {10, 1000}, "hget": {100, 100}}
	after := map[string][2]float64{"evalsha": {12, 1600}, "hget": {300, 300}, "hsetnx": {100, 150}, "hmget": {4, 8}, "info": {5, 50}}
	in := insideOf(before, after, 2)
	if in.scriptCalls != 1 || in.scriptUS != 300 || in.nestedUS != 175 || in.outsideCalls != 2 || in.commands != 153 {
		t.Errorf("insideOf = %+v", in)
	}
	if len(in.perDoc) != 4 || in.perDoc[0].name != "hget" || in.perDoc[0].calls != 100 || in.perDoc[0].usc != 1 {
		t.Errorf("per document %+v, want hget first at 100 calls of 1 µs", in.perDoc)
	}
}
