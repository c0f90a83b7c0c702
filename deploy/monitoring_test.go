package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

const (
	dashboardFile = "grafana/neardup.json"
	rulesFile     = "prometheus/alerts.yml"
	guideFile     = "../docs/operations.md"
)

// targetLabels are added by Prometheus to every scraped series.
var targetLabels = []string{"job", "instance"}

// dashboard is the part of Grafana's dashboard model the kit uses; it is
// decoded with unknown fields rejected, so a misspelt field fails.
type dashboard struct {
	UID           string   `json:"uid"`
	Title         string   `json:"title"`
	Description   string   `json:"description"`
	Tags          []string `json:"tags"`
	Timezone      string   `json:"timezone"`
	Editable      bool     `json:"editable"`
	GraphTooltip  int      `json:"graphTooltip"`
	SchemaVersion int      `json:"schemaVersion"`
	Version       int      `json:"version"`
	Refresh       string   `json:"refresh"`
	Time          struct{ From, To string }
	Annotations   struct{ List []any }
	Links         []any `json:"links"`
	Templating    struct{ List []variable }
	Panels        []panel `json:"panels"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type variable struct {
	Name       string      `json:"name"`
	Label      string      `json:"label"`
	Type       string      `json:"type"`
	Datasource *datasource `json:"datasource"`
	Query      any         `json:"query"`
	Definition string      `json:"definition"`
	IncludeAll bool        `json:"includeAll"`
	Multi      bool        `json:"multi"`
	AllValue   string      `json:"allValue"`
	Current    struct{}    `json:"current"`
	Hide       int         `json:"hide"`
	Refresh    int         `json:"refresh"`
	Sort       int         `json:"sort"`
}

type panel struct {
	ID          int         `json:"id"`
	Type        string      `json:"type"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	Collapsed   bool        `json:"collapsed"`
	Datasource  *datasource `json:"datasource"`
	GridPos     struct{ H, W, X, Y int }
	FieldConfig struct {
		Defaults struct {
			Unit   string         `json:"unit"`
			Custom map[string]any `json:"custom"`
		} `json:"defaults"`
		Overrides []any `json:"overrides"`
	} `json:"fieldConfig"`
	Options map[string]any `json:"options"`
	Targets []struct {
		RefID        string      `json:"refId"`
		Datasource   *datasource `json:"datasource"`
		Expr         string      `json:"expr"`
		LegendFormat string      `json:"legendFormat"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(readFile(t, dashboardFile)))
	dec.DisallowUnknownFields()
	var d dashboard
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// query is one PromQL expression the kit runs, with where it comes from
// and the label names its output is expected to carry (legends, alert
// templates).
type query struct {
	where  string
	expr   string
	labels []string
}

var legendLabel = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)
var templateLabel = regexp.MustCompile(`\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)`)

// dashboardQueries returns the dashboard's PromQL with Grafana's variables
// replaced by what Grafana would send; an undefined variable fails.
func dashboardQueries(t *testing.T, d dashboard) []query {
	t.Helper()
	vars := map[string]string{"__rate_interval": "1m", "__interval": "15s", "__range": "1h"}
	for _, v := range d.Templating.List {
		vars[v.Name] = ".*"
	}
	varRef := regexp.MustCompile(`\$\{?([a-zA-Z_][a-zA-Z0-9_]*)\}?`)
	expand := func(where, s string) string {
		return varRef.ReplaceAllStringFunc(s, func(m string) string {
			name := varRef.FindStringSubmatch(m)[1]
			v, ok := vars[name]
			if !ok {
				t.Errorf("%s: undefined variable $%s", where, name)
			}
			return v
		})
	}
	var qs []query
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`).FindStringSubmatch(v.Definition)
		if m == nil {
			t.Errorf("variable %s: definition %q is not label_values(selector, label)", v.Name, v.Definition)
			continue
		}
		qs = append(qs, query{where: "variable " + v.Name, expr: expand(v.Name, m[1]), labels: []string{m[2]}})
	}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				where := fmt.Sprintf("panel %q %s", p.Title, tg.RefID)
				var ls []string
				for _, m := range legendLabel.FindAllStringSubmatch(tg.LegendFormat, -1) {
					ls = append(ls, m[1])
				}
				qs = append(qs, query{where: where, expr: expand(where, tg.Expr), labels: ls})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return qs
}

