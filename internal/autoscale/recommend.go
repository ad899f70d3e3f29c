package autoscale

import (
	"fmt"
	"math"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
)

// Bounds is the range the autoscaler may choose a count in. Floor is what the plan asks for
// the declared workload (spec.workload is what the pipeline must sustain, so the autoscaler
// adds capacity on top of it but never takes it below), Max the spec's maximum.
type Bounds struct {
	Floor, Max int32
}

// Policy is everything Recommend decides with besides the readings.
type Policy struct {
	// Interval is the reading interval; samples older than two intervals are stale.
	Interval time.Duration
	// Range is the range the ingest and the brokers' received bytes are rates over (the
	// default queries' $range); 0 when it is not known (the queries are overridden), which
	// leaves a rise to be seen over the whole range (rise.go).
	Range time.Duration
	// Stabilization is how long a lower recommendation must hold before a scale-down.
	Stabilization time.Duration
	// BrokerStabilization is the least a broker scale-down waits for, whatever Stabilization
	// (spec.autoscaling.brokerScaleDownStabilizationSeconds; reversal.go: a broker that starts
	// to leave cannot be asked back).
	BrokerStabilization time.Duration
	// ScaleDownDelay is how long after a scale-up the resource is not scaled down
	// (spec.autoscaling.scaleDownDelayAfterScaleUpSeconds).
	ScaleDownDelay time.Duration
	// Cooldown is how long a resource is left alone after a change.
	Cooldown time.Duration
	// CatchUp is how soon a lag must be drained (spec.autoscaling.catchUpSeconds); 0 means
	// DefaultCatchUp.
	CatchUp time.Duration
	// SaturatedFactor is how much more than a saturated Kafka carries the demand is taken to
	// be (spec.autoscaling.saturatedScaleUpPercent / 100); 1 or less means the default.
	SaturatedFactor float64

	// LinkUsableBytesPerSecond and TargetUtilizationPercent are the bandwidth model's link.
	LinkUsableBytesPerSecond int64
	TargetUtilizationPercent int32

	Brokers, Executors, DataNodes Bounds
	// SpecPerExecutor and PerDataNode are the spec's processing and indexing capacities.
	SpecPerExecutor, PerDataNode int64
	// IndexCopies is 1 + spec.elasticsearch.replicas (plan.IndexCopies): every copy of a record
	// is indexed, so the data nodes' capacity is shared by the copies and the indexing-rate
	// signal counts each of them. 0 means 1.
	IndexCopies int32
	// Memory is the spec's executor memory; the autoscaler shifts its percents.
	Memory v1alpha1.MemorySpec

	// Safety says whether brokers may leave now, as Strimzi reports it.
	Safety BrokerSafety
	// SparkRunning: the Spark operator reports the job running. While it is not (it is being
	// submitted, or resubmitted after a change), its lag says nothing about its executors.
	SparkRunning bool
}

// State is what is applied now, and what the autoscaler remembered from earlier readings.
type State struct {
	// Brokers, Executors and DataNodes are the plan's counts now.
	Brokers, Executors, DataNodes int32
	// Placement is the applied plan's partitions and replication factor: the busiest broker
	// holds whole partitions (plan.PartitionPlacement).
	Placement plan.PartitionPlacement
	// PageCachePercent, OffHeapPercent and PerExecutor are the memory split and the
	// processing rate the plan uses now.
	PageCachePercent, OffHeapPercent int32
	PerExecutor                      int64
	// Status is status.autoscaling (nil at first).
	Status *v1alpha1.AutoscalingStatus
}

// Decision is what Recommend decided.
type Decision struct {
	// Status is the new status.autoscaling: the targets, the last decision, the windows.
	Status v1alpha1.AutoscalingStatus
	// Changes are this reading's decisions, changes and held-back changes alike, for events
	// and metrics; empty when nothing was due.
	Changes []v1alpha1.AutoscalingDecision
	// Missing lists the signals a scalable resource needs that had no fresh sample.
	Missing []string
	// Summary says in one line what the autoscaler sees, for the condition.
	Summary string
}

// hysteresisPoints is the margin under the target utilization a scale-down must leave: with a
// target of 80 %, brokers are removed only when the rest would run at 70 % or less, so that
// the load that asked for the removal does not at once ask for the broker back. An estimate;
// not overridable (spec.network.targetUtilizationPercent moves the target it is under).
const hysteresisPoints = 10

