package simulate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// The autoscaler's targets (docs/simulate.md, "Targets") on the sample traces and on traces of
// our own, with pipelines of their own, that the autoscaler was not tuned on. make
// simulate-bench prints each figure against its target; nothing here fails a test: these are
// figures to read and report.

// kind is what a trace exercises, which decides its targets.
type kind int

const (
	kindStep kind = iota
	kindDiurnal
	kindSpike
	kindFlat
	// kindPeriodic: a load that falls and rises again in a rhythm; its target is no reversal
	// (every kind's), which a first cycle cannot meet (autoscale's reversal.go learns from it).
	kindPeriodic
)

// scenario is a trace, the pipeline it runs through and its kind.
type scenario struct {
	name  string
	kind  kind
	trace Trace
	// stepAt is when a step trace's load rises (seconds).
	stepAt float64
	// pipeline adjusts the sample pipeline.
	pipeline func(*v1alpha1.AnalyticsPipeline)
}

// ownScenarios are loads not tuned to the sample traces: a ×3 step, a diurnal day at 4:1 with
// a plateau instead of a sine, a ×2 spike of a quarter of an hour, a flat load with ±15 %
// noise, each on a pipeline declaring its lowest load.
func ownScenarios() []scenario {
	declare := func(mps int64, brokers, executors, dataNodes v1alpha1.Range) func(*v1alpha1.AnalyticsPipeline) {
		return func(p *v1alpha1.AnalyticsPipeline) {
			p.Spec.Workload.MessagesPerSecond = mps
			p.Spec.Kafka.Brokers = brokers
			p.Spec.Spark.Executors.Min, p.Spec.Spark.Executors.Max = executors.Min, executors.Max
			p.Spec.Elasticsearch.DataNodes = dataNodes
		}
	}
	return []scenario{
		{name: "own/step-x3", kind: kindStep, stepAt: 1800,
			trace:    Trace{Points: []Point{{0, 6000, 0}, {1800, 18000, 0}, {10800, 18000, 0}}},
			pipeline: declare(6000, v1alpha1.Range{Min: 3, Max: 9}, v1alpha1.Range{Min: 2, Max: 12}, v1alpha1.Range{Min: 2, Max: 8})},
		{name: "own/diurnal-plateau", kind: kindDiurnal, trace: plateauDay(),
			pipeline: declare(4000, v1alpha1.Range{Min: 2, Max: 9}, v1alpha1.Range{Min: 2, Max: 12}, v1alpha1.Range{Min: 2, Max: 8})},
		{name: "own/spike-x2", kind: kindSpike,
			trace:    Trace{Points: []Point{{0, 7000, 0}, {3600, 14000, 0}, {4500, 7000, 0}, {10800, 7000, 0}}},
			pipeline: declare(7000, v1alpha1.Range{Min: 2, Max: 9}, v1alpha1.Range{Min: 2, Max: 12}, v1alpha1.Range{Min: 2, Max: 8})},
		// Added for issue 28's probe: a ×1.5 step and a ×3.5 step that saturate two brokers'
		// links (by 1.08 and 1.69 times what they carry), and a spike of five minutes.
		{name: "own/step-x1.5", kind: kindStep, stepAt: 1800,
			trace:    Trace{Points: []Point{{0, 9000, 0}, {1800, 13500, 0}, {7200, 13500, 0}}},
			pipeline: declare(9000, v1alpha1.Range{Min: 2, Max: 9}, v1alpha1.Range{Min: 2, Max: 12}, v1alpha1.Range{Min: 2, Max: 8})},
		{name: "own/step-x3.5", kind: kindStep, stepAt: 1800,
			trace:    Trace{Points: []Point{{0, 6000, 0}, {1800, 21000, 0}, {7200, 21000, 0}}},
			pipeline: declare(6000, v1alpha1.Range{Min: 2, Max: 9}, v1alpha1.Range{Min: 2, Max: 12}, v1alpha1.Range{Min: 2, Max: 8})},
		{name: "own/spike-5min", kind: kindSpike,
			trace:    Trace{Points: []Point{{0, 9000, 0}, {3600, 15000, 0}, {3900, 9000, 0}, {7200, 9000, 0}}},
			pipeline: declare(9000, v1alpha1.Range{Min: 2, Max: 9}, v1alpha1.Range{Min: 2, Max: 12}, v1alpha1.Range{Min: 2, Max: 8})},
		// Added for the step seen early (autoscale's rise.go), on loads it was not made on: ×2
		// steps at other base loads, one on three brokers, one between two readings (a quarter
		// of a minute after one: the first reading after it sees half an interval of it).
		{name: "own/step-x2", kind: kindStep, stepAt: 2700,
			trace:    Trace{Points: []Point{{0, 7500, 0}, {2700, 15000, 0}, {7200, 15000, 0}}},
			pipeline: declare(7500, v1alpha1.Range{Min: 2, Max: 9}, v1alpha1.Range{Min: 2, Max: 12}, v1alpha1.Range{Min: 2, Max: 8})},
		{name: "own/step-x2-3brokers", kind: kindStep, stepAt: 2700,
			trace:    Trace{Points: []Point{{0, 10000, 0}, {2700, 20000, 0}, {7200, 20000, 0}}},
			pipeline: declare(10000, v1alpha1.Range{Min: 3, Max: 9}, v1alpha1.Range{Min: 2, Max: 12}, v1alpha1.Range{Min: 2, Max: 8})},
		{name: "own/step-x2-offset", kind: kindStep, stepAt: 2715,
			trace:    Trace{Points: []Point{{0, 7500, 0}, {2715, 15000, 0}, {7200, 15000, 0}}},
			pipeline: declare(7500, v1alpha1.Range{Min: 2, Max: 9}, v1alpha1.Range{Min: 2, Max: 12}, v1alpha1.Range{Min: 2, Max: 8})},
		// Added for the hold a reversal teaches (autoscale's reversal.go): loads that fall and
		// rise again in a rhythm, one with its low phase shorter than half an hour, one longer.
		{name: "own/periodic-20-20", kind: kindPeriodic, trace: periodic(6000, 12000, 1200, 1200, 4*3600),
			pipeline: declare(6000, v1alpha1.Range{Min: 2, Max: 9}, v1alpha1.Range{Min: 2, Max: 12}, v1alpha1.Range{Min: 2, Max: 8})},
		{name: "own/periodic-45-15", kind: kindPeriodic, trace: periodic(6000, 12000, 2700, 900, 6*3600),
			pipeline: declare(6000, v1alpha1.Range{Min: 2, Max: 9}, v1alpha1.Range{Min: 2, Max: 12}, v1alpha1.Range{Min: 2, Max: 8})},
		{name: "own/noisy-flat-15", kind: kindFlat, trace: noisy(8000, 0.15, 4*3600, 3),
			pipeline: declare(8000, v1alpha1.Range{Min: 2, Max: 9}, v1alpha1.Range{Min: 2, Max: 12}, v1alpha1.Range{Min: 2, Max: 8})},
	}
}

