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
		st.Brokers, _ = r.step(v1alpha1.ResourceBrokers, rd, cur.Brokers, st.Brokers, pol.Brokers, r.brokersMayLeave)
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
// asked for (with the hysteresis margin); within the bounds, outside the cool-down. mayLeave,
// when given, can hold a scale-down back. It returns the resource's new target and whether it
// changed.
func (r *recommender) step(resource string, rd reading, current, target int32, b Bounds,
	mayLeave func(from, to int32) (reason, message string)) (int32, bool) {
	w := window(r.st, resource)
	b.Floor = max(b.Floor, 1)
	b.Max = max(b.Max, b.Floor)
	clamp := func(n int32) int32 { return min(max(n, 1), b.Max) }
	keep := max(r.pol.Stabilization, r.upSpan()) + r.pol.Interval
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
			r.change(resource, v1alpha1.ActionScaleUp, current, to, rd.upReason, rd.what)
			w.LastChange = &metav1.Time{Time: r.now.Truncate(time.Second)}
			w.LastScaleUp = w.LastChange
			return to, true
		}
	}
	if w.LastScaleUp != nil && r.now.Sub(w.LastScaleUp.Time) < r.pol.ScaleDownDelay {
		return target, false
	}
	if down, full := maxDown(w, r.now, r.pol.Stabilization); full && max(down, b.Floor) < current {
		to := max(down, b.Floor)
		if mayLeave != nil {
			if reason, msg := mayLeave(current, to); reason != "" {
				// Reported once, not at every reading it stays held back.
				if last := r.st.LastDecision; last == nil || last.Resource != resource ||
					last.Action != v1alpha1.ActionBlocked || last.Reason != reason || last.To != to {
					r.change(resource, v1alpha1.ActionBlocked, current, to, reason, msg)
				}
				return target, false
			}
		}
		r.change(resource, v1alpha1.ActionScaleDown, current, to, rd.downReason, rd.what)
		w.LastChange = &metav1.Time{Time: r.now.Truncate(time.Second)}
		return to, true
	}
	return target, false
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

// brokerReading: brokers needed so that the busier direction of the busiest broker's link
// stays under the usable link rate times the target (docs/planning.md), from the pods' measured
// traffic, or from Kafka's byte counters when the pods' network metrics are missing. The
// signals are the cluster's totals; Kafka places whole partitions, so a count that does not
// divide them leaves one broker with more than its mean share, and the count is the one whose
// busiest broker fits, as the plan sizes it (plan.PartitionPlacement).
//
// With the ingest known, the traffic is scaled to the demand (demand.go): while the intake is
// saturated the links carry the capped ingest, and sizing on them would add one broker per
// step. The job's reads beyond the ingest (a lag draining) are left out of the traffic held to
// the target; draining the lag within the catch-up time may use the headroom up to the whole
// usable link, as the executors' catch-up does.
func (r *recommender) brokerReading(cur State, d demand) (reading, bool) {
	tx, rx, source, ok := r.linkTraffic()
	link := float64(r.pol.LinkUsableBytesPerSecond)
	if !ok || link <= 0 {
		return reading{}, false
	}
	pl := cur.Placement
	t := r.pol.TargetUtilizationPercent
	limit := link * float64(t) / 100
	rd := reading{
		up:         pl.BrokersFor(rx, tx, limit),
		down:       pl.BrokersFor(rx, tx, link*float64(t-margin(t))/100),
		upReason:   "LinkSaturated",
		downReason: "LinkUnderused",
	}
	busiest, dir := tx, "send"
	if rx > tx {
		busiest, dir = rx, "receive"
	}
	rd.what = fmt.Sprintf("brokers %s %s in all (%s counters)", dir, rate(busiest), source)
	if d.known && d.ingest > 0 && rx > 0 {
		perRecord, steadyTx := d.steadyTraffic(tx, rx, pl)
		k := d.rate / d.ingest
		rd.up = max(pl.BrokersFor(rx*k, steadyTx*k, limit), pl.BrokersFor(rx*k, steadyTx*k+d.drain*perRecord, link))
		switch {
		case d.flushing:
			// The headroom the target keeps is there for catching up, as for the executors;
			// and a lag in Kafka drains at whatever the links leave.
			rd.up = pl.BrokersFor(rx, steadyTx, link)
			rd.what += "; " + d.describe()
		case d.measured:
			rd.upReason, rd.atOnce = "IntakeSaturated", true
			rd.what += "; " + d.describe()
		case d.capped:
			// The demand is an estimate that bounds it from above (the probe, or what the
			// brokers applied carry): it is sized at the whole usable link, as demand.units
			// sizes the other stages. The target's margin is for a measured demand; kept on
			// the probe, it would ask for 2.5 times the brokers that carried the saturated
			// ingest, where doubling them moves their load as fast (a joining broker takes
			// its share from the old ones, which send no faster for more receivers: see
			// docs/simulate.md) and, once the demand is measured, leaves no surplus to give
			// back on a step up to twice the saturated ingest at the link (1.6 times at the
			// target, beyond which the measured demand asks for a second step).
			rd.up = pl.BrokersFor(rx*k, steadyTx*k+d.drain*perRecord, link)
			if !d.inFlight {
				rd.up = min(rd.up, r.probeBrokers(cur, rx, steadyTx))
			}
			rd.upReason, rd.atOnce = "IntakeSaturated", true
			rd.what += "; " + d.describe()
		}
	}
	if r.held {
		rd.down = max(rd.up, cur.Brokers)
	}
	rd.what += fmt.Sprintf("; %d%% of the %s usable link on the busiest broker takes %d brokers", t, rate(link), rd.up)
	return rd, true
}

