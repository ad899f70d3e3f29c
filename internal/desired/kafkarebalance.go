package desired

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// RebalanceTemplateAnnotation marks a KafkaRebalance as a template: Strimzi runs no rebalance
// for it, it only configures the rebalances auto-rebalancing starts.
const RebalanceTemplateAnnotation = "strimzi.io/rebalance-template"

// MinRebalanceThrottlePercent is the share of the usable link a rebalance may always use, even
// when the pipeline's traffic leaves less spare: without a floor, a rebalance on a saturated
// cluster (exactly when brokers are being added) would never finish. An estimate, not
// overridable.
const MinRebalanceThrottlePercent = 10

// RebalanceTemplate builds the KafkaRebalance (kafka.strimzi.io/v1) that the Kafka cluster's
// spec.cruiseControl.autoRebalance names for both add-brokers and remove-brokers. As a template
// it has no strimzi.io/cluster label, no mode and no brokers: Strimzi fills those in for each
// auto-rebalance, and takes the rest — the default goals and the throttle below — from here.
//
// The throttle bounds the bandwidth partition moves take from each broker to what the
// pipeline's own traffic leaves of the usable link (the bandwidth model's figures), and at
// least MinRebalanceThrottlePercent of the link. It returns nil when the cluster runs no Cruise
// Control (fewer than two brokers).
func RebalanceTemplate(in Inputs) *unstructured.Unstructured {
	if !hasCruiseControl(in) {
		return nil
	}
	p := in.Pipeline
	spec := rebalanceLimits(in.Plan)
	return newObject(KafkaRebalanceGVK, p, RebalanceTemplateName(p), AppKafka, ComponentKafkaRebalance,
		nil, map[string]string{RebalanceTemplateAnnotation: "true"}, object{"spec": spec})
}

// RebalanceAutoApprovalAnnotation makes Strimzi run a KafkaRebalance's proposal as soon as it is
// ready, without a person approving it.
const RebalanceAutoApprovalAnnotation = "strimzi.io/rebalance-auto-approval"

// BrokerRemoval builds the KafkaRebalance that moves every partition replica off
// in.EmptyBrokers (mode remove-brokers), approved automatically, at the rebalance throttle. The
// operator asks for it before it lowers the broker pool from two brokers to one: with one broker
// left Strimzi refuses Cruise Control (see hasCruiseControl), so the remove-brokers rebalance
// that Strimzi's auto-rebalance runs for every other scale-down cannot run for that one. Once
// the KafkaRebalance is Ready the broker holds nothing, the pool goes to one broker, and this
// object is no longer wanted. nil when there is nothing to empty or no Cruise Control.
func BrokerRemoval(in Inputs) *unstructured.Unstructured {
	if len(in.EmptyBrokers) == 0 || !hasCruiseControl(in) {
		return nil
	}
	p := in.Pipeline
	brokers := make([]any, len(in.EmptyBrokers))
	for i, id := range in.EmptyBrokers {
		brokers[i] = int64(id)
	}
	spec := rebalanceLimits(in.Plan)
	spec["mode"], spec["brokers"] = "remove-brokers", brokers
	annotations := map[string]string{RebalanceAutoApprovalAnnotation: "true"}
	if in.RefreshRemoval {
		// Strimzi leaves a KafkaRebalance that ended without moving the replicas as it is until
		// this annotation asks again (strimzi-kafka-operator 1.2.0, KafkaRebalanceAssemblyOperator:
		// onNotReady, shouldRenewRebalance; onStop), and removes the annotation once it has.
		annotations[RebalanceAnnotation] = "refresh"
	}
	return newObject(KafkaRebalanceGVK, p, BrokerRemovalName(p), AppKafka, ComponentKafkaRebalance,
		map[string]string{StrimziClusterLabel: KafkaName(p)}, annotations, object{"spec": spec})
}

// RebalanceAnnotation is the annotation that asks Strimzi to act on a KafkaRebalance.
const RebalanceAnnotation = "strimzi.io/rebalance"

