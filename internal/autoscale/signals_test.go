package autoscale

import (
	"errors"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api/v1alpha1"
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
	want := `sum(rate(container_network_transmit_bytes_total{namespace="analytics",pod=~"sensors-sensors-broker-[0-9]+"}[20s]))`
	if got := qs[BrokerTransmitBytes]; got != want {
		t.Errorf("broker transmit query:\n got %s\nwant %s", got, want)
	}
	if got := qs[ConsumerLag]; !strings.Contains(got, `topic="readings"`) {
		t.Errorf("lag query does not select the topic: %s", got)
	}
}

func TestOverriddenQueries(t *testing.T) {
	p := pipeline()
	p.Spec.Autoscaling.Queries = &v1alpha1.AutoscalingQueries{ConsumerLag: `sum(my_lag{namespace="$namespace"})`}
	qs, err := Queries(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := qs[ConsumerLag]; got != `sum(my_lag{namespace="analytics"})` {
		t.Errorf("override: %s", got)
	}

	p.Spec.Autoscaling.Queries = &v1alpha1.AutoscalingQueries{IngestRate: `sum(rate(x[5m])`}
	_, err = Queries(p)
	var qe *QueryError
	if !errors.As(err, &qe) || qe.Signal != IngestRate {
		t.Fatalf("want a QueryError for ingestRate, got %v", err)
	}
	if !strings.Contains(err.Error(), "spec.autoscaling.queries.ingestRate") {
		t.Errorf("the error does not name the field: %v", err)
	}
}
