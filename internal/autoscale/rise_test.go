package autoscale

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// intake replays a load through the default queries' rates over $range (four intervals): levels
// holds what Kafka took in each interval, oldest first, and reading i is the mean of the four
// intervals up to i. Kafka takes at most 12,500 records/s on two brokers (6,250 each at the
// usable link), so a level above it is recorded as 12,500.
func intake(levels func(i int) float64) func(i int) values {
	return func(i int) values {
		var sum float64
		for k := i - 3; k <= i; k++ {
			sum += min(levels(max(k, 0)), 12500)
		}
		in := sum / 4
		return pipelineReading(in, min(in, 8000), 0, 0)
	}
}

// step is a load of base until interval at, then of top.
func step(base, top float64, at int) func(int) float64 {
	return func(i int) float64 {
		if i >= at {
			return top
		}
		return base
	}
}

// A step from a steady intake to more than two brokers take is seen at the first reading after
// it, when the rate over the range has moved a quarter of the way: the newest interval's rate is
// the steady one plus four times the move. Without it, the rate over the range shows the
// saturation three readings later. Loads that are not steady, rises that do not reach the link,
// overridden queries and a gap in the readings leave the step to the rate over the whole range.
func TestRiseFromASteadyIntake(t *testing.T) {
	cases := []struct {
		name   string
		pol    func(*Policy)
		levels func(int) float64
		n      int
		want   string // the brokers' first change, "" for none
	}{
		{name: "step to saturation: seen at the first reading after it",
			levels: step(6000, 16000, 8), n: 9, want: "240s Brokers ScaleUp 2->4 IntakeSaturated"},
		{name: "the same step over the whole range: three readings later",
			pol:    func(p *Policy) { p.Range = 0 },
			levels: step(6000, 16000, 8), n: 12, want: "330s Brokers ScaleUp 2->4 IntakeSaturated"},
		{name: "a step in the middle of an interval: seen at the second reading",
			levels: func(i int) float64 {
				switch {
				case i < 8:
					return 6000
				case i == 8:
					return 9250 // half the interval at 6,000, half at 12,500
				}
				return 16000
			}, n: 10, want: "270s Brokers ScaleUp 2->4 IntakeSaturated"},
		{name: "a rise that stays under the link: no probe",
			levels: step(6000, 9000, 8), n: 11, want: ""},
		{name: "a load moving by up to 10 % an interval around 72 % of the link: no probe",
			levels: func(i int) float64 {
				// A fixed pseudo-random walk within ±10 % (a linear congruential sequence).
				x := uint32(i)*1103515245 + 12345
				return 9000 * (0.9 + 0.2*float64(x>>16%1000)/1000)
			}, n: 120, want: ""},
		{name: "a steady intake too short to fill a range is not steady",
			levels: step(6000, 16000, 3), n: 4, want: ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pol := pipelinePolicy()
			pol.Range = 4 * pol.Interval
			if c.pol != nil {
				c.pol(&pol)
			}
			r := pipelineRun(pol)
			r.cur.Executors = 3
			r.series(c.n, intake(c.levels))
			got := ""
			for _, l := range r.log {
				if strings.Contains(l, " Brokers ") {
					got = l
					break
				}
			}
			if got != c.want {
				t.Errorf("brokers' first change %q, want %q (all: %q)", got, c.want, r.changes())
			}
		})
	}
}

// A gap in the readings (the ingest unread for a reading) forgets the steady intake before it:
// nothing is known of what the intake did meanwhile.
func TestRiseForgetsAcrossAGap(t *testing.T) {
	pol := pipelinePolicy()
	pol.Range = 4 * pol.Interval
	r := pipelineRun(pol)
	f := intake(step(6000, 16000, 8))
	for i := 0; i < 9; i++ {
		v := f(i)
		if i == 7 {
			delete(v, IngestRate)
		}
		r.read(i, v)
	}
	if got := r.changes(); strings.Contains(got, "Brokers") {
		t.Errorf("changes %q, want no broker change right after a gap", got)
	}
}

// The readings kept are bounded: those of two ranges and an interval, never more than the API's
// MaxItems, however long the run.
func TestReadingsAreBounded(t *testing.T) {
	pol := pipelinePolicy()
	pol.Range = 4 * pol.Interval
	r := pipelineRun(pol)
	r.series(40, intake(step(6000, 6000, 0)))
	got := r.last.Status.Readings
	if len(got) == 0 || len(got) > 10 {
		t.Fatalf("%d readings kept, want 1 to 10 (two ranges and an interval, both ends)", len(got))
	}
	if oldest := r.last.Status.Readings[0].Time.Time; t0.Add(39*pol.Interval).Sub(oldest) > 2*pol.Range+pol.Interval {
		t.Errorf("the oldest reading kept is from %s, older than two ranges and an interval", oldest)
	}
	pol.Range = time.Minute
	pol.Interval = time.Second
	r = pipelineRun(pol)
	r.series(200, intake(step(6000, 6000, 0)))
	if n := len(r.last.Status.Readings); n > maxReadings {
		t.Errorf("%d readings kept, want at most %d", n, maxReadings)
	}
}

