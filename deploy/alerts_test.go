package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// rulesTestFile holds the alerts' unit tests in promtool's format, runnable
// by hand with promtool test rules.
const rulesTestFile = "prometheus/alerts_test.yml"

// promtool runs Prometheus's promtool (Debian's prometheus package; make
// deploy-test extracts it into bin/tools and puts that on PATH) with args.
// A non-zero exit fails the test with promtool's output, and promtool
// returns false.
func promtool(t *testing.T, args ...string) bool {
	t.Helper()
	bin := requireTool(t, "promtool", "make promtool extracts it from Debian's prometheus package into bin/tools (make deploy-test puts that on PATH)")
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		return false
	}
	return true
}

// alertRuleTest is one alert_rule_test case of a promtool test file.
type alertRuleTest struct {
	EvalTime  string `json:"eval_time"`
	Alertname string `json:"alertname"`
	ExpAlerts []struct {
		ExpLabels      map[string]string `json:"exp_labels"`
		ExpAnnotations map[string]string `json:"exp_annotations"`
	} `json:"exp_alerts"`
}

// Each alert fires in the situation it is meant for and stays quiet in a
// similar one that is not: prometheus/alerts_test.yml, run by promtool's
// rule engine, states the labels and expanded annotations of every firing
// case. promtool only compares firing alerts, so for each quiet case the
// test adds a check that the alert's expression returns nothing at that
// time: the alert is not pending either.
func TestAlertScenarios(t *testing.T) {
	rules := map[string]string{} // alert → expression
	for _, g := range loadRules(t).Groups {
		for _, r := range g.Rules {
			rules[r.Alert] = r.Expr
		}
	}
	src := readFile(t, rulesTestFile)
	var typed struct {
		RuleFiles []string `json:"rule_files"`
		Tests     []struct {
			Name          string          `json:"name"`
			AlertRuleTest []alertRuleTest `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(src, &typed); err != nil {
		t.Fatalf("%s: %v", rulesTestFile, err)
	}
	if !slices.Equal(typed.RuleFiles, []string{filepath.Base(rulesFile)}) {
		t.Errorf("%s tests rule files %v, want the kit's %s", rulesTestFile, typed.RuleFiles, filepath.Base(rulesFile))
	}
	// The same file as generic YAML, to add the quiet checks and point
	// rule_files at the kit's rules from a temporary directory.
	var file map[string]any
	if err := yaml.Unmarshal(src, &file); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	file["rule_files"] = []string{abs}
	groups, _ := file["tests"].([]any)
	if len(groups) != len(typed.Tests) {
		t.Fatalf("%s: %d test groups read two ways as %d", rulesTestFile, len(groups), len(typed.Tests))
	}
	covered := map[string][2]bool{} // alert → {fires, quiet}
	for i, g := range typed.Tests {
		group := groups[i].(map[string]any)
		exprTests, _ := group["promql_expr_test"].([]any)
		for _, c := range g.AlertRuleTest {
			expr, ok := rules[c.Alertname]
			if !ok {
				t.Errorf("%s, test %q: no alert %s in %s", rulesTestFile, g.Name, c.Alertname, rulesFile)
				continue
			}
			cov := covered[c.Alertname]
			if len(c.ExpAlerts) == 0 {
				cov[1] = true
				exprTests = append(exprTests, map[string]any{"expr": expr, "eval_time": c.EvalTime, "exp_samples": []any{}})
			} else {
				cov[0] = true
			}
			covered[c.Alertname] = cov
			for _, a := range c.ExpAlerts {
				for name, v := range a.ExpAnnotations {
					if strings.Contains(v, "<no value>") || strings.Contains(v, "error expanding") {
						t.Errorf("%s, test %q: annotation %s expects a broken template: %q", rulesTestFile, g.Name, name, v)
					}
				}
			}
		}
		group["promql_expr_test"] = exprTests
	}
	for name := range rules {
		if c := covered[name]; !c[0] || !c[1] {
			t.Errorf("alert %s needs a firing and a quiet case in %s (have fires %v, quiet %v)", name, rulesTestFile, c[0], c[1])
		}
	}
	y, err := yaml.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	derived := filepath.Join(t.TempDir(), "alerts_test.yml")
	if err := os.WriteFile(derived, y, 0o644); err != nil {
		t.Fatal(err)
	}
	promtool(t, "test", "rules", derived)
}