// Recommend decides, from one reading, which counts and memory split the pipeline should run
// with. It is pure: the same state, readings, policy and time give the same decision.
func Recommend(cur State, obs Observations, pol Policy, now time.Time) Decision {
	st := v1alpha1.AutoscalingStatus{}
	if cur.Status != nil {
		st = *cur.Status.DeepCopy()
	}
	// Every window exists before any is used: window() appends, which would move the others.
	for _, res := range []string{v1alpha1.ResourceBrokers, v1alpha1.ResourceExecutors,
		v1alpha1.ResourceElasticsearchDataNodes, v1alpha1.ResourceMemorySplit} {
		window(&st, res)
	}
	r := &recommender{obs: obs, pol: pol, now: now, st: &st}
	var seen []string

	// The demand first, then every stage sized on it (demand.go); then this reading of the
	// intake is kept for the next one's (rise.go).
	ingest, okIngest := r.value(IngestRate)
	_, rx, _, okLink := r.linkTraffic()
	d := r.demand(cur)
	r.recordIntake(ingest, rx, okIngest && okLink)
	r.held = d.capped || pol.Safety.Joining > 0 || r.scaleUpPending()

	// Brokers, from the busier direction of the brokers' links.
	if rd, ok := r.brokerReading(cur, d); ok {
		seen = append(seen, rd.what)
		st.Brokers, _ = r.step(v1alpha1.ResourceBrokers, rd, cur.Brokers, st.Brokers, pol.Brokers, r.brokerGate)
	} else {
		r.unread(v1alpha1.ResourceBrokers, pol.Brokers, []Signal{BrokerTransmitBytes, BrokerReceiveBytes})
	}

	// Executors and the memory split: only while the job runs, from its lag and rates.
	perExecutor := cur.PerExecutor
	if pol.SparkRunning {
		if rd, c, ok := r.executorReading(cur, d); ok {
			seen = append(seen, rd.what)
			var changed bool
			st.Executors, changed = r.step(v1alpha1.ResourceExecutors, rd, cur.Executors, st.Executors, pol.Executors, nil)
			if changed {
				// A measured rate takes effect with the change it caused: changing it alone
				// would resubmit the job for nothing the counts show.
				perExecutor = c
				r.coolSpark()
			}
		} else {
			r.unread(v1alpha1.ResourceExecutors, pol.Executors, executorSignals)
		}
		r.memory(cur)
	} else {
		forget(window(&st, v1alpha1.ResourceExecutors))
		forget(window(&st, v1alpha1.ResourceMemorySplit))
	}
	st.MessagesPerSecondPerExecutor = 0 // the spec's rate holds unless a measured one differs
	if perExecutor > 0 && perExecutor != pol.SpecPerExecutor {
		st.MessagesPerSecondPerExecutor = perExecutor
	}

	// Elasticsearch data nodes, from the indexing rate.
	if rd, ok := r.dataNodeReading(cur, d); ok {
		seen = append(seen, rd.what)
		st.ElasticsearchDataNodes, _ = r.step(v1alpha1.ResourceElasticsearchDataNodes, rd, cur.DataNodes,
			st.ElasticsearchDataNodes, pol.DataNodes, nil)
	} else {
		r.unread(v1alpha1.ResourceElasticsearchDataNodes, pol.DataNodes, []Signal{ElasticsearchIndexingRate})
	}

	if n := len(r.changes); n > 0 {
		last := r.changes[n-1]
		st.LastDecision = &last
	}
	return Decision{Status: st, Changes: r.changes, Missing: r.missing, Summary: strings.Join(seen, "; ")}
}

// reading is what one reading of a resource's signals recommends.
type reading struct {
	up, down int32
	// upReason and downReason name why a change either way would be made; what says what was
	// measured, for messages.
	upReason, downReason string
	what                 string
	// atOnce: the brokers' intake is saturated: the scale-up needs no window (see step).
	atOnce bool
}

type recommender struct {
	obs     Observations
	pol     Policy
	now     time.Time
	st      *v1alpha1.AutoscalingStatus
	changes []v1alpha1.AutoscalingDecision
	missing []string
	// held: what reaches Kafka is no measure of the demand now (its intake is saturated, or
	// brokers are joining and take no traffic until their partitions are moved), so no stage
	// is scaled down on it.
	held bool
	// traffic, when > 0, scales the brokers' measured traffic to the newest interval's
	// (demand.early, rise.go).
	traffic float64
}

// maxAge is how old a sample may be: two intervals, so that one late scrape is no gap.
func (r *recommender) maxAge() time.Duration { return 2 * r.pol.Interval }

// upSpan is the scale-up window: three readings. One reading above the target is noise; the
// third in a row is a trend, acted on at once.
func (r *recommender) upSpan() time.Duration { return 2 * r.pol.Interval }

func (r *recommender) value(s Signal) (float64, bool) { return r.obs.fresh(s, r.now, r.maxAge()) }

// unread handles a resource whose signals are missing: its window starts afresh, and when the
// resource could scale, the missing signals are reported.
func (r *recommender) unread(resource string, b Bounds, signals []Signal) {
	forget(window(r.st, resource))
	if b.Floor < b.Max {
		r.missing = append(r.missing, r.obs.missing(signals, r.now, r.maxAge())...)
	}
}