// sampleScenarios are the sample traces on their pipeline.
func sampleScenarios() []scenario {
	tr := SampleTraces()
	return []scenario{
		{name: "diurnal", kind: kindDiurnal, trace: tr["diurnal"]},
		{name: "flash-spike", kind: kindSpike, trace: tr["flash-spike"]},
		{name: "noisy-flat", kind: kindFlat, trace: tr["noisy-flat"]},
		{name: "step-up", kind: kindStep, trace: tr["step-up"], stepAt: 1800},
	}
}

// plateauDay is 4,000 records/s at night, ramping over three hours from 06:00 to 16,000,
// holding until 17:00 and back to 4,000 by 21:00, one row a minute with ±3 % noise.
func plateauDay() Trace {
	rng := rand.New(rand.NewPCG(11, 5))
	level := func(h float64) float64 {
		switch {
		case h < 6 || h >= 21:
			return 4000
		case h < 9:
			return 4000 + 12000*(h-6)/3
		case h < 17:
			return 16000
		default:
			return 16000 - 12000*(h-17)/4
		}
	}
	var t Trace
	for s := 0; s <= 86400; s += 60 {
		v := level(float64(s)/3600) * (0.97 + 0.06*rng.Float64())
		t.Points = append(t.Points, Point{Seconds: float64(s), MessagesPerSecond: math.Round(v)})
	}
	return t
}

