package autoscaling_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	"github.com/strata-dev/strata/internal/autoscale"
)

// fakeSource serves the values a test sets, sampled at the time of each reading.
type fakeSource struct {
	mu     sync.Mutex
	values map[autoscale.Signal]float64
}

func (f *fakeSource) set(v map[autoscale.Signal]float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.values = v
}

func (f *fakeSource) Read(_ context.Context, queries map[autoscale.Signal]string, now time.Time) (autoscale.Observations, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	obs := autoscale.Observations{Samples: map[autoscale.Signal]autoscale.Sample{}}
	for s, v := range f.values {
		if _, asked := queries[s]; asked {
			obs.Samples[s] = autoscale.Sample{Value: v, Time: now}
		}
	}
	return obs, nil
}

// startWithFakeSource starts the operator reading its metrics from a fake source, with the
// sample pipeline planned.
func startWithFakeSource(t *testing.T) (*envtestutil.Operator, *fakeSource, *v1alpha1.AnalyticsPipeline) {
	t.Helper()
	src := &fakeSource{}
	o := envtestutil.StartOperatorWith(t, []controllers.Option{controllers.WithAutoscaler(&controllers.Autoscaler{
		Source: func(*v1alpha1.AnalyticsPipeline) (autoscale.MetricsSource, error) { return src, nil },
	})})
	ns, _ := o.CreateSamples(t)
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}
	envtestutil.WaitPlanned(t, o.C, p, func() error { return nil })
	return o, src, p
}

// enableAutoscaling turns the sample pipeline's autoscaler on with short windows.
func enableAutoscaling(t *testing.T, c client.Client, p *v1alpha1.AnalyticsPipeline, url string) {
	t.Helper()
	envtestutil.UpdateSpec(t, c, p, func() {
		p.Spec.Autoscaling = &v1alpha1.AutoscalingSpec{Enabled: true, PrometheusURL: url, IntervalSeconds: 5, ScrapeIntervalSeconds: 1,
			ScaleDownStabilizationSeconds: 20, BrokerScaleDownStabilizationSeconds: ptr.To[int32](20),
			CooldownSeconds: ptr.To[int32](5), ScaleDownDelayAfterScaleUpSeconds: ptr.To[int32](0)}
	})
}

// TestAutoscalerWithAFakeSource: without metrics the pipeline says MetricsUnavailable and
// scales nothing; saturated links grow the broker pool and the decision shows in the status;
// a query that does not parse stops the autoscaler with InvalidQuery, naming the field, and is
// not retried until the spec changes.
func TestAutoscalerWithAFakeSource(t *testing.T) {
	o, src, p := startWithFakeSource(t)
	enableAutoscaling(t, o.C, p, "http://prometheus.invalid:9090")

	envtestutil.WaitFor(t, o.C, p, func() error {
		return envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionAutoscaling, metav1.ConditionFalse, v1alpha1.ReasonMetricsUnavailable)
	})
	if msg := envtestutil.Meta(p, v1alpha1.ConditionAutoscaling).Message; !strings.Contains(msg, "brokerTransmitBytes (no samples)") {
		t.Errorf("MetricsUnavailable does not name the missing signal: %s", msg)
	}
	if got := envtestutil.BrokerReplicas(t, o.C, p); got != 3 {
		t.Fatalf("broker pool has %d replicas before any metrics, want the plan's 3", got)
	}

	// 370 MB/s through the brokers' busier direction: the busiest of 5 brokers leads 5 of the
	// sample's 21 partitions and sends 88 MB/s, within 80 % of 112.5 MB/s; of 4, 6 (106 MB/s).
	src.set(map[autoscale.Signal]float64{autoscale.BrokerTransmitBytes: 370e6, autoscale.BrokerReceiveBytes: 300e6,
		autoscale.UnderReplicatedPartitions: 0, autoscale.ElasticsearchIndexingRate: 1000})
	envtestutil.WaitFor(t, o.C, p, func() error {
		if p.Status.Plan == nil || p.Status.Plan.Brokers != 5 {
			return fmt.Errorf("the plan is not at 5 brokers yet")
		}
		if got := envtestutil.BrokerReplicas(t, o.C, p); got != 5 {
			return fmt.Errorf("broker pool has %d replicas, want 5", got)
		}
		return envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionAutoscaling, metav1.ConditionTrue, v1alpha1.ReasonAutoscalingActive)
	})
	d := p.Status.Autoscaling.LastDecision
	if d == nil || d.Resource != v1alpha1.ResourceBrokers || d.Action != v1alpha1.ActionScaleUp || d.To != 5 || d.Reason != "LinkSaturated" {
		t.Errorf("last decision %+v, want Brokers ScaleUp to 5 (LinkSaturated)", d)
	}
	if p.Status.Plan.Brokers != 5 || p.Status.Autoscaling.Brokers != 5 {
		t.Errorf("plan has %d brokers, autoscaler target %d; want 5", p.Status.Plan.Brokers, p.Status.Autoscaling.Brokers)
	}

	// A query that does not parse.
	envtestutil.UpdateSpec(t, o.C, p, func() {
		p.Spec.Autoscaling.Queries = &v1alpha1.AutoscalingQueries{ConsumerLag: "sum(kafka_consumergroup_lag"}
	})
	invalid := p.ResourceVersion
	envtestutil.WaitFor(t, o.C, p, func() error {
		return envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionAutoscaling, metav1.ConditionFalse, v1alpha1.ReasonInvalidQuery)
	})
	if msg := envtestutil.Meta(p, v1alpha1.ConditionAutoscaling).Message; !strings.Contains(msg, "spec.autoscaling.queries.consumerLag") {
		t.Errorf("InvalidQuery does not name the field: %s", msg)
	}
	// Not retried until the spec changes: the pipeline reconciles that saw the bad query come to
	// one that asks not to be run again (one may first meet the autoscaling controller's write
	// of InvalidQuery, a conflict, and run again from it), and the readings stop (the first may
	// still wait out the interval since the last reading; the one after it asks for nothing).
	// controller-runtime runs a reconcile again only on an error, a requeue in its result or an
	// event.
	for _, controller := range []string{"analyticspipeline", "autoscaling"} {
		o.History.Finished(t, controller, client.ObjectKeyFromObject(p), func(r *envtestutil.Run) error {
			if err := envtestutil.Saw("AnalyticsPipeline", p, invalid)(r); err != nil {
				return err
			}
			if !r.Result.IsZero() || r.Err != nil {
				return fmt.Errorf("returned %+v, %v: it would be retried", r.Result, r.Err)
			}
			return nil
		})
	}
	if got := envtestutil.BrokerReplicas(t, o.C, p); got != 5 {
		t.Errorf("the targets decided before the bad query should still apply: %d brokers", got)
	}
}
