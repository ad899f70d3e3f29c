package simulate

import (
	"math"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Brokers kept in advance. No decision taken after a rise begins brings a broker sooner than
// Cruise Control moves its share of the partitions onto it (docs/planning.md, "A broker
// joining"), so on a trace whose rises are shorter than that the producers wait whatever the
// autoscaler does: the oracle, which knows the load at once, waits as long on the sample's
// flash spike. What carries such a rise is a broker that is there before it:
// spec.kafka.brokers.min. KeepBrokers answers the question that leaves the owner with: how many,
// and at what cost, on their own trace.

// BrokersKept is what keeping brokers in advance would have done on a trace on which Kafka's
// intake fell below the demand.
type BrokersKept struct {
	// Min is the fewest spec.kafka.brokers.min with which Kafka's intake never fell below the
	// demand; 0 when none up to the brokers the trace's peak is planned for (or
	// spec.kafka.brokers.max) did.
	Min int32 `json:"min"`
	// Tried is the most brokers.min replayed: the brokers of the static configuration for the
	// trace's peak, or spec.kafka.brokers.max; 0 when that max left none to try.
	Tried int32 `json:"tried"`
	// SecondsBelowDemand and SecondsIntakeBelowDemand are that run's (Result's fields).
	SecondsBelowDemand       float64 `json:"secondsBelowDemand"`
	SecondsIntakeBelowDemand float64 `json:"secondsIntakeBelowDemand"`
	// StaticPeakRatio is that run's replica-seconds over the static peak's, all resources
	// summed (Result.Ratio), beside the run's own in Result.
	StaticPeakRatio float64 `json:"staticPeakRatio"`
}

// KeepBrokers replays the trace again with spec.kafka.brokers.min raised, from one over the
// pipeline's own up to the brokers the static configuration sized for the trace's peak holds
// (beyond which keeping more cannot take more: that configuration carries the peak) or
// spec.kafka.brokers.max, and returns the fewest with which Kafka's intake was never below the
// demand. It returns nil when r's intake never was (nothing to keep). r is the run of the
// pipeline as it is, on the same trace and delays.
//
// The fewest is found by bisection, which takes the time the intake is below the demand to fall
// as the min rises: a broker more kept in advance is there when a rise begins, and the
// autoscaler never goes under the min. That keeps the replays to a few (about log2 of the range)
// where the range is wide: a trace of a week at 1,000 brokers' peak would otherwise be replayed
// 999 times. TestKeepBrokersIsTheFewest checks it against replaying each min in turn; what it
// returns is always a replay's own figures.
func KeepBrokers(p *v1alpha1.AnalyticsPipeline, tiers []v1alpha1.StorageTier, tr Trace, delays Delays, r *Result) (*BrokersKept, error) {
	if r.SecondsIntakeBelowDemand == 0 || r.DurationSeconds <= 0 {
		return nil, nil
	}
	from := p.Spec.Kafka.Brokers.Min + 1
	peak := int32(math.Round(r.Resources.Brokers.StaticPeakReplicaSeconds / r.DurationSeconds))
	to := min(max(peak, from), p.Spec.Kafka.Brokers.Max)
	if to < from {
		return &BrokersKept{}, nil // spec.kafka.brokers.max is its min: none to keep
	}
	replay := func(k int32) (*BrokersKept, error) {
		q := p.DeepCopy()
		q.Spec.Kafka.Brokers.Min = k
		res, err := Run(q, tiers, tr, delays)
		if err != nil {
			return nil, err
		}
		return &BrokersKept{Min: k, Tried: to, SecondsBelowDemand: res.SecondsBelowDemand,
			SecondsIntakeBelowDemand: res.SecondsIntakeBelowDemand, StaticPeakRatio: res.Ratio()}, nil
	}
	best, err := replay(to)
	if err != nil {
		return nil, err
	}
	if best.SecondsIntakeBelowDemand > 0 {
		return &BrokersKept{Tried: to}, nil
	}
	for lo, hi := from, to; lo < hi; {
		mid := lo + (hi-lo)/2
		k, err := replay(mid)
		if err != nil {
			return nil, err
		}
		if k.SecondsIntakeBelowDemand == 0 {
			hi, best = mid, k
		} else {
			lo = mid + 1
		}
	}
	return best, nil
}