// RebalanceThrottle is the replication throttle of rebalances in bytes per second: the usable
// link rate less the busier direction of a broker's planned traffic, but at least
// MinRebalanceThrottlePercent of the usable rate. 0 (no throttle) when the plan has no link rate.
//
// It is also at least twice what one partition's replica writes (RebalanceConcurrency says
// why), within the link.
func RebalanceThrottle(plan v1alpha1.Plan) int64 {
	link := plan.LinkUsableBytesPerSecond
	if link <= 0 {
		return 0
	}
	busy := max(plan.BrokerReceiveBytesPerSecond, plan.BrokerSendBytesPerSecond)
	t := max(link-busy, link*MinRebalanceThrottlePercent/100)
	return min(max(t, 2*replicaWrite(plan)), link)
}

// DefaultPartitionMovements is Cruise Control's default of concurrent partition movements into
// or out of each broker (num.concurrent.partition.movements.per.broker; Strimzi's KafkaRebalance
// spec.concurrentPartitionMovementsPerBroker, "Default is 5").
const DefaultPartitionMovements = 5

// RebalanceConcurrency is how many partition replicas a rebalance moves into or out of a broker
// at once. The throttle bounds all of a moving replica's fetches, its backlog and the partition's
// live writes together: Kafka throttles a replica in the throttled list while it is out of sync,
// whatever it fetches (Kafka 4.x, core/src/main/scala/kafka/server/RemoteLeaderEndPoint.scala,
// shouldFollowerThrottle: !isReplicaInSync && quota.isThrottled(tp) && quota.isQuotaExceeded;
// the leader's side likewise), so a new replica catches up at the throttle less what its
// partition is written meanwhile; moves whose partitions are written faster than the throttle
// never complete. Found in the lab (internal/lab's TestLinkSaturated): eight partitions moved at
// once onto a new broker were written at about the throttle, and their moves stood still. So the
// moves at once are as many as keep half the throttle for catching up, at least one (the throttle
// is at least twice a replica's writes) and at most Cruise Control's default.
func RebalanceConcurrency(plan v1alpha1.Plan) int64 {
	w := replicaWrite(plan)
	if w <= 0 {
		return DefaultPartitionMovements
	}
	return min(max(RebalanceThrottle(plan)/(2*w), 1), DefaultPartitionMovements)
}

// replicaWrite is what one partition's replica receives: the ingest over the partitions.
func replicaWrite(plan v1alpha1.Plan) int64 {
	if plan.Partitions <= 0 {
		return 0
	}
	return plan.IngestBytesPerSecond / int64(plan.Partitions)
}

// rebalanceLimits are a rebalance's throttle and concurrency (nothing when the plan has no link
// rate).
func rebalanceLimits(plan v1alpha1.Plan) object {
	spec := object{}
	if t := RebalanceThrottle(plan); t > 0 {
		spec["replicationThrottle"] = t
		spec["concurrentPartitionMovementsPerBroker"] = RebalanceConcurrency(plan)
	}
	return spec
}

// RebalanceMove is what the rebalance of the plan's cluster from `from` to `to` brokers moves, in
// bytes, and how fast in all, in bytes a second, when each broker holds perBroker bytes and the
// topic is written at ingest bytes a second. Brokers joining take an equal share of every old
// broker's data (k new ones of `to` take k/to of it); brokers leaving hand all of theirs over.
// Each sending and each receiving broker moves at the template's throttle (RebalanceThrottle; a
// plan without a link rate moves nothing) less what the partitions it moves at once
// (RebalanceConcurrency) are written meanwhile, never under a tenth of it; so the rate in all
// is that times the fewer of the brokers sending and receiving. The simulator times its broker
// moves with it (internal/simulate) and `strata plan` the time a broker takes to join.
func RebalanceMove(plan v1alpha1.Plan, from, to int32, perBroker, ingest float64) (bytes, rate float64) {
	if from <= 0 || to <= 0 || from == to {
		return 0, 0
	}
	throttle := float64(RebalanceThrottle(plan))
	if parts := float64(plan.Partitions); parts > 0 {
		live := float64(RebalanceConcurrency(plan)) * ingest / parts
		throttle = max(throttle-live, throttle/10)
	}
	if to > from {
		k := float64(to - from)
		return perBroker * float64(from) * k / float64(to), min(k, float64(from)) * throttle
	}
	k := float64(from - to)
	return perBroker * k, min(k, float64(to)) * throttle
}
