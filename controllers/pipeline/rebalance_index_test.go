package pipeline_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	"github.com/strata-dev/strata/internal/desired"
)

// runningRebalance plays Strimzi's auto-rebalancing: a KafkaRebalance of cluster, which no
// pipeline controls, moving partitions.
func runningRebalance(t *testing.T, o *envtestutil.Operator, ns, name, cluster string) *unstructured.Unstructured {
	t.Helper()
	rb := &unstructured.Unstructured{}
	rb.SetGroupVersionKind(desired.KafkaRebalanceGVK)
	rb.SetNamespace(ns)
	rb.SetName(name)
	rb.SetLabels(map[string]string{desired.StrimziClusterLabel: cluster})
	rb.Object["spec"] = map[string]any{"mode": "remove-brokers", "brokers": []any{int64(2)}}
	ctx := context.Background()
	if err := o.C.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	conds := []any{map[string]any{"type": "Rebalancing", "status": "True", "lastTransitionTime": "2026-01-01T12:00:00Z"}}
	if err := unstructured.SetNestedSlice(rb.Object, conds, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	if err := o.C.Status().Update(ctx, rb); err != nil {
		t.Fatal(err)
	}
	return rb
}

// TestScaleDownWaitsForItsClusterRebalancesOnly: a broker scale-down waits while a
// KafkaRebalance of the pipeline's own Kafka cluster runs, not for one of another cluster in
// the same namespace. The pipeline reads its cluster's KafkaRebalances from the cache's
// index by Strimzi cluster (watches.go clusterIndex): a missing index fails the read, which
// holds every scale-down, and a wrong one misses the pipeline's own.
func TestScaleDownWaitsForItsClusterRebalancesOnly(t *testing.T) {
	o := envtestutil.StartOperator(t)
	ns, _ := o.CreateSamples(t)
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}
	planNote(t, o.C, p, 3, "")
	setRunningBrokers(t, o.C, p, 3)

	own := runningRebalance(t, o, ns, desired.KafkaName(p)+"-auto-rebalancing-remove-brokers", desired.KafkaName(p))
	runningRebalance(t, o, ns, "other-auto-rebalancing-remove-brokers", "other")
	envtestutil.UpdateSpec(t, o.C, p, func() { p.Spec.Kafka.Brokers = v1alpha1.Range{Min: 2, Max: 2} })
	planNote(t, o.C, p, 3, "brokers stay at 3 (2 planned) until Strimzi may remove one: RebalanceRunning")
	if got := p.Status.Plan.TargetBrokers; got != 2 {
		t.Errorf("status.plan.targetBrokers %d while held at 3, want the 2 it heads for", got)
	}

	// Its own done, the other cluster's still running: the step goes ahead. The auto-rebalance
	// belongs to the Kafka, not the pipeline, so its change enqueues nothing: a touch does.
	setRebalanceReady(t, o.C, own)
	o.Touch(t, p)
	planNote(t, o.C, p, 2, "")
	if got := p.Status.Plan.TargetBrokers; got != 0 {
		t.Errorf("status.plan.targetBrokers %d at the plan's 2 brokers, want none", got)
	}
}
