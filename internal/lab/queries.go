package lab

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/alerts"
	"github.com/strata-dev/strata/internal/autoscale"
	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
	"github.com/strata-dev/strata/internal/dashboards"
)

// Query is one PromQL expression Strata generates.
type Query struct {
	Kind string // autoscaler, alert, dashboard
	Name string // the signal, the alert, or "<dashboard> / <panel>"
	Expr string
}

// Queries returns every query Strata generates for p, read from the code that generates them:
// the autoscaler's (autoscaleprom.Queries: the defaults with p's placeholders filled as the
// autoscaler fills them), the alert rules (alerts.RuleGroups with the default job and
// namespace, as `make observability` writes config/prometheus/rules.yaml), and every panel of the
// dashboards (dashboards.Queries) with the $namespace and $pipeline variables set to p's.
func Queries(p *v1alpha1.AnalyticsPipeline) ([]Query, error) {
	var out []Query
	auto, err := autoscaleprom.Queries(p)
	if err != nil {
		return nil, err
	}
	for _, s := range autoscale.Signals() {
		out = append(out, Query{Kind: "autoscaler", Name: string(s), Expr: auto[s]})
	}
	rules, err := alerts.RuleGroups(alerts.Defaults)
	if err != nil {
		return nil, err
	}
	var file struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
				Expr  string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(rules, &file); err != nil {
		return nil, err
	}
	seen := map[string]int{}
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			name := r.Alert
			if seen[name]++; seen[name] > 1 {
				name = fmt.Sprintf("%s (%d)", name, seen[name])
			}
			out = append(out, Query{Kind: "alert", Name: name, Expr: r.Expr})
		}
	}
	panels, err := dashboards.Queries()
	if err != nil {
		return nil, err
	}
	vars := strings.NewReplacer("$namespace", p.Namespace, "$pipeline", p.Name)
	for _, q := range panels {
		out = append(out, Query{Kind: "dashboard", Name: q.Name(), Expr: vars.Replace(q.Expr)})
	}
	return out, nil
}

// Source is an upstream exporter whose series the queries read.
type Source struct {
	Name string
	// Match says whether a metric name (or a __name__ regular expression) is this source's.
	Match *regexp.Regexp
}

// Sources are the series' origins, by metric name; the lab reports a query's missing sources.
var Sources = []Source{
	{"cAdvisor (network)", regexp.MustCompile(`^container_network_`)},
	{"cAdvisor", regexp.MustCompile(`^container_`)},
	{"Kafka exporter", regexp.MustCompile(`^kafka_(consumergroup|topic)_`)},
	{"Kafka JMX exporter", regexp.MustCompile(`^kafka_`)},
	{"Spark", regexp.MustCompile(`^metrics_`)},
	{"Elasticsearch exporter", regexp.MustCompile(`^elasticsearch_`)},
	{"kubelet (volume stats)", regexp.MustCompile(`^kubelet_`)},
	{"controller-runtime", regexp.MustCompile(`^(controller_runtime|workqueue)_`)},
	{"operator", regexp.MustCompile(`^(strata_|up$)`)},
}

// SourcesOf are the sources of every series selector of expr, in Sources' order.
func SourcesOf(expr string) ([]string, error) {
	names, err := MetricsOf(expr)
	if err != nil {
		return nil, err
	}
	found := map[string]bool{}
	for _, name := range names {
		for _, s := range Sources {
			if s.Match.MatchString(name) {
				found[s.Name] = true
				break
			}
		}
	}
	var out []string
	for _, s := range Sources {
		if found[s.Name] {
			out = append(out, s.Name)
		}
	}
	return out, nil
}

// MetricsOf are the metric names (or __name__ regular expressions) expr selects, in order.
func MetricsOf(expr string) ([]string, error) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var out []string
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName {
				name = m.Value
			}
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
		return nil
	})
	return out, nil
}

// Operands is expr with every comparison turned into a bool comparison (which keeps every
// matched element, as 0 or 1, instead of filtering): it has data when the series and joins an
// alert compares have data, whether or not the alert's condition holds now.
func Operands(expr string) (string, error) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return "", err
	}
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		if b, ok := node.(*parser.BinaryExpr); ok && b.Op.IsComparisonOperator() {
			b.ReturnBool = true
		}
		return nil
	})
	return e.String(), nil
}
