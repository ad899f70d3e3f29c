package simulate

import (
	"math"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Oracle replays the trace as Run does, with the autoscaler replaced by one that knows the load
// of the moment: at every interval it grows each resource to the static plan for the current
// load (never under the declared workload), with no reading, no window and no delay of its own,
// and never scales down (a scale-down resubmits the job, which counts as time below demand).
// The changes still take the delays a real cluster takes: brokers start and Cruise Control
// moves their data, the job is resubmitted, data nodes start. It is a reference, not a floor:
// it asks for no more than the load needs, and an autoscaler that overshoots (the probe of a
// saturated intake) moves load onto joining brokers sooner. Where even it spends most of a
// spike below demand, the spike is shorter than the brokers' moves, and only capacity kept in
// advance carries it (docs/simulate.md).
func Oracle(p *v1alpha1.AnalyticsPipeline, tiers []v1alpha1.StorageTier, tr Trace, delays Delays) (*Result, error) {
	return run(p, tiers, tr, delays, nil, true)
}

// foresee is the oracle's decision at now: the static plan for the load of the moment, its
// changes recorded as decisions.
func (s *sim) foresee(now float64) (v1alpha1.Plan, error) {
	pt := s.trace.At(now)
	next, err := planFor(s.p, s.tiers, math.Max(pt.MessagesPerSecond, float64(s.p.Spec.Workload.MessagesPerSecond)), pt.MessageBytes)
	if err != nil {
		return next, err
	}
	from := countsOf(s.applied)
	next.Brokers = max(next.Brokers, from.Brokers)
	next.Executors = max(next.Executors, from.Executors)
	next.ElasticsearchDataNodes = max(next.ElasticsearchDataNodes, from.DataNodes)
	to := countsOf(next)
	for _, c := range []struct {
		resource string
		from, to int32
	}{{v1alpha1.ResourceBrokers, from.Brokers, to.Brokers}, {v1alpha1.ResourceExecutors, from.Executors, to.Executors},
		{v1alpha1.ResourceElasticsearchDataNodes, from.DataNodes, to.DataNodes}} {
		if c.from == c.to {
			continue
		}
		ch := v1alpha1.AutoscalingDecision{Resource: c.resource, Action: v1alpha1.ActionScaleUp, From: c.from, To: c.to, Reason: "Oracle"}
		s.res.Decisions = append(s.res.Decisions, Decision{Seconds: now, AutoscalingDecision: ch})
		s.count(now, ch)
	}
	return next, nil
}
