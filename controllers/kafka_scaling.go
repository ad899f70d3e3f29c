package controllers

import (
	"context"
	"fmt"
	"slices"
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
//   - the last broker but one is emptied by a remove-brokers KafkaRebalance before the pool
//     goes to one broker, and Cruise Control goes with it (desired.BrokerRemoval): Strimzi
//     refuses Cruise Control with one broker in the pools, so its auto-rebalance cannot empty
//     that broker as it does every other.

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
	safety := r.brokerSafety(ctx, p, s.observed, s.served)
	step, held := autoscale.BrokerStep(live, planned, safety)
	if held != "" {
		return step, fmt.Sprintf("brokers stay at %d (%d planned) until Strimzi may remove one: %s", step, planned, held)
	}
	if live == 2 && step == 1 {
		if id, emptied, why := lastBrokerRemoval(s.observed, p); !emptied {
			s.emptyBrokers = id
			return live, fmt.Sprintf("brokers stay at 2 (1 planned) while %s", why)
		}
	}
	return step, fmt.Sprintf("brokers step down one at a time: %d now, %d planned", step, planned)
}

// lastBrokerRemoval says whether the broker that leaves when the pool goes from two brokers to
// one is empty: the KafkaRebalance desired.BrokerRemoval builds for it is Ready. Until then it
// returns the broker to empty (none while Strimzi has not reported the pool's node IDs) and
// why the pool waits. Strimzi removes the highest node ID of a pool when it scales down without
// a strimzi.io/remove-node-ids annotation (strimzi-kafka-operator 1.2.0, documentation/modules/
// configuring/con-config-node-pools.adoc, "Node ID assignment"), so that is the one emptied.
func lastBrokerRemoval(obs observed, p *v1alpha1.AnalyticsPipeline) (empty []int32, emptied bool, why string) {
	pool := obs.get(desired.KafkaNodePoolGVK, p.Namespace, desired.BrokerPoolName(p))
	var ids []int64
	if pool != nil {
		ids = int64s(pool, "status", "nodeIds")
	}
	if len(ids) == 0 {
		return nil, false, "Strimzi has not reported the broker pool's node IDs, which name the broker to empty"
	}
	id := int32(slices.Max(ids))
	rb := obs.get(desired.KafkaRebalanceGVK, p.Namespace, desired.BrokerRemovalName(p))
	if rb != nil {
		brokers := int64s(rb, "spec", "brokers")
		if slices.Equal(brokers, []int64{int64(id)}) && rebalanceReady(rb) {
			return nil, true, ""
		}
	}
	return []int32{id}, false, fmt.Sprintf("KafkaRebalance %s moves broker %d's partitions off "+
		"(Strimzi refuses Cruise Control with one broker, so the pool goes to one only once that broker is empty)",
		desired.BrokerRemovalName(p), id)
}

// int64s reads a list of integers (JSON numbers decode as int64 or float64).
func int64s(u *unstructured.Unstructured, fields ...string) []int64 {
	list, _, _ := unstructured.NestedSlice(u.Object, fields...)
	var out []int64
	for _, v := range list {
		switch n := v.(type) {
		case int64:
			out = append(out, n)
		case float64:
			out = append(out, int64(n))
		}
	}
	return out
}

// rebalanceReady says whether a KafkaRebalance reports Ready: its moves are done.
func rebalanceReady(rb *unstructured.Unstructured) bool {
	return slices.Contains(autoscale.RebalanceStates(rb), "Ready")
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
