package autoscale

import (
	"time"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Reversals, and what the autoscaler learns from one. A resource that scales down and is asked
// back soon after paid twice for nothing: brokers leave and join again with their data moved
// both ways by Cruise Control, the Spark job is resubmitted twice, data nodes drain and start.
// A fixed stabilisation window cannot prevent it for every load: a load that falls for a while
// longer than the window, and rises again, is followed down and back up whatever the window is
// (a load 20 minutes at 6,000 and 20 at 12,000 records/s reversed every cycle under the
// default 5 minutes; 45 minutes low and 15 high reversed every cycle under 30). So the window
// of a resource whose scale-down was reversed grows to the cycle the load just went through,
// plus the reversal window: the next scale-down needs the load to stay low longer than a whole
// such cycle, and a load that keeps its rhythm keeps its capacity. This is route flap damping
// (RFC 2439) in the small: the penalty is earned by a flap and paid by holding still; a load
// that stays low past the hold has changed its rhythm, scales down, and the hold is cleared.

// ReversalWindow is how soon after an action the opposite one counts as a reversal: half an
// hour, whatever the pipeline's stabilisation window. `strata simulate` counts reversals by it.
const ReversalWindow = 30 * time.Minute

// maxHold bounds a learned hold, as the spec bounds scaleDownStabilizationSeconds.
const maxHold = 24 * time.Hour

// learnFromReversal is called as a scale-up of the resource is asked for at now, whether it
// happens or is held back (brokers still leaving: brokerGate): when that reverses a scale-down
// less than ReversalWindow before, the resource's scale-downs are held for the cycle the load
// went through (from the scale-up before that scale-down, or that scale-down when there was
// none) plus ReversalWindow. Learned once per reversed scale-down (which cleared the hold): a
// scale-up held back is asked for again at every reading.
func learnFromReversal(w *v1alpha1.AutoscalingWindow, now time.Time) {
	if w.LastScaleDown == nil || now.Sub(w.LastScaleDown.Time) >= ReversalWindow || w.ScaleDownHoldSeconds > 0 {
		return
	}
	start := w.LastScaleDown.Time
	if w.LastScaleUp != nil && w.LastScaleUp.Time.Before(start) {
		start = w.LastScaleUp.Time
	}
	hold := min(now.Sub(start)+ReversalWindow, maxHold)
	w.ScaleDownHoldSeconds = int32(hold / time.Second)
}

// stabilization is the span a scale-down of the resource needs the lower recommendation over:
// the spec's window, or the hold a reversal taught it when longer; for brokers, at least the
// policy's BrokerStabilization.
//
// A broker that starts to leave cannot be asked back. Strimzi carries a remove-brokers
// auto-rebalance it started to its end whatever the pool asks for meanwhile
// (KafkaAutoRebalancingReconciler.onRebalanceOnScaleDown at 1.2.0: with no node blocked from
// scaling down any more, a rebalance New, PendingProposal, ProposalReady or Rebalancing goes
// on, and once Ready it is deleted and the auto-rebalance goes Idle), so a pool raised again
// keeps the broker with its replicas moved off it, and no add-brokers rebalance fills it (only
// nodes added are). So brokers leave only once the load has stayed low for
// spec.autoscaling.brokerScaleDownStabilizationSeconds, by default the reversal window;
// executors and data nodes, whose changes can be taken back, follow the spec's window.
func (r *recommender) stabilization(w *v1alpha1.AutoscalingWindow) time.Duration {
	s := max(r.pol.Stabilization, time.Duration(w.ScaleDownHoldSeconds)*time.Second)
	if w.Resource == v1alpha1.ResourceBrokers {
		s = max(s, r.pol.BrokerStabilization)
	}
	return s
}