// ruleGroups is a Prometheus rule file, decoded with unknown fields
// rejected; promtool check rules validates it in full (TestAlertRules).
type ruleGroups struct {
	Groups []struct {
		Name        string            `json:"name"`
		Interval    string            `json:"interval"`
		QueryOffset string            `json:"query_offset"`
		Limit       int               `json:"limit"`
		Labels      map[string]string `json:"labels"`
		Rules       []struct {
			Record        string            `json:"record"`
			Alert         string            `json:"alert"`
			Expr          string            `json:"expr"`
			For           string            `json:"for"`
			KeepFiringFor string            `json:"keep_firing_for"`
			Labels        map[string]string `json:"labels"`
			Annotations   map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

func loadRules(t *testing.T) ruleGroups {
	t.Helper()
	var rgs ruleGroups
	strict(t, rulesFile, readFile(t, rulesFile), &rgs)
	return rgs
}

func ruleQueries(rgs ruleGroups) []query {
	var qs []query
	for _, g := range rgs.Groups {
		for _, r := range g.Rules {
			var ls []string
			for _, a := range r.Annotations {
				for _, m := range templateLabel.FindAllStringSubmatch(a, -1) {
					ls = append(ls, m[1])
				}
			}
			qs = append(qs, query{where: "alert " + r.Alert, expr: r.Expr, labels: ls})
		}
	}
	return qs
}

// The dashboard is well formed: unique panel ids, panels inside the 24
// columns and not overlapping, every query panel on the datasource
// variable, every target with an expression, titles and descriptions, and
// every query, its variables expanded, valid PromQL.
func TestDashboardModel(t *testing.T) {
	d := loadDashboard(t)
	t.Run("promtool", func(t *testing.T) { checkPromQL(t, dashboardQueries(t, d)) })
	if d.UID == "" || d.Title == "" || d.SchemaVersion < 36 {
		t.Errorf("uid %q title %q schemaVersion %d", d.UID, d.Title, d.SchemaVersion)
	}
	var dsVar bool
	for _, v := range d.Templating.List {
		if v.Type == "datasource" && v.Name == "datasource" && v.Query == "prometheus" {
			dsVar = true
		}
		if v.Type == "query" && (v.Datasource == nil || v.Datasource.UID != "${datasource}") {
			t.Errorf("variable %s does not query the datasource variable", v.Name)
		}
	}
	if !dsVar {
		t.Error("no prometheus datasource variable named datasource")
	}
	ids := map[int]bool{}
	type cell struct{ x, y int }
	taken := map[cell]string{}
	kinds := []string{"row", "timeseries", "stat", "gauge", "table", "bargauge", "text", "heatmap"}
	for _, p := range d.Panels {
		if ids[p.ID] || p.ID <= 0 {
			t.Errorf("panel %q: id %d repeated or not positive", p.Title, p.ID)
		}
		ids[p.ID] = true
		if !slices.Contains(kinds, p.Type) {
			t.Errorf("panel %q: type %q", p.Title, p.Type)
		}
		g := p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 || g.Y < 0 {
			t.Errorf("panel %q: gridPos %+v outside the 24 columns", p.Title, g)
		}
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, ok := taken[cell{x, y}]; ok {
					t.Errorf("panel %q overlaps %q at (%d, %d)", p.Title, other, x, y)
				}
				taken[cell{x, y}] = p.Title
			}
		}
		if p.Type == "row" {
			continue
		}
		if p.Title == "" || p.Description == "" {
			t.Errorf("panel %d: title %q, description %q", p.ID, p.Title, p.Description)
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" || p.Datasource.Type != "prometheus" {
			t.Errorf("panel %q: datasource %+v, want the ${datasource} variable", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if tg.Expr == "" || tg.RefID == "" || refs[tg.RefID] {
				t.Errorf("panel %q: target %q with expression %q", p.Title, tg.RefID, tg.Expr)
			}
			refs[tg.RefID] = true
		}
	}
	// The list of what on-call looks at.
	for _, m := range []string{"neardup_documents_total", "neardup_consumer_lag_records", "neardup_stage_duration_seconds_bucket",
		"neardup_candidates_per_document_bucket", "neardup_verifications_total", "neardup_index_errors_total",
		"neardup_dead_letters_total", "neardup_bucket_truncations_total"} {
		found := false
		for _, q := range dashboardQueries(t, d) {
			found = found || strings.Contains(q.expr, m+"{")
		}
		if !found {
			t.Errorf("no panel shows %s", m)
		}
	}
}

// A fault an operator must act on shows in an alert and on the dashboard:
// every neardup metric an alert reads is drawn by some panel, so the page
// an alert links to from Grafana shows what fired it.
func TestEveryAlertedMetricOnTheDashboard(t *testing.T) {
	drawn := map[string]bool{}
	for _, q := range dashboardQueries(t, loadDashboard(t)) {
		for _, m := range neardupMetric.FindAllString(q.expr, -1) {
			drawn[m] = true
		}
	}
	for _, q := range ruleQueries(loadRules(t)) {
		for _, m := range neardupMetric.FindAllString(q.expr, -1) {
			if !drawn[m] {
				t.Errorf("%s reads %s, which no dashboard panel shows", q.where, m)
			}
		}
	}
}

var neardupMetric = regexp.MustCompile(`\bneardup_[a-z_]+`)

// checkPromQL has promtool check rules parse each query, as the
// expression of a recording rule in a file of its own making.
func checkPromQL(t *testing.T, qs []query) {
	t.Helper()
	type rule struct {
		Record string `json:"record"`
		Expr   string `json:"expr"`
	}
	var rules []rule
	var index strings.Builder
	for i, q := range qs {
		rules = append(rules, rule{fmt.Sprintf("query_%d", i), q.expr})
		fmt.Fprintf(&index, "query_%d: %s\n", i, q.where)
	}
	y, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "queries", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "queries.yml")
	if err := os.WriteFile(file, y, 0o644); err != nil {
		t.Fatal(err)
	}
	if !promtool(t, "check", "rules", file) {
		t.Logf("the rules are the queries of\n%s", index.String())
	}
}

// The rules pass promtool check rules (Prometheus's rule loader: fields,
// PromQL, templates); every alert has a severity, a summary, a
// description, a for duration and a runbook in the operations guide;
// prometheusrule.yaml carries the same groups for the Prometheus Operator.
func TestAlertRules(t *testing.T) {
	rgs := loadRules(t)
	t.Run("promtool", func(t *testing.T) { promtool(t, "check", "rules", rulesFile) })
	guide := string(readFile(t, guideFile))
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#{2,4} (.+)$`).FindAllStringSubmatch(guide, -1) {
		anchors[githubAnchor(m[1])] = true
	}
	names := map[string]bool{}
	for _, g := range rgs.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				t.Errorf("group %s: a recording rule %s; the kit ships alerts only", g.Name, r.Record)
				continue
			}
			if names[r.Alert] {
				t.Errorf("alert %s defined twice", r.Alert)
			}
			names[r.Alert] = true
			if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
				t.Errorf("%s: severity %q", r.Alert, r.Labels["severity"])
			}
			if hold, err := model.ParseDuration(r.For); err != nil || time.Duration(hold) < time.Minute {
				t.Errorf("%s: for %q (%v): alerts on a single bad scrape page people for nothing", r.Alert, r.For, err)
			}
			for _, a := range []string{"summary", "description", "runbook_url"} {
				if r.Annotations[a] == "" {
					t.Errorf("%s: no %s annotation", r.Alert, a)
				}
			}
			const prefix = "https://github.com/neardup/neardup/blob/main/docs/operations.md#"
			anchor, ok := strings.CutPrefix(r.Annotations["runbook_url"], prefix)
			if !ok || !anchors[anchor] {
				t.Errorf("%s: runbook_url %q is not a heading of docs/operations.md", r.Alert, r.Annotations["runbook_url"])
			}
		}
	}
	if len(names) < 6 {
		t.Errorf("%d alerts", len(names))
	}

	var file, cr map[string]any
	if err := yaml.Unmarshal(readFile(t, rulesFile), &file); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(readFile(t, "kubernetes/prometheusrule.yaml"), &cr); err != nil {
		t.Fatal(err)
	}
	spec, _ := cr["spec"].(map[string]any)
	if a, b := mustJSON(file["groups"]), mustJSON(spec["groups"]); a != b {
		t.Error("kubernetes/prometheusrule.yaml differs from prometheus/alerts.yml")
	}
}

