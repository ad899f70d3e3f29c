package alerts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/internal/alerts"
	"github.com/strata-dev/strata/internal/testutil"
)

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = root(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestPromtoolCheckRules: promtool accepts the rule files: config's, and the chart's copy when
// the chart is there.
func TestPromtoolCheckRules(t *testing.T) {
	pt := testutil.Tool(t, "promtool", "PROMTOOL")
	files := []string{"config/prometheus/rules.yaml"}
	if _, err := os.Stat(filepath.Join(root(t), "charts", "strata", "files", "prometheus-rules.yaml")); err == nil {
		files = append(files, "charts/strata/files/prometheus-rules.yaml")
	}
	t.Log(run(t, pt, append([]string{"check", "rules"}, files...)...))
}

// TestPromtoolTestRules runs the rules' unit tests: input series for every alert, firing and not.
func TestPromtoolTestRules(t *testing.T) {
	pt := testutil.Tool(t, "promtool", "PROMTOOL")
	files, err := filepath.Glob(filepath.Join(root(t), "config", "prometheus", "tests", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no promtool tests in config/prometheus/tests: %v", err)
	}
	args := []string{"test", "rules"}
	for _, f := range files {
		rel, _ := filepath.Rel(root(t), f)
		args = append(args, rel)
	}
	t.Log(run(t, pt, args...))
}

// TestEveryAlertIsTested: each alert (and each severity of it) has a promtool test where it
// fires and one where it does not.
func TestEveryAlertIsTested(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(root(t), "config", "prometheus", "tests", "*.yaml"))
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Tests []struct {
				AlertRuleTest []struct {
					Alertname string `yaml:"alertname"`
					ExpAlerts []struct {
						ExpLabels map[string]string `yaml:"exp_labels"`
					} `yaml:"exp_alerts"`
				} `yaml:"alert_rule_test"`
			} `yaml:"tests"`
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tc := range doc.Tests {
			for _, a := range tc.AlertRuleTest {
				if len(a.ExpAlerts) == 0 {
					quiet[a.Alertname] = true
				}
				for _, e := range a.ExpAlerts {
					fires[a.Alertname+"/"+e.ExpLabels["severity"]] = true
				}
			}
		}
	}
	for _, a := range alerts.All() {
		if !fires[a.Name+"/"+a.Severity] {
			t.Errorf("no promtool test where %s (%s) fires", a.Name, a.Severity)
		}
		if !quiet[a.Name] {
			t.Errorf("no promtool test where %s does not fire", a.Name)
		}
	}
}
