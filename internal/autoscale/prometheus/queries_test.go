package prometheus

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/autoscale"
	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// pipeline is the API example in "analytics", its topic "readings", read every 5 s.
func pipeline() *v1alpha1.AnalyticsPipeline {
	return gen.Pipeline(gen.SetName("analytics", "sensors"), gen.SetTopic("readings"),
		gen.SetAutoscaling(v1alpha1.AutoscalingSpec{Enabled: true, IntervalSeconds: 5}))
}

func TestDefaultQueriesParseWithThePipelineFilledIn(t *testing.T) {
	qs, err := Queries(pipeline())
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != len(DefaultQueries) {
		t.Fatalf("%d queries, want %d", len(qs), len(DefaultQueries))
	}
	for s, q := range qs {
		if strings.Contains(q, "$") {
			t.Errorf("%s: a placeholder is left: %s", s, q)
		}
	}
	want := `sum(rate(container_network_transmit_bytes_total{namespace="analytics",pod=~"sensors-sensors-broker-[0-9]+"}[120s]))`
	if got := qs[autoscale.BrokerTransmitBytes]; got != want {
		t.Errorf("broker transmit query:\n got %s\nwant %s", got, want)
	}
	for _, s := range []autoscale.Signal{autoscale.ConsumerLag, autoscale.ConsumerLagTrend, autoscale.ProcessingRate} {
		if got := qs[s]; !strings.Contains(got, `topic="readings"`) || !strings.Contains(got, `consumergroup="sensors"`) {
			t.Errorf("%s does not select the topic and the job's consumer group: %s", s, got)
		}
	}
	// The Spark operator submits with --name <SparkApplication> (spark-operator v2.5.2,
	// internal/controller/sparkapplication/submission.go), Spark's application_name label.
	if got := qs[autoscale.ExecutorSpillBytes]; !strings.Contains(got, `application_name="sensors"`) {
		t.Errorf("spill query does not select the Spark application: %s", got)
	}
}

// TestNoRangeOverANameRegex guards against the query that always errors: rate() drops
// __name__, so a range selector matching several metric names yields several series with the
// same labels ("vector cannot contain metrics with the same labelset").
func TestNoRangeOverANameRegex(t *testing.T) {
	qs, err := Queries(pipeline())
	if err != nil {
		t.Fatal(err)
	}
	for s, q := range qs {
		expr, err := parser.NewParser(parser.Options{}).ParseExpr(q)
		if err != nil {
			t.Fatal(err)
		}
		parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
			if ms, ok := n.(*parser.MatrixSelector); ok {
				for _, m := range ms.VectorSelector.(*parser.VectorSelector).LabelMatchers {
					if m.Name == labels.MetricName && m.Type != labels.MatchEqual {
						t.Errorf("%s: range over a __name__ regex: %s", s, q)
					}
				}
			}
			return nil
		})
	}
}

func TestRangeCoversFourScrapes(t *testing.T) {
	for _, tc := range []struct {
		interval, scrape int32
		want             time.Duration
	}{
		{0, 0, 2 * time.Minute},    // defaults: 30 s both
		{5, 0, 2 * time.Minute},    // a fast autoscaler still waits for four scrapes
		{5, 2, 20 * time.Second},   // a lab scraping every 2 s
		{60, 30, 4 * time.Minute},  // a slow autoscaler: four of its own intervals
		{30, 120, 8 * time.Minute}, // a slow Prometheus
	} {
		a := &v1alpha1.AutoscalingSpec{IntervalSeconds: tc.interval, ScrapeIntervalSeconds: tc.scrape}
		if got := Range(a); got != tc.want {
			t.Errorf("interval %d s, scrape %d s: range %s, want %s", tc.interval, tc.scrape, got, tc.want)
		}
		// The autoscaler reads a rise against the same range (autoscale's rise.go).
		p := gen.Pipeline(gen.SetAutoscaling(*a))
		if got := autoscale.NewPolicy(p, v1alpha1.Plan{}, autoscale.BrokerSafety{}, true).Range; got != tc.want {
			t.Errorf("interval %d s, scrape %d s: the policy's range %s, want %s", tc.interval, tc.scrape, got, tc.want)
		}
	}
}

func TestOverriddenQueries(t *testing.T) {
	p := pipeline()
	p.Spec.Autoscaling.Queries = &v1alpha1.AutoscalingQueries{ConsumerLag: `sum(my_lag{namespace="$namespace"})`}
	qs, err := Queries(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := qs[autoscale.ConsumerLag]; got != `sum(my_lag{namespace="analytics"})` {
		t.Errorf("override: %s", got)
	}

	p.Spec.Autoscaling.Queries = &v1alpha1.AutoscalingQueries{IngestRate: `sum(rate(x[5m])`}
	_, err = Queries(p)
	var qe *QueryError
	if !errors.As(err, &qe) || qe.Signal != autoscale.IngestRate {
		t.Fatalf("want a QueryError for ingestRate, got %v", err)
	}
	if !strings.Contains(err.Error(), "spec.autoscaling.queries.ingestRate") {
		t.Errorf("the error does not name the field: %v", err)
	}
}

// TestDocsListTheDefaultQueries keeps docs/autoscaling.md's table of defaults the queries the
// operator runs.
func TestDocsListTheDefaultQueries(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testutil.Root(), "docs", "autoscaling.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range autoscale.Signals() {
		row := fmt.Sprintf("| `%s` | `%s` |", s, strings.ReplaceAll(DefaultQueries[s], "|", `\|`))
		if !strings.Contains(string(doc), row+"\n") {
			t.Errorf("docs/autoscaling.md lacks the row\n%s", row)
		}
	}
}

// TestEverySignalHasADefaultQuery: autoscale.Signals and DefaultQueries name the same signals,
// so that a signal added to the deciding package is read, and no query is read for nothing.
func TestEverySignalHasADefaultQuery(t *testing.T) {
	for _, s := range autoscale.Signals() {
		if DefaultQueries[s] == "" {
			t.Errorf("signal %s has no default query", s)
		}
	}
	if len(DefaultQueries) != len(autoscale.Signals()) {
		t.Errorf("%d default queries for %d signals", len(DefaultQueries), len(autoscale.Signals()))
	}
}