// githubAnchor is the anchor GitHub gives a Markdown heading.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9'):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// analyze is promqlReads for a query of the kit, failing the test with
// where the query comes from when it cannot be read.
func analyze(t *testing.T, q query) selected {
	t.Helper()
	s, err := promqlReads(q.expr)
	if err != nil {
		t.Errorf("%s: %v\n%s", q.where, err, q.expr)
	}
	return s
}

// checkQueries fails for every metric a query reads that the service does
// not export, every label it matches or groups by that those metrics do not
// carry, every equality matcher on a value never seen, and every label a
// legend or annotation prints that the query cannot have.
func checkQueries(t *testing.T, e exported, qs []query) {
	t.Helper()
	for _, q := range qs {
		s := analyze(t, q)
		have := map[string]bool{}
		for _, l := range targetLabels {
			have[l] = true
		}
		for name, ms := range s.names {
			series, ok := e[name]
			if !ok {
				t.Errorf("%s: metric %s is not exported by neardup serve (exported: %s)", q.where, name, e.summary())
				continue
			}
			for l := range series {
				have[l] = true
			}
			for _, m := range ms {
				if slices.Contains(targetLabels, m.name) {
					continue
				}
				values, ok := series[m.name]
				if !ok {
					t.Errorf("%s: %s has no label %s (labels: %v)", q.where, name, m.name, slices.Sorted(maps.Keys(series)))
				} else if m.op == "=" && !values[m.value] {
					t.Errorf("%s: %s{%s=%q} never seen (values: %v)", q.where, name, m.name, m.value, slices.Sorted(maps.Keys(values)))
				}
			}
		}
		for _, l := range slices.Compact(slices.Sorted(slices.Values(append(s.grouping, q.labels...)))) {
			if !have[l] {
				t.Errorf("%s: label %s is on none of the metrics it reads", q.where, l)
			}
		}
	}
}

// Every metric and label the dashboard and the alerting rules read is one
// a running neardup serve exports.
func TestMonitoringAgainstLiveInstance(t *testing.T) {
	e := liveMetrics(t)
	if len(e) < 40 {
		t.Fatalf("only %d series names scraped", len(e))
	}
	t.Run("dashboard", func(t *testing.T) {
		checkQueries(t, e, dashboardQueries(t, loadDashboard(t)))
	})
	t.Run("rules", func(t *testing.T) {
		checkQueries(t, e, ruleQueries(loadRules(t)))
	})
}