// periodic is low records/s for lowFor seconds, then high for highFor, again and again, low
// first, for seconds in all.
func periodic(low, high float64, lowFor, highFor, seconds int) Trace {
	var t Trace
	for s := 0; s < seconds; s += lowFor + highFor {
		t.Points = append(t.Points, Point{Seconds: float64(s), MessagesPerSecond: low},
			Point{Seconds: float64(s + lowFor), MessagesPerSecond: high})
	}
	t.Points = append(t.Points, Point{Seconds: float64(seconds), MessagesPerSecond: low})
	return t
}

// noisy is a flat load off by up to ±share each minute.
func noisy(mps, share float64, seconds int, seed uint64) Trace {
	rng := rand.New(rand.NewPCG(seed, 9))
	var t Trace
	for s := 0; s <= seconds; s += 60 {
		t.Points = append(t.Points, Point{Seconds: float64(s), MessagesPerSecond: math.Round(mps * (1 - share + 2*share*rng.Float64()))})
	}
	return t
}

// verdict is one figure against its target.
type verdict struct {
	what string
	met  bool
}

func (v verdict) String() string {
	if v.met {
		return v.what + ": met"
	}
	return v.what + ": NOT met"
}

// judge compares a result with the targets of its kind.
func judge(sc scenario, r *Result) []verdict {
	res := []ResourceResult{r.Resources.Brokers, r.Resources.Executors, r.Resources.DataNodes}
	reversals, actions := 0, 0
	for _, x := range res {
		reversals += x.Reversals
		actions += x.ScaleActions
	}
	below := r.SecondsBelowDemand / r.DurationSeconds
	out := []verdict{{fmt.Sprintf("no reversals (%d)", reversals), reversals == 0}}
	switch sc.kind {
	case kindStep:
		reached := reachedAfter(r, sc.stepAt)
		out = append(out, verdict{fmt.Sprintf("capacity >= demand (for 5 min) within 10 min of the step (%s)", minutes(reached)), reached <= 600})
		var ups, downs []string
		okUps, noDown := true, true
		for _, name := range []string{v1alpha1.ResourceBrokers, v1alpha1.ResourceExecutors, v1alpha1.ResourceElasticsearchDataNodes} {
			u, d := count(r, name, v1alpha1.ActionScaleUp), count(r, name, v1alpha1.ActionScaleDown)
			ups, downs = append(ups, fmt.Sprintf("%s %d", name, u)), append(downs, fmt.Sprintf("%s %d", name, d))
			okUps, noDown = okUps && u <= 2, noDown && d == 0
		}
		out = append(out, verdict{"<= 2 scale-ups per resource (" + strings.Join(ups, ", ") + ")", okUps},
			verdict{"no scale-down (" + strings.Join(downs, ", ") + ")", noDown})
	case kindDiurnal:
		out = append(out, verdict{fmt.Sprintf("<= 70%% of static-peak replica-seconds (%.1f%%)", 100*r.Ratio()), r.Ratio() <= 0.70},
			verdict{fmt.Sprintf("below demand <= 1%% of the time (%.2f%%)", 100*below), below <= 0.01})
	case kindSpike:
		out = append(out, verdict{fmt.Sprintf("below demand <= 2%% of the time (%.2f%%)", 100*below), below <= 0.02})
	case kindFlat:
		out = append(out, verdict{fmt.Sprintf("no scale actions (%d)", actions), actions == 0})
	}
	return out
}

// reachedAfter is how long after at the capacity first reached the demand and held it for five
// minutes (the series' resolution: one autoscaler interval); +Inf if never. A later dip (a job
// resubmitted for a scale-down) counts in the time below demand, not here.
func reachedAfter(r *Result, at float64) float64 {
	const hold = 300
	start := math.Inf(1)
	for _, s := range r.Series {
		if s.Time < at {
			continue
		}
		switch {
		case s.Capacity < s.Demand:
			start = math.Inf(1)
		case math.IsInf(start, 1):
			start = s.Time
		}
		if s.Time-start >= hold {
			return start - at
		}
	}
	return math.Inf(1)
}

func minutes(s float64) string {
	if math.IsInf(s, 1) {
		return "never"
	}
	return fmt.Sprintf("%.1f min", s/60)
}

func count(r *Result, resource, action string) int {
	n := 0
	for _, d := range r.Decisions {
		if d.Resource == resource && d.Action == action {
			n++
		}
	}
	return n
}
