package simulate

import (
	"bytes"
	"fmt"
	"sort"
	"testing"
)

// BenchmarkSampleTraces replays each sample trace (make simulate-bench) and prints its table
// with the autoscaler's targets (docs/simulate.md): these are figures to read, not assertions.
func BenchmarkSampleTraces(b *testing.B) {
	p, tiers := samplePipeline(b)
	traces := SampleTraces()
	names := make([]string, 0, len(traces))
	for n := range traces {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			var res *Result
			for i := 0; i < b.N; i++ {
				var err error
				if res, err = Run(p, tiers, traces[name], DefaultDelays()); err != nil {
					b.Fatal(err)
				}
			}
			var out bytes.Buffer
			if err := WriteTable(&out, res); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(100*res.Ratio(), "%static-peak")
			b.ReportMetric(100*res.SecondsBelowDemand/res.DurationSeconds, "%below-demand")
			b.Logf("%s\n%s\ntargets: %s", name, out.String(), targets(name, res))
		})
	}
}

// targets says how a sample trace's result compares with what the autoscaler aims at.
func targets(name string, r *Result) string {
	reversals := r.Resources.Brokers.Reversals + r.Resources.Executors.Reversals + r.Resources.DataNodes.Reversals
	actions := r.Resources.Brokers.ScaleActions + r.Resources.Executors.ScaleActions + r.Resources.DataNodes.ScaleActions
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	s := fmt.Sprintf("zero reversals: %s (%d)", verdict(reversals == 0), reversals)
	switch name {
	case "diurnal":
		below := r.SecondsBelowDemand / r.DurationSeconds
		s += fmt.Sprintf("; replica-seconds <= 70%% of static peak: %s (%.1f%%); below demand <= 1%%: %s (%.2f%%)",
			verdict(r.Ratio() <= 0.70), 100*r.Ratio(), verdict(below <= 0.01), 100*below)
	case "noisy-flat":
		s += fmt.Sprintf("; zero scale actions: %s (%d)", verdict(actions == 0), actions)
	case "step-up", "flash-spike":
		s += fmt.Sprintf("; one step per resource: brokers %d, executors %d, data nodes %d up-moves",
			ups(r, "Brokers"), ups(r, "Executors"), ups(r, "ElasticsearchDataNodes"))
	}
	return s
}

func ups(r *Result, resource string) int {
	n := 0
	for _, d := range r.Decisions {
		if d.Resource == resource && d.Action == "ScaleUp" {
			n++
		}
	}
	return n
}