// step records a reading in the resource's window and decides: up, when the whole scale-up
// window asked for more (or the latest reading, for a saturated intake: reading.atOnce), to what the latest reading needs; or down, no sooner than the
// scale-down delay after the last scale-up, to the largest count the whole stabilisation window
// (or the hold a reversal taught the resource: reversal.go) asked for (with the hysteresis margin); within the bounds, outside the cool-down. gate,
// when given, can hold either back. It returns the resource's new target and whether it
// changed.
func (r *recommender) step(resource string, rd reading, current, target int32, b Bounds,
	gate func(from, to int32) (reason, message string)) (int32, bool) {
	w := window(r.st, resource)
	b.Floor = max(b.Floor, 1)
	b.Max = max(b.Max, b.Floor)
	clamp := func(n int32) int32 { return min(max(n, 1), b.Max) }
	keep := max(r.stabilization(w), r.upSpan()) + r.pol.Interval
	observe(w, clamp(rd.up), clamp(max(rd.down, rd.up)), r.now, 2*r.pol.Interval+r.pol.Interval/2, keep)
	if target == 0 {
		target = current
	}
	if current <= 0 {
		return target, false
	}
	if cooling, _ := coolingDown(w, r.now, r.cooldown(resource)); cooling {
		return target, false
	}
	span := r.upSpan()
	if rd.atOnce {
		// A saturated intake is no noise: the reading is a rate over $range (four intervals)
		// at the link's limit, and every second of it leaves records waiting at the
		// producers. The brokers' step is the slowest there is (they start, then Cruise
		// Control moves their share of the data), so it is asked for at the first such
		// reading rather than the third (issue 28: half a minute sooner on step-up).
		span = 0
	}
	if up, full := minUp(w, r.now, span); full && up > current {
		// The whole window asks for more: a trend, not noise. The step goes to what the latest
		// reading needs, at once (DS2's one step): the readings before it are rates over a
		// range that still holds the lower load, and stopping at their count would leave a
		// staircase of steps, each with its own cool-down and resubmission.
		to := clamp(rd.up)
		if to > current {
			// Asked back, whether it happens now or is held back (a broker still leaving).
			learnFromReversal(w, r.now)
		}
		if to > current && r.heldBack(resource, gate, current, to) {
			return target, false
		}
		if to > current {
			r.change(resource, v1alpha1.ActionScaleUp, current, to, rd.upReason, rd.what)
			w.LastChange = &metav1.Time{Time: r.now.Truncate(time.Second)}
			w.LastScaleUp = w.LastChange
			return to, true
		}
	}
	if w.LastScaleUp != nil && r.now.Sub(w.LastScaleUp.Time) < r.pol.ScaleDownDelay {
		return target, false
	}
	if down, full := maxDown(w, r.now, r.stabilization(w)); full && max(down, b.Floor) < current {
		to := max(down, b.Floor)
		if r.heldBack(resource, gate, current, to) {
			return target, false
		}
		r.change(resource, v1alpha1.ActionScaleDown, current, to, rd.downReason, rd.what)
		w.LastChange = &metav1.Time{Time: r.now.Truncate(time.Second)}
		// The load stayed low past any hold: its rhythm changed (reversal.go).
		w.LastScaleDown, w.ScaleDownHoldSeconds = w.LastChange, 0
		return to, true
	}
	return target, false
}

// heldBack says whether gate holds the change from current to `to` back, and records it as a
// Blocked decision once, not at every reading it stays held back.
func (r *recommender) heldBack(resource string, gate func(from, to int32) (string, string), current, to int32) bool {
	if gate == nil {
		return false
	}
	reason, msg := gate(current, to)
	if reason == "" {
		return false
	}
	if last := r.st.LastDecision; last == nil || last.Resource != resource ||
		last.Action != v1alpha1.ActionBlocked || last.Reason != reason || last.To != to {
		r.change(resource, v1alpha1.ActionBlocked, current, to, reason, msg)
	}
	return true
}

// cooldown is how long a resource is left alone after it changed. A change of the Spark job's
// executors or memory resubmits the job (see coolSpark): its rates are then read over a range
// that still holds the downtime until four intervals (the default queries' $range) after it
// runs again, and would ask for more executors for a slowness that is gone. Spark resources wait
// that much longer.
func (r *recommender) cooldown(resource string) time.Duration {
	if resource == v1alpha1.ResourceExecutors || resource == v1alpha1.ResourceMemorySplit {
		return r.pol.Cooldown + 4*r.pol.Interval
	}
	return r.pol.Cooldown
}

func (r *recommender) change(resource, action string, from, to int32, reason, message string) {
	r.changes = append(r.changes, v1alpha1.AutoscalingDecision{
		Resource: resource, Action: action, From: from, To: to, Reason: reason,
		Message: message, Time: metav1.Time{Time: r.now.Truncate(time.Second)},
	})
}

// margin is the hysteresis margin for a target, at most half of it.
func margin(target int32) int32 { return min(hysteresisPoints, target/2) }

// countFor is how many units of capacity each carry `load`, at least one.
func countFor(load, each float64) int32 {
	if each <= 0 || load <= 0 || math.IsNaN(load) {
		return 1
	}
	n := math.Ceil(load/each - 1e-9)
	if n > math.MaxInt32 {
		return math.MaxInt32
	}
	return max(int32(n), 1)
}

// rate formats bytes per second for messages.
func rate(bps float64) string {
	switch {
	case bps >= 1e9:
		return fmt.Sprintf("%.2f GB/s", bps/1e9)
	case bps >= 1e6:
		return fmt.Sprintf("%.2f MB/s", bps/1e6)
	default:
		return fmt.Sprintf("%.0f kB/s", bps/1e3)
	}
}
