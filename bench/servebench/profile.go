package servebench

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/google/pprof/profile"
)

// profiler records a CPU profile to a file.
type profiler struct {
	path string
	f    *os.File
}

func startProfile(path string) (*profiler, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return &profiler{path: path, f: f}, nil
}

// stop ends the profile and returns the share of CPU per stage.
func (p *profiler) stop() ([]profileShare, error) {
	pprof.StopCPUProfile()
	if err := p.f.Close(); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p.path)
	if err != nil {
		return nil, err
	}
	prof, err := profile.Parse(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", p.path, err)
	}
	return profileShares(prof), nil
}

// profileShare is the CPU one stage took.
type profileShare struct {
	stage string
	share float64
}

// stageRules attribute a sample to a stage by the first frame, from the
// leaf up, whose function has one of the prefixes. Standard-library frames
// (encoding/json, the network) are not listed, so they count for their
// caller's stage.
var stageRules = []struct{ stage, prefix string }{
	{"decode", "github.com/neardup/neardup/pipeline.(*Decoder)"},
	{"decode", "github.com/neardup/neardup/pipeline.parseTS"},
	{"decode", "github.com/neardup/neardup/consumer.(*Kafka).feed"},

	{"sketch", "github.com/neardup/neardup/sketch."},
	{"sketch", "github.com/neardup/neardup/extract."},
	{"sketch", "github.com/neardup/neardup/pipeline.(*Pipeline).prepare"},
	{"index", "github.com/neardup/neardup/index."},
	{"index", "github.com/redis/go-redis/"},
	{"index", "github.com/neardup/neardup/pipeline.(*Pipeline).processBatch"},
	{"index", "github.com/neardup/neardup/pipeline.(*Pipeline).fetch"},
	{"verify", "github.com/neardup/neardup/verify."},
	{"resolve", "github.com/neardup/neardup/pipeline.(*Pipeline).resolve"},
	{"resolve", "github.com/neardup/neardup/pipeline.(*Pipeline).observe"},
	{"produce (sink)", "github.com/neardup/neardup/sink."},
	{"consumer (read input, offsets)", "github.com/neardup/neardup/consumer."},
	{"kafka client", "github.com/twmb/franz-go/"},
	{"metrics", "github.com/prometheus/"},
	{"pipeline plumbing", "github.com/neardup/neardup/pipeline."},
	{"service plumbing", "github.com/neardup/neardup/service."},
	{"gc", "runtime.gcBgMarkWorker"},
	{"gc", "runtime.bgsweep"},
	{"gc", "runtime.bgscavenge"},
	{"gc", "runtime.gcAssist"},
}

func profileShares(p *profile.Profile) []profileShare {
	idx := len(p.SampleType) - 1 // cpu nanoseconds
	by := map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		v := s.Value[idx]
		total += v
		by[classify(s)] += v
	}
	var out []profileShare
	for st, v := range by {
		out = append(out, profileShare{st, float64(v) / float64(max(total, 1))})
	}
	slices.SortFunc(out, func(a, b profileShare) int {
		switch {
		case a.share > b.share:
			return -1
		case a.share < b.share:
			return 1
		}
		return strings.Compare(a.stage, b.stage)
	})
	return out
}

func classify(s *profile.Sample) string {
	for _, loc := range s.Location {
		for _, ln := range loc.Line {
			if ln.Function == nil {
				continue
			}
			name := ln.Function.Name
			for _, r := range stageRules {
				if strings.HasPrefix(name, r.prefix) {
					return r.stage
				}
			}
		}
	}
	return "runtime and other"
}

// printProfile prints two breakdowns side by side.
func printProfile(w io.Writer, serve, scan []profileShare) {
	sc := map[string]float64{}
	for _, s := range scan {
		sc[s.stage] = s.share
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, s := range serve {
		fmt.Fprintf(tw, "  %s\t%5.1f%%\t%5.1f%%\t\n", s.stage, 100*s.share, 100*sc[s.stage])
		delete(sc, s.stage)
	}
	for st, v := range sc {
		fmt.Fprintf(tw, "  %s\t%5.1f%%\t%5.1f%%\t\n", st, 0.0, 100*v)
	}
	_ = tw.Flush()
}