// The range a rise is read against is the default queries' $range, four times the longer of
// the reading and scrape intervals; an overridden intake query has a range of its own, unknown.
func TestIntakeRange(t *testing.T) {
	cases := []struct {
		name string
		spec *v1alpha1.AutoscalingSpec
		want time.Duration
	}{
		{"defaults", nil, 2 * time.Minute},
		{"reading every 15 s, scraped every 30 s", &v1alpha1.AutoscalingSpec{IntervalSeconds: 15}, 2 * time.Minute},
		{"reading every 60 s", &v1alpha1.AutoscalingSpec{IntervalSeconds: 60}, 4 * time.Minute},
		{"another query overridden", &v1alpha1.AutoscalingSpec{Queries: &v1alpha1.AutoscalingQueries{ConsumerLag: "x"}}, 2 * time.Minute},
		{"the ingest overridden", &v1alpha1.AutoscalingSpec{Queries: &v1alpha1.AutoscalingQueries{IngestRate: "x"}}, 0},
		{"the received bytes overridden", &v1alpha1.AutoscalingSpec{Queries: &v1alpha1.AutoscalingQueries{BrokerReceiveBytes: "x"}}, 0},
		{"Kafka's bytes in overridden", &v1alpha1.AutoscalingSpec{Queries: &v1alpha1.AutoscalingQueries{KafkaBytesIn: "x"}}, 0},
	}
	for _, c := range cases {
		if got := intakeRange(c.spec); got != c.want {
			t.Errorf("%s: range %s, want %s", c.name, got, c.want)
		}
	}
}

// A rise from a steady intake that Kafka carries is sized in one step on the newest interval,
// not on the rate over the range, which shows three quarters of it when the scale-up window is
// full. 4,000 → 15,000 records/s on four brokers (60 % of their links): the executors, at 80 %
// of 4,000 each, need 5 for 15,000 and 4 for the 12,250 the range shows; sized on the range
// they took 4, and a fifth, with a second resubmission of the job, once the range caught up.
func TestRiseSizesTheStagesAfterKafkaInOneStep(t *testing.T) {
	cases := []struct {
		name  string
		pol   func(*Policy)
		first string // the executors' first change
		all   int    // executor changes over the run
	}{
		{name: "the newest interval: 2 -> 5 at once", first: "300s Executors ScaleUp 2->5 IngestAboveCapacity", all: 1},
		{name: "an overridden intake query (no range known): the range's rate, two steps",
			pol: func(p *Policy) { p.Range = 0 }, first: "300s Executors ScaleUp 2->4 IngestAboveCapacity", all: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pol := pipelinePolicy()
			pol.Range = 4 * pol.Interval
			pol.Brokers = Bounds{Floor: 4, Max: 9}
			if c.pol != nil {
				c.pol(&pol)
			}
			r := pipelineRun(pol)
			r.cur.Brokers = 4
			r.series(30, behindExecutors(r, step(4000, 15000, 8)))
			var got []string
			for _, l := range r.log {
				if strings.Contains(l, " Executors ") {
					got = append(got, l)
				}
			}
			if len(got) == 0 || got[0] != c.first || len(got) != c.all {
				t.Errorf("executor changes %q, want %d, the first %q (all: %q)", got, c.all, c.first, r.changes())
			}
			if strings.Contains(r.changes(), "Brokers") {
				t.Errorf("changes %q: the brokers carry 15,000 records/s at 60 %% of their links", r.changes())
			}
		})
	}
}

// Over rises of many sizes that four brokers carry, the executors take one step, and never to
// more than the risen load asks for once the range has caught up with it: the newest interval
// is read at the low end of what the steady readings pin down (2 % under it), so a second step
// follows only a load within those 2 % of what a whole number of executors carries.
func TestRiseNeverOvershoots(t *testing.T) {
	for base := 3000.0; base <= 6000; base += 1500 {
		for top := base * 1.5; top <= 17000; top += 700 {
			pol := pipelinePolicy()
			pol.Range = 4 * pol.Interval
			pol.Brokers = Bounds{Floor: 4, Max: 9}
			r := pipelineRun(pol)
			r.cur.Brokers = 4
			r.series(40, behindExecutors(r, step(base, top, 8)))
			// At 80 % of 4,000 each; the lag they drain asks for none more at full rate here.
			most, low := max(countFor(top, 3200), pol.Executors.Floor), max(countFor(top*(1-steadyShare), 3200), pol.Executors.Floor)
			var ups []int32
			for _, c := range r.decisions {
				if c.Resource != v1alpha1.ResourceExecutors {
					continue
				}
				if c.Action != v1alpha1.ActionScaleUp || c.To > most {
					t.Errorf("%.0f -> %.0f records/s: %s %d -> %d, want scale-ups to at most %d", base, top, c.Action, c.From, c.To, most)
				}
				ups = append(ups, c.To)
			}
			want := 1
			if low < most {
				want = 2
			}
			if most > pol.Executors.Floor && (len(ups) != want || ups[0] < low) {
				t.Errorf("%.0f -> %.0f records/s: executor scale-ups to %v, want %d, the first to at least %d (%s)", base, top, ups, want, low, r.changes())
			}
		}
	}
}

// behindExecutors replays levels through the default queries' rates over $range (four intervals
// of 30 s), Kafka carrying all of it, and the executors r runs processing at most 4,000
// records/s each: the rest waits in the lag, which they drain as they can.
func behindExecutors(r *run, levels func(int) float64) func(int) values {
	var lag float64
	return func(i int) values {
		var sum float64
		for k := i - 3; k <= i; k++ {
			sum += levels(max(k, 0))
		}
		in := sum / 4
		processed := min(in+lag/30, 4000*float64(r.cur.Executors))
		lag = max(lag+(in-processed)*30, 0)
		return pipelineReading(in, processed, lag, in-processed)
	}
}
