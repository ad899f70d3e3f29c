package cli

import (
	"fmt"
	"math"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/plan"
)

// The spikes section answers what a pipeline's owner must decide before a spike, since no
// decision taken after one begins can be quicker than a broker joining: how far the planned
// brokers take a rise of the load, and how long one broker more takes to carry its share once
// asked for. A broker carries load only once Cruise Control has moved its share of the
// partitions onto it, and a topic at its retention makes that share large: on the sample
// traces this, not the autoscaler's reading, is what keeps a ten-minute spike below demand
// (docs/simulate.md, "Not met, and why"). The time is desired.RebalanceMove's, the one the
// simulator times its broker moves with, so the two agree.

// brokerJoin is one broker more joining the planned brokers, with the topic at its retention.
type brokerJoin struct {
	// intake is what the planned brokers take, records a second: the lesser of the brokers'
	// links and disks (the producers' links are not the brokers').
	intake int64
	// perBroker is the most a broker keeps: its partition replicas at retention.bytes and the
	// two segments over it Kafka may keep (internal/plan, retention.go), or, when retention.ms
	// keeps less, what the broker writes in that time at the planned rate and those segments.
	perBroker float64
	// moved is the bytes Cruise Control moves onto the new broker, at rate bytes a second.
	moved, rate float64
}

// Seconds is how long the move takes: from the new broker running to its carrying its share.
func (j brokerJoin) Seconds() float64 {
	if j.rate <= 0 {
		return 0
	}
	return j.moved / j.rate
}

// nextBrokerPlan is the plan the operator applies once one broker more is asked for: the same
// topic (its partitions kept, as the operator plans a topic that exists) on pl.Brokers + 1. Its
// rebalance template's throttle is the one Strimzi's add-brokers auto-rebalance moves the data
// with. ok is false when no broker can join or the plan fails.
func nextBrokerPlan(p *v1alpha1.AnalyticsPipeline, tiers []v1alpha1.StorageTier, pl v1alpha1.Plan) (v1alpha1.Plan, bool) {
	if pl.Brokers <= 0 || pl.Brokers >= p.Spec.Kafka.Brokers.Max {
		return v1alpha1.Plan{}, false
	}
	q := p.DeepCopy()
	q.Spec.Kafka.Brokers.Min = pl.Brokers + 1
	r, err := plan.Compute(q, tiers, plan.Observed{Partitions: pl.Partitions})
	if err != nil || r.Plan.Brokers != pl.Brokers+1 {
		return v1alpha1.Plan{}, false
	}
	return r.Plan, true
}

// planBrokerJoin is brokerJoin for the plan, next being the plan with one broker more
// (nextBrokerPlan); ok is false when the plan has no brokers or no retention to reason about.
// With no next plan (next.Brokers 0), only the intake and what a broker keeps are known.
func planBrokerJoin(s v1alpha1.AnalyticsPipelineSpec, pl, next v1alpha1.Plan) (j brokerJoin, ok bool) {
	j.intake = math.MaxInt64
	for _, st := range pl.Stages {
		if st.Name == v1alpha1.StageKafkaBrokerNetwork || st.Name == v1alpha1.StageKafkaDisk {
			j.intake = min(j.intake, st.MaxMessagesPerSecond)
		}
	}
	r := pl.Retention
	if pl.Brokers <= 0 || j.intake == math.MaxInt64 || j.intake <= 0 || pl.Partitions <= 0 || r.KafkaRetentionBytes <= 0 {
		return brokerJoin{}, false
	}
	held := math.Ceil(float64(pl.Partitions) * float64(s.Kafka.ReplicationFactor) / float64(pl.Brokers))
	slack := held * 2 * float64(r.KafkaSegmentBytes)
	j.perBroker = held*float64(r.KafkaRetentionBytes) + slack
	if r.KafkaRetentionMs > 0 {
		// retention.ms bounds it too: what the broker writes in that time, whole segments kept.
		j.perBroker = min(j.perBroker, float64(pl.BrokerDiskWriteBytesPerSecond)*float64(r.KafkaRetentionMs)/1000+slack)
	}
	// During the spike the topic is written at what Kafka takes: the moving partitions' live
	// writes come out of the throttle at that rate.
	ingest := float64(j.intake) * float64(s.Workload.MessageBytes)
	if next.Brokers > pl.Brokers {
		j.moved, j.rate = desired.RebalanceMove(next, pl.Brokers, next.Brokers, j.perBroker, ingest)
	}
	return j, true
}

// writeSpikes prints the spikes section.
func writeSpikes(t *tableWriter, p *v1alpha1.AnalyticsPipeline, tiers []v1alpha1.StorageTier, pl v1alpha1.Plan) {
	s := p.Spec
	next, _ := nextBrokerPlan(p, tiers, pl)
	j, ok := planBrokerJoin(s, pl, next)
	if !ok {
		return
	}
	mps := s.Workload.MessagesPerSecond
	t.printf("\nSPIKES: what the brokers take before one more joins\n")
	text := fmt.Sprintf("Kafka takes up to %d msgs/s on %d brokers (%.2fx the workload).", j.intake, pl.Brokers,
		float64(j.intake)/float64(max(mps, 1)))
	if pl.Brokers >= s.Kafka.Brokers.Max {
		t.wrapped("", "", text+fmt.Sprintf(" No broker can join: spec.kafka.brokers.max is %d.", s.Kafka.Brokers.Max))
		return
	}
	if j.rate <= 0 {
		t.wrapped("", "", text)
		return
	}
	text += fmt.Sprintf(" One broker more carries its share once Cruise Control has moved it up to %s, "+
		"with the topic at its retention (%s a broker at most), at %s (the throttle of the plan with that "+
		"broker, less what the moving partitions are written at that load): up to %s after it starts. A load above %d msgs/s for "+
		"less than that is carried only in part (the intake rises as each partition's move completes) unless brokers are "+
		"kept in advance: spec.kafka.brokers.min.",
		gigabytes(j.moved), gigabytes(j.perBroker), rate(int64(j.rate)), minutes(j.Seconds()), j.intake)
	t.wrapped("", "", text)
}

func gigabytes(b float64) string {
	return trimZeros(fmt.Sprintf("%.1f", b/1e9)) + " GB"
}

func minutes(seconds float64) string {
	switch {
	case seconds < 90:
		return fmt.Sprintf("%.0f s", seconds)
	case seconds < 90*60:
		return trimZeros(fmt.Sprintf("%.1f", seconds/60)) + " min"
	}
	return trimZeros(fmt.Sprintf("%.1f", seconds/3600)) + " h"
}
