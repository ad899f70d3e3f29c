package autoscale

import (
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// executorSignals are what executor scaling reads.
var executorSignals = []Signal{IngestRate, ProcessingRate, ConsumerLag, ConsumerLagTrend}

// Refinement of messagesPerSecondPerExecutor: what one executor processes is only measured
// when the executors are saturated (the lag grows while they consume); otherwise processed /
// executors is only a lower bound of it. The estimate moves halfway to what is measured, only
// on a difference of more than refineThreshold, and stays within refineFactor of the spec, so
// that one odd reading cannot swing the plan.
const (
	refineThreshold = 0.10
	refineFactor    = 4
)

// executorReading: executors needed to process the ingest plus drain the lag within the drain
// time, within the target utilisation, at the (refined) per-executor rate. It also returns
// that rate.
//
// A scale-down needs the lag drained (less than one interval's ingest): executors are not
// removed while they are catching up.
func (r *recommender) executorReading(cur State) (reading, int64, bool) {
	ingest, ok1 := r.value(IngestRate)
	processed, ok2 := r.value(ProcessingRate)
	lag, ok3 := r.value(ConsumerLag)
	trend, ok4 := r.value(ConsumerLagTrend)
	if !ok1 || !ok2 || !ok3 || !ok4 || cur.Executors <= 0 {
		return reading{}, 0, false
	}
	lag = math.Max(lag, 0)
	interval := r.pol.Interval.Seconds()
	saturated := trend > math.Max(1, 0.01*ingest) && lag > ingest*interval
	c := r.refine(cur, processed, saturated)

	drain := math.Max(r.pol.Stabilization.Seconds(), 4*interval)
	need := ingest + lag/drain
	t := r.pol.TargetUtilizationPercent
	rd := reading{
		up:         countFor(need, float64(c)*float64(t)/100),
		upReason:   "LagGrowing",
		downReason: "Overprovisioned",
	}
	if !saturated {
		rd.upReason = "IngestAboveCapacity"
	}
	if lag <= ingest*interval {
		rd.down = countFor(ingest, float64(c)*float64(t-margin(t))/100)
	} else {
		rd.down = max(rd.up, cur.Executors)
	}
	rd.what = fmt.Sprintf("ingest %.0f msgs/s, processed %.0f msgs/s, lag %.0f records (%+.0f/s); "+
		"at %d%% of %d msgs/s per executor that takes %d executors", ingest, processed, lag, trend, t, c, rd.up)
	return rd, c, true
}

// refine returns the per-executor processing rate to plan with, from what the executors
// process now.
func (r *recommender) refine(cur State, processed float64, saturated bool) int64 {
	c := cur.PerExecutor
	if c <= 0 {
		c = r.pol.SpecPerExecutor
	}
	measured := processed / float64(cur.Executors)
	if !saturated && measured <= float64(c) {
		return c // not saturated: the executors could do more than they are asked
	}
	next := float64(c) + (measured-float64(c))/2
	if math.Abs(next-float64(c)) <= refineThreshold*float64(c) {
		return c
	}
	spec := float64(r.pol.SpecPerExecutor)
	next = math.Min(math.Max(next, spec/refineFactor), spec*refineFactor)
	return max(int64(math.Round(next)), 1)
}

// coolSpark starts the cool-down of both Spark resources: a change of the executor count and a
// change of the memory split each resubmit the job (see README "Autoscaling"), so neither
// follows the other before the job has run a while with the first.
func (r *recommender) coolSpark() {
	now := &metav1.Time{Time: r.now.Truncate(time.Second)}
	window(r.st, v1alpha1.ResourceExecutors).LastChange = now
	window(r.st, v1alpha1.ResourceMemorySplit).LastChange = now
}
