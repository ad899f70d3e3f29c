package autoscale

import (
	"fmt"
	"math"
	"time"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
)

// The demand, before any stage is sized. Two studies shape this step:
//
//   - Dhalion (Floratou et al., VLDB 2017) diagnoses the root bottleneck before it resolves
//     anything: a stage downstream of a saturated one shows the saturated stage's limit, not
//     the demand, and resizing it on that rate is the wrong cure. Here the root is Kafka's
//     intake: when the brokers' links are saturated, what reaches Kafka is capped, and so is
//     everything downstream of it.
//   - DS2 (Kalavri et al., OSDI 2018) sizes every operator at once from the source's rate and
//     each operator's true rate per instance, so that one step reaches the need instead of a
//     staircase of steps, each limited by the stage before it. Here every stage is sized on the
//     same demand (the ingest, plus the lag drained within spec.autoscaling.catchUpSeconds) and
//     on its own capacity per replica (messagesPerSecondPerExecutor, refined from measurement;
//     messagesPerSecondPerNode; the link), never on the rate an upstream stage lets through.
//
// What DS2 has and a Kafka pipeline lacks is the source's true rate when the source is the
// bottleneck: producers that Kafka cannot take from wait (or drop), and no broker metric shows
// what they would send. So while Kafka's intake is saturated, the demand is taken to be the
// measured ingest times spec.autoscaling.saturatedScaleUpPercent / 100, a bounded step as the
// HPA's scale-up policy and TCP's slow start take, until the intake is no longer saturated and
// the measured ingest is the demand again.

// demand is what one reading says the pipeline is asked to carry.
type demand struct {
	// known: the ingest rate was read. Without it each stage falls back on its own signal.
	known bool
	// ingest is the measured rate records reach Kafka at; rate the demand estimate: the ingest,
	// or more while Kafka's intake is saturated.
	ingest, rate float64
	// processed is the rate the job consumes at (0 when unread).
	processed float64
	// lag is the records waiting in Kafka; drain the rate that empties it within the catch-up
	// time; draining says the lag is falling.
	lag, drain float64
	draining   bool
	// capped: Kafka's intake is saturated, so the ingest is a lower bound of the demand.
	capped bool
	// flushing: capped, but within the catch-up time after brokers the autoscaler added began
	// to carry traffic: the producers are sending what waited while Kafka was saturated, at
	// all Kafka takes, and that says nothing of the demand once it is sent (see demand).
	flushing bool
	// inFlight: capped while brokers are joining: the step up that answers the saturation is
	// on its way, and the demand is what the brokers applied keep: what they carry at the
	// scale-down utilization (see demand).
	inFlight bool
	// measured: capped again by brokers the autoscaler added, after the catch-up time that
	// follows their settling and within the scale-down delay: the step that answered the
	// saturation has been made, and the ingest is taken as the demand, sized at the target
	// (see demand).
	measured bool
	// why says what capped the intake, for messages.
	why string
	// rising: the intake rose from a steady one in the newest interval (rise.go), and rate is
	// that interval's ingest, above the range's.
	rising bool
	// early: the intake was seen saturated in the newest interval after a rise from a steady
	// intake, before the rate over the whole range shows it (rise.go); ingest is that
	// interval's.
	early bool
}

// intakeSaturatedShare is the share of a broker's usable link above which the busiest broker is
// taken to be saturated: what it carries is then its limit, not the demand. Higher than
// saturatedShare for indexing because a link's usable rate (efficiency times line rate) is
// itself an estimate a loaded link may exceed by a little. An estimate; not overridable.
const intakeSaturatedShare = 0.97

