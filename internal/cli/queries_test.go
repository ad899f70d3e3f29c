package cli_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/strata-dev/strata/internal/cli"
)

type queryList struct {
	Namespace, Pipeline         string
	Autoscaler, Sources, Alerts []struct{ Name, Field, Query string }
}

func TestQueriesGolden(t *testing.T) {
	r := run(t, "", "queries", "-f", "testdata/sensors.yaml", "-f", "testdata/tiers.yaml")
	if r.code != cli.ExitOK || r.stderr != "" {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	golden(t, "sensors.queries.golden", r.stdout)
}

// Every query the command prints is PromQL Prometheus accepts, filled in for the pipeline and
// limited to it: the namespace and name appear in each, no placeholder is left.
func TestQueriesAreFilledInAndParse(t *testing.T) {
	r := run(t, "", "queries", "-f", "testdata/sensors.yaml", "--namespace", "team-a", "-o", "json")
	if r.code != cli.ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	var l queryList
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
		t.Fatalf("-o json is not JSON: %v\n%s", err, r.stdout)
	}
	if l.Namespace != "team-a" || l.Pipeline != "sensors" {
		t.Errorf("pipeline %s/%s, want team-a/sensors", l.Namespace, l.Pipeline)
	}
	if len(l.Autoscaler) != 14 || len(l.Sources) == 0 || len(l.Alerts) == 0 {
		t.Fatalf("%d autoscaler queries (want 14), %d sources, %d alerts", len(l.Autoscaler), len(l.Sources), len(l.Alerts))
	}
	all := append(append(append([]struct{ Name, Field, Query string }{}, l.Autoscaler...), l.Sources...), l.Alerts...)
	for _, q := range all {
		if _, err := parser.NewParser(parser.Options{}).ParseExpr(q.Query); err != nil {
			t.Errorf("%s: %v\n%s", q.Name, err, q.Query)
		}
		if !strings.Contains(q.Query, `namespace="team-a"`) {
			t.Errorf("%s is not limited to the pipeline's namespace: %s", q.Name, q.Query)
		}
		if strings.Contains(strings.ReplaceAll(q.Query, `"$1"`, ""), "$") {
			t.Errorf("%s: a placeholder is left: %s", q.Name, q.Query)
		}
	}
	if f := l.Autoscaler[0].Field; !strings.HasPrefix(f, "spec.autoscaling.queries.") {
		t.Errorf("autoscaler query names %q, want its spec field", f)
	}
}

func TestQueriesBadInput(t *testing.T) {
	if r := run(t, "", "queries"); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "-f FILE is required") {
		t.Errorf("no -f: exit %d, stderr %q", r.code, r.stderr)
	}
	sample, err := os.ReadFile("testdata/sensors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(sample), "  autoscaling:\n", "  autoscaling:\n    queries: {consumerLag: \"sum(kafka_consumergroup_lag\"}\n", 1)
	if broken == string(sample) {
		t.Fatal("testdata/sensors.yaml has no spec.autoscaling to break")
	}
	if r := run(t, broken, "queries", "-f", "-"); r.code != cli.ExitError || !strings.Contains(r.stderr, "spec.autoscaling.queries.consumerLag") {
		t.Errorf("a query that does not parse: exit %d, stderr %q", r.code, r.stderr)
	}
}
