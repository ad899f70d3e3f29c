package plan

import "github.com/strata-dev/strata/api/v1alpha1"

// Automatic partitions, and the brokers planned from them.
//
// Spark's Kafka source runs one task per partition, so "auto" gives every executor core a
// partition: at least F = executors × cores. Kafka places whole partitions, so when the broker
// count B does not divide P the busiest broker leads ⌈P/B⌉ and holds ⌈P·R/B⌉ replicas, more than
// the mean (25 partitions on 3 brokers: one leads 9, 8 % over the mean), and it is the
// one the plan sizes. So P is the smallest multiple of B not below F: every broker then leads
// P/B and holds P·R/B, the mean, and no executor core is left without a partition.
//
// B is planned from P (the busiest broker's load depends on it), so the two are found together:
// start from P₀ = F, plan B₀ from it, and repeat P_{k+1} = ⌈F/B_k⌉·B_k, B_{k+1} = brokers
// planned from P_{k+1}, until P_{k+1} = P_k. Termination: P_{k+1} is a multiple of B_k, so B_k
// brokers would each carry exactly the mean of the traffic, which no placement of P_k
// partitions on B_k brokers beats; the mean does not depend on P, and every per-broker load the
// broker count is chosen by (received, sent, their sum) is that mean or more. So B_k brokers are
// enough for P_{k+1} whenever they were for P_k (and when none was, B_k is brokers.max, which no
// plan exceeds): B_{k+1} ≤ B_k. If B_{k+1} = B_k then P_{k+2} = P_{k+1} and the loop stops; so
// each further round lowers B by one at least, and B ≥ 1 bounds the rounds by B₀ ≤ brokers.max.
// The loop is bounded by that count too, so that no mistake in this argument can hang a
// reconcile; the (P, B) it returns is consistent either way, since B is always planned from P.
//
// P never exceeds v1alpha1.MaxAutoPartitions: admission (and validateBounds) keep
// executors.max × cores, and so F, within it, but rounding up may pass it (10,000 executor
// cores on 3 brokers would want 10,002). The fallback would be the largest multiple of B within
// the cap if that were still ≥ F, but it never is: a multiple of B in [F, cap] would have been
// the rounded count. So P is then F itself, with B planned from it, and the busiest broker
// carries a little more than the mean: at most one partition more than the others, a
// negligible share of thousands.

// brokersFrom plans the brokers for a partition count, adding its reasons to why.
type brokersFrom func(partitions int32, why *reasons) brokerPlan

// partitionsAndBrokers returns the topic's partition count and the brokers planned from it. A
// fixed count (spec.kafka.topic.partitions) is the user's call and is kept as given, even when it
// leaves cores idle or spreads unevenly (the CLI points both out). The partitions the topic has
// (existing, 0: none) are the least there can be (Observed.Partitions); when they are at least
// what the rule asks for, they are planned as they are: adding partitions only to spread them
// evenly would move keys between partitions on every change of the broker count.
func partitionsAndBrokers(k v1alpha1.KafkaSpec, executors, cores, existing int32, plan brokersFrom, why *reasons) (int32, brokerPlan) {
	if k.Topic.Partitions > 0 {
		p := max(k.Topic.Partitions, existing)
		return p, plan(p, why)
	}
	floor := executors * cores
	if existing >= floor {
		return existing, plan(existing, why)
	}
	// Only the final round's reasons are kept: each round's describe its own broker plan.
	var firstWhy reasons
	first := plan(floor, &firstWhy)
	parts, brokers, roundWhy := floor, first, firstWhy
	for range int(k.Brokers.Max) + 1 {
		next, ok := roundUpWithin(floor, brokers.count, v1alpha1.MaxAutoPartitions)
		if !ok {
			// No multiple of B fits between F and the cap: F, planned as above.
			parts, brokers, roundWhy = floor, first, firstWhy
			break
		}
		if next == parts {
			break
		}
		parts = next
		roundWhy = nil
		brokers = plan(parts, &roundWhy)
	}
	*why = append(*why, roundWhy...)
	return parts, brokers
}

// roundUpWithin returns the smallest multiple of b not below f, and false when that is above
// limit.
func roundUpWithin(f, b int32, limit int64) (int32, bool) {
	b = max(b, 1)
	n := ceilDiv(int64(f), int64(b)) * int64(b)
	if n > limit {
		return 0, false
	}
	return int32(n), true
}