// demand reads the demand: the ingest and the lag, and whether the brokers' links cap the
// ingest (placement as in brokerReading).
func (r *recommender) demand(cur State) demand {
	var d demand
	ingest, ok := r.value(IngestRate)
	if !ok || ingest < 0 || math.IsNaN(ingest) {
		return d
	}
	d.known, d.ingest, d.rate = true, ingest, ingest
	if p, ok := r.value(ProcessingRate); ok && p > 0 {
		d.processed = p
	}
	if lag, ok := r.value(ConsumerLag); ok && lag > 0 {
		d.lag = lag
		d.drain = lag / r.catchUpSeconds()
	}
	if trend, ok := r.value(ConsumerLagTrend); ok && trend < 0 {
		d.draining = true
	}
	tx, rx, _, ok := r.linkTraffic()
	link := float64(r.pol.LinkUsableBytesPerSecond)
	if !ok || link <= 0 || cur.Brokers <= 0 {
		return d
	}
	// Brokers still joining carry nothing: the others carry it all.
	carrying := max(cur.Brokers-max(r.pol.Safety.Joining, 0), 1)
	busyRx, busyTx := cur.Placement.Busiest(rx, tx, carrying)
	limit := intakeSaturatedShare * link
	if busyRx < limit && busyTx < limit {
		// Not saturated over the whole range: saturated since a rise from a steady intake?
		// (rise.go). The newest interval's figures then stand for the reading's.
		if newIngest, newRx, ok := r.rise(ingest, rx); ok {
			f := newRx / rx
			if newIngest > ingest {
				// Risen, saturated or not: the newest interval's ingest is the demand now,
				// which the rate over the range shows only a range after the rise. Sized on
				// the range's rate, the stages after Kafka take a step to part of the rise and
				// a second to the rest (flash-spike with a broker kept in advance: executors
				// 3, 5, 6 and two resubmissions of the job); sized on the newest interval, one
				// step, as DS2 takes. It is taken at the low end of what the steady readings
				// pin it down to (within steadyShare): a rise to just what whole units carry
				// read a fraction over it (`step-up` on three brokers: 16,084 records/s for
				// 16,000) and asked for an executor and a data node it does not need.
				d.rising, d.rate = true, math.Max(ingest, newIngest*(1-steadyShare))
			}
			if b, _ := cur.Placement.Busiest(newRx, tx*f, carrying); b >= limit {
				if b > link {
					// A saturated link carries no more than itself: beyond it is the
					// extrapolation's error (it multiplies a difference by R/i), which
					// doubled would ask for a broker more.
					newIngest, f, b = newIngest*link/b, f*link/b, link
				}
				d.early, d.ingest, d.rate, r.traffic = true, newIngest, newIngest, f
				tx, rx, busyRx = tx*f, rx*f, b
			}
		}
	}
	switch {
	case busyRx >= limit:
		d.why = fmt.Sprintf("the busiest broker receives %s of a %s usable link", rate(busyRx), rate(link))
	case busyTx >= limit && !d.draining:
		// Sending is saturated and no lag is draining: followers fetch behind, which holds
		// back producers that wait for every in-sync replica. While a lag drains, the job's
		// reads fill the link, and the producers are not what it caps.
		d.why = fmt.Sprintf("the busiest broker sends %s of a %s usable link", rate(busyTx), rate(link))
	default:
		return d
	}
	d.capped = true
	if r.pol.Safety.Joining > 0 || r.scaleUpPending() {
		// Brokers are joining: the step up is on its way and takes load as their partitions
		// move, which lets the ingest rise a little at every reading. Multiplying each of those
		// readings again would add a broker, and executors, at every one (TCP likewise grows
		// its window once per round trip, not once per acknowledgement); the demand is what the
		// step asked for: what all the brokers applied carry at the scale-down utilization (the
		// target less the hysteresis margin). That is the most the stages after Kafka can be
		// sized for on an estimate without a surplus to give back: a demand at least the
		// saturated ingest keeps the brokers applied (the probe is sized so: see
		// probeBrokers), and so keeps every count sized on what they carry at that
		// utilization. Sized on what they carry at the target instead, a step 1.08 times the
		// saturated ingest (own/step-x1.5) took 6 executors and data nodes where the measured
		// demand keeps 5, and gave one back half an hour later. A demand beyond it shows once
		// the brokers carry it, and asks for a second step then (flushing, measured).
		//
		// Beyond it already: as their partitions move, the brokers let the ingest rise past
		// what they keep, and the demand is taken as that ingest; the stages after Kafka still
		// take one step in the phase (steppedAlready), not a unit at a time behind the rising
		// ingest, each a resubmission of the job (own/step-x3.5: executors 5, 6, 7, 8 in a
		// quarter of an hour). A second step in the phase, to all the brokers applied carry
		// with their links full once the ingest passes what they keep, was measured on
		// 2026-11-28 and not kept: the producers' backlog flushing through the joining brokers
		// passes it too, so it fired on a spike already over (flash-spike: executors 5 -> 7,
		// 9.15 -> 9.97 % below demand) and asked the brokers for one more (step-up: 4 -> 5,
		// capacity reached at +26.0 minutes instead of +9.5, and an executor given back).
		d.inFlight = true
		t := r.pol.TargetUtilizationPercent
		d.rate = math.Max(d.ingest, r.carried(cur, d, tx, rx, t-margin(t)))
		return d
	}
	if r.flushing() {
		// The ingest is the producers' backlog flushing: the job must take it (it is the
		// demand on the job), but more brokers for it would arrive after it is sent (a broker
		// takes traffic only once its partitions are moved), so no broker is probed for.
		d.flushing = true
		return d
	}
	if r.probedRecently() {
		// The brokers a step up added carry all they can, and the producers have had the
		// catch-up time to send what waited: the intake is full of demand, or of a backlog
		// that takes longer than that to send, and the two cannot be told apart. Doubling
		// again took the whole backlog for demand (own/step-x3.5: 4 -> 9 brokers, given back
		// half an hour later); the ingest is a measure of a demand at least as high, sized at
		// the target, which leaves the link the target's margin: one step more, as a measured
		// load above the target asks for.
		d.measured = true
		return d
	}
	d.rate = d.ingest * r.saturatedFactor()
	return d
}

