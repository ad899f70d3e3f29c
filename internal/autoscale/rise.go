package autoscale

import (
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// A step seen early. The default queries read Kafka's intake as rate() over $range, four
// intervals: after a step of the load the rate over the range takes the whole range to show
// it, and a saturated intake shows as saturated only then (issue 28: the x2.7 step of the
// sample traces was acted on two minutes after it, of the eleven it took to carry it). But the
// rate over a range moves, from one reading to the next, by what the newest interval brought
// less what the interval leaving the range had: r(t) - r(t-i) = (x(newest) - x(oldest)) i/R.
// When the intake was steady for a whole range before the rise, the interval leaving the range
// carried that steady rate, so the newest interval's rate is known at the first reading after
// the rise:
//
//	x(newest) = steady + (R/i) (r(t) - r(t-i))
//
// It is used for two things: to see Kafka's intake saturated at that first reading, when the
// newest interval's received bytes reach the saturated share of the busiest broker's link, and
// to take the newest interval's ingest as the saturated ingest the probe doubles (demand.go);
// and, saturated or not, to size every stage on the newest interval's ingest while the range
// still holds the lower load, so that the step the scale-up window lets through goes to the
// whole rise (demand.rising; issue 28's ×3 step on three brokers: executors 2, 5, 6 with a
// resubmission each, now 2, 6).
// A steady intake is what makes it exact, and what keeps noise from being read as a step: the
// readings of a whole range before the rise must agree within steadyShare, which a load that
// moves by a few percent a minute never does (the noisy flat loads), and a rise that comes after
// a moving load is left to the rate over the whole range, as before.

// steadyShare is how far the readings of a range may differ from the latest of them for the
// intake to count as steady. An estimate; not overridable.
const steadyShare = 0.02

// maxReadings bounds status.autoscaling.readings (the API's MaxItems).
const maxReadings = 16

// recordIntake appends this reading's ingest and received bytes to the status' readings and
// drops those no estimate reaches any more (older than two ranges and an interval). Without
// both signals the readings start afresh: a gap says nothing of what the intake did.
func (r *recommender) recordIntake(ingest, rx float64, ok bool) {
	if !ok || r.pol.Range <= 0 {
		r.st.Readings = nil
		return
	}
	now := r.now.Truncate(time.Second)
	rs := append(r.st.Readings, v1alpha1.AutoscalingReading{Time: metav1.Time{Time: now},
		IngestRate: int64(math.Round(ingest)), ReceiveBytes: int64(math.Round(rx))})
	keep := now.Add(-(2*r.pol.Range + r.pol.Interval))
	cut := 0
	for cut < len(rs) && rs[cut].Time.Time.Before(keep) {
		cut++
	}
	rs = rs[cut:]
	if len(rs) > maxReadings {
		rs = rs[len(rs)-maxReadings:]
	}
	r.st.Readings = rs
}

// rise returns the newest interval's ingest and received bytes when the intake was steady for a
// whole range within the last range and has risen since the previous reading (see above).
func (r *recommender) rise(ingest, rx float64) (newIngest, newRx float64, ok bool) {
	rs, rng := r.st.Readings, r.pol.Range
	if rng <= 0 || len(rs) == 0 {
		return 0, 0, false
	}
	prev := rs[len(rs)-1]
	i := r.now.Sub(prev.Time.Time)
	if i <= 0 || i > r.pol.Interval+r.pol.Interval/2 || rx <= float64(prev.ReceiveBytes) {
		return 0, 0, false
	}
	for b := len(rs) - 1; b >= 0; b-- {
		base := rs[b]
		if r.now.Sub(base.Time.Time) > rng {
			break // the interval leaving the range is no longer the steady one
		}
		if !steady(rs[:b+1], rng, r.pol.Interval) {
			continue
		}
		k := rng.Seconds() / i.Seconds()
		newIngest = float64(base.IngestRate) + k*(ingest-float64(prev.IngestRate))
		newRx = float64(base.ReceiveBytes) + k*(rx-float64(prev.ReceiveBytes))
		return newIngest, newRx, newIngest > 0 && newRx > 0
	}
	return 0, 0, false
}

// steady says whether the readings up to the last of rs cover a whole range before it, at most
// an interval and a half apart, and all agree with it within steadyShare.
func steady(rs []v1alpha1.AutoscalingReading, rng, interval time.Duration) bool {
	last := rs[len(rs)-1]
	within := func(v, ref int64) bool {
		return math.Abs(float64(v-ref)) <= steadyShare*math.Abs(float64(ref))
	}
	t := last.Time.Time
	for j := len(rs) - 1; j >= 0; j-- {
		x := rs[j]
		if t.Sub(x.Time.Time) > interval+interval/2 ||
			!within(x.IngestRate, last.IngestRate) || !within(x.ReceiveBytes, last.ReceiveBytes) {
			return false
		}
		t = x.Time.Time
		if last.Time.Sub(t) >= rng {
			return true
		}
	}
	return false
}
