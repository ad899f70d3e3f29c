package autoscaling_test

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/autoscaling"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	"github.com/strata-dev/strata/internal/autoscale"
)

// TestAutoscalerStatusIsItsOwn: the autoscaling controller writes its decision to
// status.autoscaling and the Autoscaling condition under its own field manager, and the
// pipeline reconciler plans from what the API server holds, nothing kept in the process: an
// operator restarted while Prometheus has no samples keeps the brokers the previous one decided,
// and decides nothing new.
func TestAutoscalerStatusIsItsOwn(t *testing.T) {
	o, src, p := startWithFakeSource(t)
	// Saturated links: 5 brokers (TestAutoscalerWithAFakeSource has the arithmetic).
	src.set(map[autoscale.Signal]float64{autoscale.BrokerTransmitBytes: 370e6, autoscale.BrokerReceiveBytes: 300e6,
		autoscale.UnderReplicatedPartitions: 0, autoscale.ElasticsearchIndexingRate: 1000})
	enableAutoscaling(t, o.C, p, "http://prometheus.invalid:9090")
	envtestutil.WaitFor(t, o.C, p, func() error {
		if a := p.Status.Autoscaling; a == nil || a.Brokers != 5 {
			return fmt.Errorf("status.autoscaling %+v", p.Status.Autoscaling)
		}
		if p.Status.Plan == nil || p.Status.Plan.Brokers != 5 || envtestutil.BrokerReplicas(t, o.C, p) != 5 {
			return fmt.Errorf("the plan and the pool are not at 5 brokers yet")
		}
		return envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionAutoscaling, metav1.ConditionTrue, v1alpha1.ReasonAutoscalingActive)
	})

	// Who owns what: the autoscaler's manager the status.autoscaling and its condition, on the
	// status subresource; no other manager status.autoscaling.
	var mine string
	for _, m := range p.ManagedFields {
		fields := string(m.FieldsV1.Raw)
		switch {
		case m.Manager == autoscaling.AutoscalingFieldOwner:
			if m.Subresource != "status" || m.Operation != metav1.ManagedFieldsOperationApply {
				t.Errorf("the autoscaler's entry is %s on %q, want Apply on status", m.Operation, m.Subresource)
			}
			mine = fields
		case strings.Contains(fields, `"f:autoscaling"`) && m.Subresource == "status":
			t.Errorf("manager %s (%s) also owns status.autoscaling: %s", m.Manager, m.Operation, fields)
		}
	}
	for _, f := range []string{`"f:autoscaling"`, `"k:{\"type\":\"Autoscaling\"}"`} {
		if !strings.Contains(mine, f) {
			t.Errorf("the autoscaler's managed fields lack %s: %s", f, mine)
		}
	}
	if strings.Contains(mine, `"k:{\"type\":\"PlanValid\"}"`) {
		t.Errorf("the autoscaler owns the pipeline reconciler's PlanValid condition: %s", mine)
	}
	decided := p.Status.Autoscaling.LastDecision.DeepCopy()

	// A new operator, and Prometheus without samples: nothing to decide from.
	o.StopManager()
	src.set(nil)
	o.StartManager(t)
	envtestutil.WaitFor(t, o.C, p, func() error {
		return envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionAutoscaling, metav1.ConditionFalse, v1alpha1.ReasonMetricsUnavailable)
	})
	// The pipeline reconciler woken by that write has planned with the status' targets.
	o.History.Finished(t, "analyticspipeline", client.ObjectKeyFromObject(p), envtestutil.Saw("AnalyticsPipeline", p, p.ResourceVersion))
	if err := o.C.Get(t.Context(), client.ObjectKeyFromObject(p), p); err != nil {
		t.Fatal(err)
	}
	if got := envtestutil.BrokerReplicas(t, o.C, p); got != 5 || p.Status.Plan.Brokers != 5 {
		t.Errorf("after a restart the plan has %d brokers and the pool %d, want the 5 decided before it", p.Status.Plan.Brokers, got)
	}
	if a := p.Status.Autoscaling; a == nil || a.Brokers != 5 || a.LastDecision == nil || !a.LastDecision.Time.Equal(&decided.Time) {
		t.Errorf("status.autoscaling after the restart %+v, want the targets and the decision of %s kept", a, decided.Time)
	}
}