// probedRecently says whether brokers the autoscaler added began to carry traffic less than the
// scale-down delay ago (spec.autoscaling.scaleDownDelayAfterScaleUpSeconds): within the
// catch-up time of it, flushing holds first.
func (r *recommender) probedRecently() bool {
	settled := r.pol.Safety.Settled
	up := window(r.st, v1alpha1.ResourceBrokers).LastScaleUp
	return !settled.IsZero() && up != nil && !settled.Before(up.Time) &&
		r.now.Sub(settled) < r.pol.ScaleDownDelay
}

// probeBrokers bounds the brokers a saturated intake asks for (the probe, brokerReading) by the
// most a demand at least the saturated ingest keeps, so that the probe leaves no broker to give
// back whatever the demand behind the saturated links turns out to be. The saturated ingest
// shows only that the demand is at least it; doubling the brokers on it
// (saturatedScaleUpPercent 200) made 3 brokers 6 on a step 1.07 times what they carried
// (own/step-x2-3brokers: 20,000 records/s, which keeps 5 at the scale-down utilization), and
// one went again 45 minutes later, a rebalance each way. The bound:
//
//   - the brokers whose busiest link carries the saturated traffic at the scale-down
//     utilization (the target less the hysteresis margin): any demand at least the saturated
//     ingest keeps them, as the scale-down sizing (brokerReading's down) reads it;
//   - and at least two brokers more than carry it now. Cruise Control moves a joining
//     broker's share off the old brokers at the rebalance throttle per broker receiving
//     (docs/simulate.md, delays; the simulator's moves.go), so with one broker joining two
//     saturated ones shed their load at half the speed of two joining: on two saturated
//     brokers the first bound is three, and a step of 1.2 or 1.28 times their ingest
//     (own/step-x2, step-up) took more than ten minutes to carry. From three saturated
//     brokers on, the first bound adds two or more anyway.
//
// The bound can only lower the probe (saturatedScaleUpPercent stays its upper bound); a demand
// above what the probe carries shows once the brokers settle and asks for a second step then
// (demand.measured), as DS2 measures true rates after each step (Kalavri et al., OSDI 2018).
func (r *recommender) probeBrokers(cur State, rx, tx float64) int32 {
	t := r.pol.TargetUtilizationPercent
	kept := cur.Placement.BrokersFor(rx, tx, float64(r.pol.LinkUsableBytesPerSecond)*float64(t-margin(t))/100)
	return max(kept, cur.Brokers+2)
}

