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
// that one odd reading cannot swing the plan. Both are estimates, not overridable:
// spec.spark.messagesPerSecondPerExecutor is the figure they refine.
const (
	refineThreshold = 0.10
	refineFactor    = 4
)

// executorReading: executors needed to process the demand within the target utilization and,
// at full capacity, the demand plus the lag's drain within the catch-up time (demand.go), at the
// (refined) per-executor rate. It also returns that rate.
//
// A scale-down needs the lag drained (less than one interval's ingest) and the demand measured
// (Kafka's intake not saturated, no brokers joining): executors are not removed while they are
// catching up, nor on a rate Kafka caps.
func (r *recommender) executorReading(cur State, d demand) (reading, int64, bool) {
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

	t := r.pol.TargetUtilizationPercent
	rd := reading{
		up:         d.units(float64(c), t),
		upReason:   "LagGrowing",
		downReason: "Overprovisioned",
	}
	if r.steppedAlready(v1alpha1.ResourceExecutors, d) {
		rd.up = min(rd.up, cur.Executors)
	}
	switch {
	case d.capped:
		rd.upReason = "IntakeSaturated"
	case !saturated:
		rd.upReason = "IngestAboveCapacity"
	}
	if lag <= ingest*interval && !r.held {
		rd.down = countFor(d.rate, float64(c)*float64(t-margin(t))/100)
	} else {
		rd.down = max(rd.up, cur.Executors)
	}
	rd.what = fmt.Sprintf("%s; processed %.0f msgs/s, lag %+.0f/s; at %d%% of %d msgs/s per executor that takes %d executors",
		d.describe(), processed, trend, t, c, rd.up)
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
	if measured < float64(c) && r.indexingSaturated(cur) {
		// The job writes no faster than Elasticsearch indexes: the lag grows because of the
		// data nodes, and what each executor processes says nothing of what it could.
		return c
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

// indexingSaturated says whether the data nodes index at (nearly) all they can, so that what the
// job processes is Elasticsearch's limit rather than the executors'.
func (r *recommender) indexingSaturated(cur State) bool {
	x, ok := r.value(ElasticsearchIndexingRate)
	if !ok || r.pol.PerDataNode <= 0 || cur.DataNodes <= 0 {
		return false
	}
	return x >= saturatedShare*float64(cur.DataNodes)*float64(r.pol.PerDataNode)
}

// saturatedShare is the share of a stage's capacity above which its measured rate is taken for
// its limit rather than for the demand on it. An estimate; not overridable.
const saturatedShare = 0.95

// catchUp is how many units of capacity `each` carry the ingest within the target utilization
// and the ingest plus the lag's drain (need) at full capacity: the headroom the target keeps is
// there for catching up, so a lag the units can drain with it asks for no more of them. A job
// resubmitted to change its executors comes back with the lag of its downtime; counting that
// lag against the target would ask for more executors, and another resubmission, each time.
func catchUp(ingest, need, each float64, target int32) int32 {
	return max(countFor(ingest, each*float64(target)/100), countFor(need, each))
}
