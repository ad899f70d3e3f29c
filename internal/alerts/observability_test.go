package alerts_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/internal/alerts"
	"github.com/strata-dev/strata/internal/dashboards"
	"github.com/strata-dev/strata/internal/metrics"
)

// root is the repository's root.
func root(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// query is one PromQL expression of a rule or a dashboard panel.
type query struct{ where, expr string }

func ruleQueries() []query {
	var out []query
	for _, a := range alerts.All() {
		out = append(out, query{"alert " + a.Name + " (" + a.Severity + ")", a.Expr})
	}
	return out
}

func dashboardQueries(t *testing.T) []query {
	t.Helper()
	panels, err := dashboards.Queries()
	if err != nil {
		t.Fatal(err)
	}
	var out []query
	for _, p := range panels {
		out = append(out, query{"dashboard " + p.Dashboard + ", panel " + p.Panel, p.Expr})
	}
	if len(out) == 0 {
		t.Fatal("no dashboard queries found")
	}
	return out
}

var pql = parser.NewParser(parser.Options{})

// TestPromQLParses parses every expression of the rules and the dashboards with Prometheus'
// own parser.
func TestPromQLParses(t *testing.T) {
	for _, q := range append(ruleQueries(), dashboardQueries(t)...) {
		if _, err := pql.ParseExpr(q.expr); err != nil {
			t.Errorf("%s: %v\n%s", q.where, err, q.expr)
		}
	}
}

// metricNames returns the metric names an expression selects.
func metricNames(t *testing.T, q query) []string {
	t.Helper()
	e, err := pql.ParseExpr(q.expr)
	if err != nil {
		t.Fatalf("%s: %v", q.where, err)
	}
	var names []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName && m.Type != labels.MatchEqual {
				t.Errorf("%s selects metrics by a regular expression (%s): name them", q.where, m)
			}
			if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
				name = m.Value
			}
		}
		names = append(names, name)
		return nil
	})
	return names
}

// metricTable is docs/metrics.md's tables: metric name → its row's cells.
func metricTable(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `([a-zA-Z_:][a-zA-Z0-9_:]*)` \\|(.*)\\|$")
	out := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var cells []string
		for _, c := range strings.Split(m[2], "|") {
			cells = append(cells, strings.TrimSpace(c))
		}
		out[m[1]] = cells
	}
	return out
}

// TestEveryMetricIsKnown: every metric a rule or a panel uses is registered by the operator
// (internal/metrics, or the table's controller-runtime, autoscaler and Prometheus rows) or listed
// in docs/metrics.md's table of upstream metrics with the exporter it comes from.
func TestEveryMetricIsKnown(t *testing.T) {
	table := metricTable(t)
	registered := map[string]bool{}
	for _, d := range metrics.Descriptions() {
		registered[d.Name] = true
	}
	for _, q := range append(ruleQueries(), dashboardQueries(t)...) {
		for _, name := range metricNames(t, q) {
			if registered[name] {
				continue
			}
			row, ok := table[name]
			if !ok {
				t.Errorf("%s uses %s, which the operator does not register and docs/metrics.md does not list", q.where, name)
				continue
			}
			if len(row) < 3 || row[1] == "" && row[2] == "" {
				t.Errorf("docs/metrics.md: %s has no exporter or source", name)
			}
		}
	}
}

// TestOperatorTableMatchesTheCode: docs/metrics.md lists exactly the metrics internal/metrics
// registers, with their labels.
func TestOperatorTableMatchesTheCode(t *testing.T) {
	table := metricTable(t)
	listed := map[string]bool{}
	for name, row := range table {
		if len(row) >= 3 && strings.HasPrefix(row[2], "internal/metrics") {
			listed[name] = true
		}
	}
	label := regexp.MustCompile("`([a-z_]+)`")
	for _, d := range metrics.Descriptions() {
		row, ok := table[d.Name]
		if !ok || !listed[d.Name] {
			t.Errorf("docs/metrics.md does not list %s (source internal/metrics)", d.Name)
			continue
		}
		var want, got []string
		want = append(want, d.Labels[2:]...)
		cell := regexp.MustCompile(`\([^)]*\)`).ReplaceAllString(row[1], "")
		for _, m := range label.FindAllStringSubmatch(cell, -1) {
			got = append(got, m[1])
		}
		sort.Strings(want)
		sort.Strings(got)
		if strings.Join(want, ",") != strings.Join(got, ",") {
			t.Errorf("docs/metrics.md: %s labels %v, the code has %v", d.Name, got, want)
		}
		delete(listed, d.Name)
	}
	for name := range listed {
		t.Errorf("docs/metrics.md lists %s as internal/metrics', which does not register it", name)
	}
}