// steppedAlready says whether a stage after Kafka (executors, data nodes) was scaled up already
// in this phase of a broker step: while the brokers applied join (since their scale-up), or
// while the producers flush what waited for them (since they settled). Kafka's intake is capped
// in both, rising as partitions move or holding at the new brokers' limit with the backlog in
// it, and the lag grows while the job is resubmitted for the step just made: sizing again on
// each reading added a unit at every cool-down (own/step-x3.5: executors 5, 6, 7, 8 within a
// quarter of an hour, a resubmission each). DS2 takes one step per decision, from rates the
// step does not distort; here one per phase, and the measured demand decides after the flush.
func (r *recommender) steppedAlready(resource string, d demand) bool {
	up := window(r.st, resource).LastScaleUp
	if up == nil {
		return false
	}
	switch {
	case d.inFlight:
		b := window(r.st, v1alpha1.ResourceBrokers).LastScaleUp
		return b != nil && !up.Time.Before(b.Time)
	case d.flushing:
		return !up.Time.Before(r.pol.Safety.Settled)
	}
	return false
}

// carried is the ingest the brokers applied carry with the busiest one's link at percent of
// the usable link, the traffic growing in proportion to the ingest: the inverse of
// brokerReading's sizing (the busiest broker's rates are linear in the totals). At the
// scale-down utilization (the target less the hysteresis margin) it is what they keep: a
// measured demand at least this scales none of them down.
func (r *recommender) carried(cur State, d demand, tx, rx float64, percent int32) float64 {
	limit := float64(r.pol.LinkUsableBytesPerSecond) * float64(percent) / 100
	if d.ingest <= 0 || rx <= 0 || limit <= 0 {
		return 0
	}
	pl := cur.Placement
	_, steadyTx := d.steadyTraffic(tx, rx, pl)
	busyRx, busyTx := pl.Busiest(rx, steadyTx, cur.Brokers)
	k := limit / math.Max(busyRx, busyTx)
	return d.ingest * k
}

// steadyTraffic is the bytes a record takes on the brokers' wire (every copy of it received) and
// what the brokers send with the job's reads beyond the ingest (a lag draining) left out: the
// traffic that grows with the ingest. d.ingest and rx are > 0.
func (d demand) steadyTraffic(tx, rx float64, pl plan.PartitionPlacement) (perRecord, steadyTx float64) {
	perRecord = rx / (float64(max(pl.ReplicationFactor, 1)) * d.ingest)
	return perRecord, math.Max(tx-math.Max(d.processed-d.ingest, 0)*perRecord, 0)
}

// pendingScaleUpBound bounds how long a broker scale-up Strimzi reports nothing of is taken to be
// on its way (scaleUpPending). An estimate; not overridable.
const pendingScaleUpBound = 15 * time.Minute

// scaleUpPending says whether the brokers' last scale-up has not begun to carry traffic although
// Strimzi does not report the brokers joining yet: Strimzi writes the Kafka's status at the end
// of a reconciliation, which waits for the new pods to be ready (KafkaReconciler.reconcile:
// podSet, then podsReady), so for the minutes the brokers start no auto-rebalance shows them.
// Their links then read as carrying a share of the traffic they do not, which hides a
// saturated intake; so nothing scales down, and nothing is probed for, until Strimzi reports
// the rebalance. Only where Strimzi reports auto-rebalances (BrokerSafety.Rebalances), no
// auto-rebalance has ended since the scale-up (BrokerSafety.Settled is before it), and it is
// recent: a scale-up whose rebalance Strimzi never reports is not waited on for longer than
// pendingScaleUpBound.
func (r *recommender) scaleUpPending() bool {
	up := window(r.st, v1alpha1.ResourceBrokers).LastScaleUp
	return r.pol.Safety.Rebalances && up != nil && r.pol.Safety.Settled.Before(up.Time) &&
		r.now.Sub(up.Time) < pendingScaleUpBound
}