// brokersMayLeave holds a broker scale-down back unless partitions are fully replicated and
// Strimzi is neither rebalancing nor refusing an earlier scale-down.
func (r *recommender) brokersMayLeave(from, to int32) (string, string) {
	urp, ok := r.value(UnderReplicatedPartitions)
	switch {
	case !ok:
		return "UnderReplicatedPartitionsUnknown", fmt.Sprintf("brokers %d -> %d held back: no fresh %s sample, "+
			"so it is not known that every partition is fully replicated", from, to, UnderReplicatedPartitions)
	case urp > 0:
		return "UnderReplicatedPartitions", fmt.Sprintf("brokers %d -> %d held back: %.0f partitions are under-replicated", from, to, urp)
	case r.pol.Safety.Reason != "":
		return r.pol.Safety.Reason, fmt.Sprintf("brokers %d -> %d held back: %s", from, to, r.pol.Safety.Message)
	}
	return "", ""
}

// dataNodeReading: data nodes needed to index the demand within the target and, at full
// capacity, the demand plus the lag's drain within the catch-up time (demand.go): every record
// that reaches Kafka must be indexed, and the rate the data nodes index is capped by the job
// before them (or by their own limit), so it is no measure of the demand while a lag builds up.
// Without the ingest, the indexing rate is all there is.
func (r *recommender) dataNodeReading(cur State, d demand) (reading, bool) {
	x, ok := r.value(ElasticsearchIndexingRate)
	if !ok || r.pol.PerDataNode <= 0 {
		return reading{}, false
	}
	t := r.pol.TargetUtilizationPercent
	// elasticsearch_indices_indexing_index_total counts the operations of every shard copy,
	// primaries and replicas (elasticsearch_exporter, collector/nodes.go, exports each node's
	// nodes-stats indices.indexing.index_total, which counts the operations on every shard copy
	// the node holds, and the query sums the nodes). In records,
	// both the rate and a node's capacity are divided by the copies, so that they compare with
	// the ingest: undivided, a replicated index always looks like it is catching up.
	copies := float64(max(r.pol.IndexCopies, 1))
	x /= copies
	per := float64(r.pol.PerDataNode) / copies
	rd := reading{
		up:         countFor(x, per*float64(t)/100),
		down:       countFor(x, per*float64(t-margin(t))/100),
		upReason:   "IndexingSaturated",
		downReason: "IndexingUnderused",
	}
	rd.what = fmt.Sprintf("Elasticsearch indexes %.0f records/s × %.0f copies", x, copies)
	if d.known {
		rd.up = d.units(per, t)
		if r.steppedAlready(v1alpha1.ResourceElasticsearchDataNodes, d) {
			rd.up = min(rd.up, cur.DataNodes)
		}
		rd.what = d.describe() + "; " + rd.what
		if d.lag <= d.ingest*r.pol.Interval.Seconds() {
			rd.down = countFor(math.Max(x, d.rate), per*float64(t-margin(t))/100)
		} else {
			rd.down = max(rd.up, cur.DataNodes) // not while a lag drains
		}
	}
	if r.held {
		rd.down = max(rd.up, cur.DataNodes)
	}
	rd.what += fmt.Sprintf("; %d%% of %.0f records/s each takes %d data nodes", t, per, rd.up)
	return rd, true
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