// TestAlertConventions: kubernetes-mixin's conventions and a runbook per alert.
func TestAlertConventions(t *testing.T) {
	name := regexp.MustCompile(`^Strata[A-Z][A-Za-z]+$`)
	seen := map[string]bool{}
	for _, a := range alerts.All() {
		if !name.MatchString(a.Name) {
			t.Errorf("%s: not an UpperCamelCase name starting with Strata", a.Name)
		}
		if a.Severity != "warning" && a.Severity != "critical" {
			t.Errorf("%s: severity %q", a.Name, a.Severity)
		}
		if seen[a.Name+a.Severity] {
			t.Errorf("%s (%s) twice", a.Name, a.Severity)
		}
		seen[a.Name+a.Severity] = true
		if a.Summary == "" || a.Description == "" || !strings.HasSuffix(a.Summary, ".") {
			t.Errorf("%s: summary and description are sentences", a.Name)
		}
		if a.For < 5*60e9 {
			t.Errorf("%s: for %v is too short to ride out a noisy scrape", a.Name, a.For)
		}
		rb := filepath.Join(root(t), "docs", "runbooks", a.Name+".md")
		b, err := os.ReadFile(rb)
		if err != nil {
			t.Errorf("%s: no runbook: %v", a.Name, err)
			continue
		}
		for _, section := range []string{"## Meaning", "## Impact", "## Diagnosis", "## Mitigation"} {
			if !bytes.Contains(b, []byte(section)) {
				t.Errorf("%s: runbook has no %q section", rb, section)
			}
		}
		if bytes.Contains(bytes.ToLower(b), []byte("replication")) && bytes.Contains(bytes.ToLower(b), []byte("disable")) &&
			!bytes.Contains(bytes.ToLower(b), []byte("data loss")) {
			t.Errorf("%s: a runbook that mentions disabling replication must warn of data loss", rb)
		}
	}
}

// TestGrafanaRulesMirrorThePrometheusRules: the Grafana-managed rules are the same rules.
func TestGrafanaRulesMirrorThePrometheusRules(t *testing.T) {
	b, err := alerts.GrafanaRules(alerts.DefaultGrafana, alerts.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		APIVersion int `yaml:"apiVersion"`
		Groups     []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				UID       string `yaml:"uid"`
				Title     string `yaml:"title"`
				Condition string `yaml:"condition"`
				Data      []struct {
					RefID string         `yaml:"refId"`
					Model map[string]any `yaml:"model"`
				} `yaml:"data"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	var p struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	pb, err := alerts.RuleGroups(alerts.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(pb, &p); err != nil {
		t.Fatal(err)
	}
	if g.APIVersion != 1 || len(g.Groups) != len(p.Groups) {
		t.Fatalf("grafana: apiVersion %d, %d groups; prometheus: %d groups", g.APIVersion, len(g.Groups), len(p.Groups))
	}
	uids := map[string]bool{}
	uid := regexp.MustCompile(`^[a-z0-9-]{1,40}$`)
	for i, pg := range p.Groups {
		gg := g.Groups[i]
		if gg.Name != pg.Name || len(gg.Rules) != len(pg.Rules) {
			t.Fatalf("group %s: grafana has %s with %d rules", pg.Name, gg.Name, len(gg.Rules))
		}
		for j, pr := range pg.Rules {
			gr := gg.Rules[j]
			if !uid.MatchString(gr.UID) || uids[gr.UID] {
				t.Errorf("%s: uid %q is not unique or not [a-z0-9-]{1,40}", pr.Alert, gr.UID)
			}
			uids[gr.UID] = true
			if gr.Title != pr.Alert || gr.For != pr.For || gr.Labels["severity"] != pr.Labels["severity"] ||
				gr.Annotations["runbook_url"] != pr.Annotations["runbook_url"] || gr.Annotations["summary"] != pr.Annotations["summary"] {
				t.Errorf("%s: grafana rule differs: %+v", pr.Alert, gr)
			}
			if len(gr.Data) != 2 || gr.Data[0].Model["expr"] != pr.Expr || gr.Condition != "B" {
				t.Errorf("%s: grafana queries %v differ from %q", pr.Alert, gr.Data, pr.Expr)
			}
		}
	}
}

// TestGeneratedFilesAreCurrent: the files `make observability` writes match the code.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	want := map[string]func() ([]byte, error){
		"config/prometheus/rules.yaml": func() ([]byte, error) { return alerts.RuleGroups(alerts.Defaults) },
		"config/prometheus/prometheusrule.yaml": func() ([]byte, error) {
			return alerts.PrometheusRule("strata", alerts.DefaultNamespace, nil, alerts.Defaults)
		},
		"config/grafana/alerting/strata-alerts.yaml": func() ([]byte, error) {
			return alerts.GrafanaRules(alerts.DefaultGrafana, alerts.Defaults)
		},
	}
	boards, err := dashboards.All()
	if err != nil {
		t.Fatal(err)
	}
	want["config/grafana/dashboard-configmaps.yaml"] = dashboards.ConfigMaps
	_, err = os.Stat(filepath.Join(root(t), "charts", "strata", "Chart.yaml"))
	chart := err == nil
	if chart {
		want["charts/strata/files/prometheus-rules.yaml"] = alerts.ChartRuleGroups
	}
	for name, b := range boards {
		want["config/grafana/dashboards/"+name+".json"] = func() ([]byte, error) { return b, nil }
		if chart {
			want["charts/strata/files/dashboards/"+name+".json"] = func() ([]byte, error) { return b, nil }
		}
	}
	for path, gen := range want {
		w, err := gen()
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root(t), path))
		if err != nil || !bytes.Equal(got, w) {
			t.Errorf("%s is stale: run make observability", path)
		}
	}
}