// flushing says whether brokers the autoscaler added began to carry traffic less than the
// catch-up time ago: Strimzi's auto-rebalance of the last scale-up ended (BrokerSafety.Settled)
// after the scale-up was decided (the brokers' window's lastScaleUp).
func (r *recommender) flushing() bool {
	settled := r.pol.Safety.Settled
	up := window(r.st, v1alpha1.ResourceBrokers).LastScaleUp
	return !settled.IsZero() && up != nil && !settled.Before(up.Time) &&
		r.now.Sub(settled).Seconds() < r.catchUpSeconds()
}

// linkTraffic returns the brokers' total send and receive rates, from the pods' network
// counters or, when those are missing, Kafka's byte counters, and which it used.
func (r *recommender) linkTraffic() (tx, rx float64, source string, ok bool) {
	tx, okTx := r.value(BrokerTransmitBytes)
	rx, okRx := r.value(BrokerReceiveBytes)
	source = "network"
	if !okTx || !okRx {
		tx, okTx = r.value(KafkaBytesOut)
		rx, okRx = r.value(KafkaBytesIn)
		source = "Kafka"
	}
	if r.traffic > 0 {
		// The newest interval's traffic, after a rise (demand.early).
		tx, rx = tx*r.traffic, rx*r.traffic
	}
	return tx, rx, source, okTx && okRx
}

// saturatedFactor is spec.autoscaling.saturatedScaleUpPercent as a factor.
func (r *recommender) saturatedFactor() float64 {
	if r.pol.SaturatedFactor <= 1 {
		return float64(DefaultSaturatedScaleUpPercent) / 100
	}
	return r.pol.SaturatedFactor
}

// catchUpSeconds is the time a lag is given to drain: spec.autoscaling.catchUpSeconds.
func (r *recommender) catchUpSeconds() float64 {
	if r.pol.CatchUp <= 0 {
		return DefaultCatchUp.Seconds()
	}
	return r.pol.CatchUp.Seconds()
}

// units is how many units of capacity each carry the demand: at the target utilization, and the
// demand plus the lag's drain at full capacity (catchUp). While Kafka's intake is capped the
// demand plus the drain is carried at full capacity only:
//   - while the producers flush what waited for Kafka, all of the ingest is a catch-up: sized
//     at the target, it would ask for units that stand idle once the flush is sent;
//   - otherwise the demand is an estimate bounding it from above (the saturated ingest times
//     saturatedScaleUpPercent, or what the brokers applied keep while they join), not a
//     measure: the target's margin on top of it overshot every step between once
//     and twice the saturated ingest (a step of 1.28 times it, on `step-up`, asked for 8
//     executors where the measured demand kept 6, and gave 2 back half an hour later). Once
//     the intake is no longer saturated the measured demand is sized at the target, and asks
//     for a second step if the estimate was short of it.
func (d demand) units(each float64, target int32) int32 {
	if d.capped && !d.measured {
		return countFor(d.rate+d.drain, each)
	}
	return catchUp(d.rate, d.rate+d.drain, each, target)
}

// describe says in a few words what the demand is, for messages.
func (d demand) describe() string {
	s := fmt.Sprintf("ingest %.0f msgs/s", d.ingest)
	switch {
	case d.flushing:
		s += fmt.Sprintf(" capped by Kafka (%s) while the producers send what waited for the brokers just added", d.why)
	case d.measured:
		s += fmt.Sprintf(" capped by Kafka (%s) after the brokers last added settled, so the demand is taken as the ingest", d.why)
	case d.inFlight:
		s += fmt.Sprintf(" capped by Kafka (%s) while brokers join, so the demand is taken as the %.0f they keep (they carry it at the scale-down utilization)", d.why, d.rate)
	case d.capped && d.early:
		s += fmt.Sprintf(" in the newest interval, after a rise from a steady intake, capped by Kafka (%s), so the demand is taken as %.0f", d.why, d.rate)
	case d.capped:
		s += fmt.Sprintf(" capped by Kafka (%s), so the demand is taken as %.0f", d.why, d.rate)
	case d.rising:
		s += fmt.Sprintf(", %.0f in the newest interval after a rise from a steady intake", d.rate)
	}
	if d.lag > 0 {
		s += fmt.Sprintf(", lag %.0f records to drain at %.0f/s", d.lag, d.drain)
	}
	return s
}
