package pipeline

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/autoscale"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/plan"
)

// What the Kafka cluster already runs bounds what a plan may change at once; plan.Compute
// decides it (internal/plan/observed.go) from what this file reads off the cluster:
//   - the KRaft quorum the cluster was created with (Strimzi runs only static quorums);
//   - the broker pool's replicas and node IDs, and whether Strimzi may remove a broker now
//     (brokerSafety, the autoscaler's own gate): brokers leave one at a time, whether the plan
//     wants fewer because the autoscaler decided it or because the spec was edited;
//   - whether the remove-brokers KafkaRebalance (desired.BrokerRemoval) has emptied the last
//     broker but one: Strimzi refuses Cruise Control with one broker in the pools, so its
//     auto-rebalance cannot empty that broker as it does every other, and the pool goes to one
//     broker only once that rebalance is Ready.

// observedCluster is what plan.Compute is told runs: the quorum, the topic's partitions, the
// broker pool and the autoscaler's targets (s.targets, autoscaleStep).
func (r *Reconciler) observedCluster(ctx context.Context, s *scope) plan.Observed {
	p := s.pipeline
	obs := plan.Observed{KafkaControllers: runningQuorum(s.observed, p), Partitions: keptPartitions(s.observed, p),
		Autoscaling: s.targets}
	pool := s.observed.get(desired.KafkaNodePoolGVK, p.Namespace, desired.BrokerPoolName(p))
	if pool == nil {
		return obs
	}
	n, _, _ := unstructured.NestedInt64(pool.Object, "spec", "replicas")
	b := plan.BrokerPool{Replicas: int32(n), Removal: desired.BrokerRemovalName(p)}
	for _, id := range int64s(pool, "status", "nodeIds") {
		b.NodeIDs = append(b.NodeIDs, int32(id))
	}
	if b.Replicas > 1 {
		// Only a pool of two or more can step down; reading the safety lists KafkaRebalances.
		safety := r.brokerSafety(ctx, p, s.observed, s.served)
		b.Safety = plan.BrokerSafety{Reason: safety.Reason, Message: safety.Message}
		b.Leaving = safety.Leaving
	}
	if rb := s.observed.get(desired.KafkaRebalanceGVK, p.Namespace, desired.BrokerRemovalName(p)); rb != nil {
		if autoscale.RebalanceReady(rb) {
			for _, id := range int64s(rb, "spec", "brokers") {
				b.Emptied = append(b.Emptied, int32(id))
			}
		} else {
			b.RemovalState = rebalanceState(rb)
			b.RemovalRunning = removalUnderWay(rb) != ""
		}
	}
	obs.Brokers = b
	return obs
}

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

// removalRetry is how long a remove-brokers KafkaRebalance that Strimzi ended without moving
// the replicas (NotReady: say the Kafka was not Ready when it was made; Stopped) is left before
// Strimzi is asked to try it again. An estimate; not overridable.
const removalRetry = time.Minute

// removalRefresh says whether Strimzi is to be asked to try the pipeline's remove-brokers
// KafkaRebalance again (desired.Inputs.RefreshRemoval: refreshDue), and else how long until it
// is (0: never), for the reconcile's requeue: no event comes when the minute is up.
func removalRefresh(obs observed, p *v1alpha1.AnalyticsPipeline, now time.Time) (bool, time.Duration) {
	rb := obs.get(desired.KafkaRebalanceGVK, p.Namespace, desired.BrokerRemovalName(p))
	if rb == nil {
		return false, 0
	}
	return refreshDue(rb, now)
}

// refreshDue says whether the KafkaRebalance rb ended without moving the replicas at least
// removalRetry before now, so that Strimzi is to be asked again; else, when it ended so, how
// long until it is. An end at no time Strimzi wrote is taken as long ago.
func refreshDue(rb *unstructured.Unstructured, now time.Time) (bool, time.Duration) {
	for _, c := range autoscale.RebalanceConditions(rb) {
		if !c.Ended() {
			continue
		}
		if c.Since.IsZero() || now.Sub(c.Since) >= removalRetry {
			return true, 0
		}
		return false, removalRetry - now.Sub(c.Since)
	}
	return false, 0
}

// rebalanceState is what Strimzi reports of a KafkaRebalance that is not Ready, for PlanValid:
// its state and, for one that ended without moving the replicas (NotReady, Stopped), why;
// "" before Strimzi reports anything.
func rebalanceState(rb *unstructured.Unstructured) string {
	conds := autoscale.RebalanceConditions(rb)
	if len(conds) == 0 {
		return ""
	}
	if c := conds[0]; c.Ended() && c.Message != "" {
		return c.Type + ": " + c.Message
	}
	return conds[0].Type
}

// announceQuorum records a Warning event the first time a quorum note appears in PlanValid
// (a steady state records nothing, like the condition transitions).
func (r *Reconciler) announceQuorum(s *scope, note string) {
	if note == "" || r.Recorder == nil {
		return
	}
	if prev := meta.FindStatusCondition(s.before.Status.Conditions, v1alpha1.ConditionPlanValid); prev != nil &&
		strings.Contains(prev.Message, note) {
		return
	}
	r.Recorder.Eventf(s.pipeline, nil, corev1.EventTypeWarning, "KafkaQuorumFixed", "Plan", "%s", note)
}
