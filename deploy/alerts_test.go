package deploy

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
)

// scenario is one block of testdata/alerts.txt.
type scenario struct {
	line  int
	alert string
	fires bool
	at    time.Duration
	load  string
}

func readScenarios(t *testing.T) []scenario {
	t.Helper()
	var out []scenario
	for i, l := range strings.Split(string(readFile(t, "testdata/alerts.txt")), "\n") {
		switch {
		case strings.HasPrefix(l, "alert "):
			var s scenario
			var verdict, at string
			if _, err := fmt.Sscanf(l, "alert %s %s at %s", &s.alert, &verdict, &at); err != nil || (verdict != "fires" && verdict != "quiet") {
				t.Fatalf("alerts.txt:%d: %q: want 'alert NAME fires|quiet at DURATION'", i+1, l)
			}
			d, err := time.ParseDuration(at)
			if err != nil {
				t.Fatalf("alerts.txt:%d: %v", i+1, err)
			}
			s.line, s.fires, s.at = i+1, verdict == "fires", d
			out = append(out, s)
		case strings.HasPrefix(l, "#"), len(out) == 0:
		default:
			out[len(out)-1].load += l + "\n"
		}
	}
	return out
}

// Each alert fires in the situation it is meant for and stays quiet in a
// similar one that is not, evaluated by Prometheus's rule engine on the
// series of testdata/alerts.txt (like promtool test rules), with its for
// duration and its annotations expanded without error.
func TestAlertScenarios(t *testing.T) {
	rgs := loadRules(t)
	type ruleDef struct {
		expr, name string
		hold       time.Duration
		labels     labels.Labels
		ann        labels.Labels
	}
	defs := map[string]ruleDef{}
	for _, g := range rgs.Groups {
		for _, r := range g.Rules {
			defs[r.Alert] = ruleDef{r.Expr, r.Alert, time.Duration(r.For), labels.FromMap(r.Labels), labels.FromMap(r.Annotations)}
		}
	}
	covered := map[string][2]bool{}
	for _, s := range readScenarios(t) {
		t.Run(fmt.Sprintf("line%d_%s", s.line, s.alert), func(t *testing.T) {
			def, ok := defs[s.alert]
			if !ok {
				t.Fatalf("alerts.txt:%d: no alert %s in %s", s.line, s.alert, rulesFile)
			}
			c := covered[s.alert]
			if s.fires {
				c[0] = true
			} else {
				c[1] = true
			}
			covered[s.alert] = c
			store := promqltest.LoadedStorage(t, s.load)
			t.Cleanup(func() { store.Close() })
			engine := promqltest.NewTestEngine(t, false, 5*time.Minute, 1e6)
			expr, err := promql.ParseExpr(def.expr)
			if err != nil {
				t.Fatal(err)
			}
			rule := rules.NewAlertingRule(def.name, expr, def.hold, 0, def.labels, def.ann, labels.EmptyLabels(), "", false, slog.New(slog.DiscardHandler))
			query := rules.EngineQueryFunc(engine, store)
			for ts := time.Duration(0); ts <= s.at; ts += time.Minute {
				if _, err := rule.Eval(context.Background(), 0, time.Unix(0, 0).UTC().Add(ts), query, nil, 0); err != nil {
					t.Fatalf("eval at %v: %v", ts, err)
				}
			}
			active := rule.ActiveAlerts()
			firing := 0
			for _, a := range active {
				if a.State == rules.StateFiring {
					firing++
				}
				a.Annotations.Range(func(l labels.Label) {
					if strings.Contains(l.Value, "error expanding") || strings.Contains(l.Value, "<no value>") {
						t.Errorf("annotation %s: %q", l.Name, l.Value)
					}
				})
			}
			switch {
			case s.fires && firing == 0:
				t.Errorf("alerts.txt:%d: %s is not firing at %v (%d pending)", s.line, s.alert, s.at, len(active))
			case !s.fires && len(active) > 0:
				t.Errorf("alerts.txt:%d: %s is %v at %v, want quiet", s.line, s.alert, active[0].State, s.at)
			}
		})
	}
	for name := range defs {
		if c := covered[name]; !c[0] || !c[1] {
			t.Errorf("alert %s needs a firing and a quiet scenario in testdata/alerts.txt (have %v)", name, c)
		}
	}
}
