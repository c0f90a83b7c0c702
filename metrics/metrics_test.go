package metrics

import (
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/neardup/neardup/internal/buildinfo"
)

// A nil *Metrics is a valid no-op, so stages run without metrics.
func TestNil(t *testing.T) {
	var m *Metrics
	m.Document("near", true)
	m.Stage(StageSketch, time.Millisecond)
	m.IndexCall("features", errors.New("x"), true)
	m.Lag("t", 0, 3)
	m.Produced("events", nil)
}

func TestCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg, "v1")
	m.Document("near", false)
	m.Document("near", true)
	m.IndexCall("lookup-insert", errors.New("down"), true)
	m.IndexCall("lookup-insert", nil, false)
	m.Lag("docs", 2, 40)
	m.ForgetPartition("docs", 2)
	if v := testutil.ToFloat64(m.documents.WithLabelValues("near")); v != 2 {
		t.Errorf("near %v", v)
	}
	if v := testutil.ToFloat64(m.replays); v != 1 {
		t.Errorf("replays %v", v)
	}
	if v := testutil.ToFloat64(m.indexRetries.WithLabelValues("lookup-insert")); v != 1 {
		t.Errorf("retries %v", v)
	}
	if v := testutil.ToFloat64(m.indexUp); v != 1 {
		t.Errorf("index up %v after a success", v)
	}
	if n := testutil.CollectAndCount(m.lag); n != 0 {
		t.Errorf("%d lag series after forgetting the partition", n)
	}
	// Instances share a registry when each has its own label (neardup demo).
	shared := prometheus.NewRegistry()
	New(prometheus.WrapRegistererWith(prometheus.Labels{"instance": "1"}, shared), "v1")
	New(prometheus.WrapRegistererWith(prometheus.Labels{"instance": "2"}, shared), "v1")
}

// neardup_build_info carries the version, the commit built and the
// toolchain.
func TestBuildInfo(t *testing.T) {
	reg := prometheus.NewRegistry()
	New(reg, "v1.2.3")
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "neardup_build_info" {
			continue
		}
		labels := map[string]string{}
		for _, l := range mf.GetMetric()[0].GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		want := buildinfo.Read("v1.2.3")
		if labels["version"] != "v1.2.3" || labels["goversion"] != want.GoVersion || labels["goversion"] == "" || labels["revision"] != want.Revision {
			t.Errorf("neardup_build_info labels %v, want version v1.2.3, revision %q, goversion %s", labels, want.Revision, want.GoVersion)
		}
		return
	}
	t.Error("no neardup_build_info")
}
