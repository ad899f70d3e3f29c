package controllers

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/autoscale"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/plan"
)

// What the Kafka cluster already runs bounds what a plan may change at once:
//   - the KRaft quorum is the one the cluster was created with (Strimzi runs only static
//     quorums), whatever the brokers become;
//   - brokers leave one at a time, each only when Strimzi reports the previous one gone and no
//     rebalance under way (autoscale.BrokerStep, the autoscaler's own gate), whether the plan
//     wants fewer because the autoscaler decided it or because the spec was edited;
//   - Cruise Control stays while brokers are leaving (desired.Inputs.BrokersLeaving).

// runningQuorum is the KRaft quorum the pipeline's cluster runs: the controller pool's replicas,
// else the quorum status.plan recorded when the plan was last applied; 0 for a new cluster.
func runningQuorum(obs observed, p *v1alpha1.AnalyticsPipeline) int32 {
	if pool := obs.get(desired.KafkaNodePoolGVK, p.Namespace, desired.ControllerPoolName(p)); pool != nil {
		if n, ok, _ := unstructured.NestedInt64(pool.Object, "spec", "replicas"); ok && n > 0 {
			return int32(n)
		}
	}
	if p.Status.Plan != nil {
		return int32(desired.ControllerReplicas(*p.Status.Plan))
	}
	return 0
}

// quorumNote says when the plan's brokers would have chosen another quorum for a new cluster.
func quorumNote(run plan.Running, planned v1alpha1.Plan) string {
	if run.KafkaControllers == 0 || run.KafkaControllers == plan.KRaftQuorum(planned.Brokers) {
		return ""
	}
	return fmt.Sprintf("the KRaft quorum keeps the %d controller(s) the cluster was created with, although a new "+
		"cluster of %d broker(s) would get %d: Strimzi runs only static quorums (re-create the Kafka cluster to change it)",
		run.KafkaControllers, planned.Brokers, plan.KRaftQuorum(planned.Brokers))
}

// brokerPool returns the broker pool's replicas (what the operator applied last) and the
// brokers Strimzi still runs for it (status.nodeIds; 0 before Strimzi reports any).
func brokerPool(obs observed, p *v1alpha1.AnalyticsPipeline) (replicas, running int32, ok bool) {
	pool := obs.get(desired.KafkaNodePoolGVK, p.Namespace, desired.BrokerPoolName(p))
	if pool == nil {
		return 0, 0, false
	}
	n, found, _ := unstructured.NestedInt64(pool.Object, "spec", "replicas")
	ids, _, _ := unstructured.NestedSlice(pool.Object, "status", "nodeIds")
	return int32(n), int32(len(ids)), found
}

// stepBrokers returns the broker count to apply now for a plan of planned brokers, and a note
// for PlanValid when it is not the plan's (empty when it is).
func (r *PipelineReconciler) stepBrokers(ctx context.Context, s *scope, planned int32) (int32, string) {
	p := s.pipeline
	live, _, ok := brokerPool(s.observed, p)
	if !ok || planned >= live {
		return planned, ""
	}
	safety := autoscale.StrimziSafety(s.observed.get(desired.KafkaGVK, p.Namespace, desired.KafkaName(p)),
		s.observed.get(desired.KafkaNodePoolGVK, p.Namespace, desired.BrokerPoolName(p)),
		r.rebalances(ctx, p, s.served))
	step, held := autoscale.BrokerStep(live, planned, safety)
	if held != "" {
		return step, fmt.Sprintf("brokers stay at %d (%d planned) until Strimzi may remove one: %s", step, planned, held)
	}
	return step, fmt.Sprintf("brokers step down one at a time: %d now, %d planned", step, planned)
}

// brokersLeaving says whether brokers are leaving the cluster: the pool runs or is being asked
// for more brokers than the plan applies, or Strimzi's auto-rebalance is under way.
func brokersLeaving(obs observed, p *v1alpha1.AnalyticsPipeline, planned int32) bool {
	replicas, running, _ := brokerPool(obs, p)
	if max(replicas, running) > planned {
		return true
	}
	if k := obs.get(desired.KafkaGVK, p.Namespace, desired.KafkaName(p)); k != nil {
		state, _, _ := unstructured.NestedString(k.Object, "status", "autoRebalance", "state")
		return state != "" && state != "Idle"
	}
	return false
}

// withBrokers returns a copy of p whose plan has exactly n brokers (the spec's maximum raised
// to n if needed): the plan of a step of a scale-down, with every figure for the brokers that
// run during it.
func withBrokers(p *v1alpha1.AnalyticsPipeline, n int32) *v1alpha1.AnalyticsPipeline {
	out := p.DeepCopy()
	b := &out.Spec.Kafka.Brokers
	b.Min, b.Max = n, max(b.Max, n)
	return out
}

// announceQuorum records a Warning event the first time a quorum note appears in PlanValid
// (a steady state records nothing, like the condition transitions).
func (r *PipelineReconciler) announceQuorum(s *scope, note string) {
	if note == "" || r.Recorder == nil {
		return
	}
	if prev := meta.FindStatusCondition(s.before.Status.Conditions, v1alpha1.ConditionPlanValid); prev != nil &&
		strings.Contains(prev.Message, note) {
		return
	}
	r.Recorder.Eventf(s.pipeline, nil, corev1.EventTypeWarning, "KafkaQuorumFixed", "Plan", "%s", note)
}
