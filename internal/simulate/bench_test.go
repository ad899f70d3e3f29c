package simulate

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/autoscale"
)

// catchUpSeconds is the pipeline's spec.autoscaling.catchUpSeconds, or its default.
func catchUpSeconds(p *v1alpha1.AnalyticsPipeline) int32 {
	if a := p.Spec.Autoscaling; a != nil && a.CatchUpSeconds > 0 {
		return a.CatchUpSeconds
	}
	return int32(autoscale.DefaultCatchUp.Seconds())
}

// BenchmarkTargets replays the sample traces and traces of our own (targets_test.go) through
// the autoscaler (make simulate-bench) and prints each table with its figures against the
// targets (docs/simulate.md): these are figures to read, not assertions.
func BenchmarkTargets(b *testing.B) {
	for _, sc := range append(sampleScenarios(), ownScenarios()...) {
		b.Run(sc.name, func(b *testing.B) {
			p, tiers := samplePipeline(b)
			if sc.pipeline != nil {
				sc.pipeline(p)
			}
			var res *Result
			for i := 0; i < b.N; i++ {
				var err error
				if res, err = Run(p, tiers, sc.trace, DefaultDelays()); err != nil {
					b.Fatal(err)
				}
			}
			var out bytes.Buffer
			if err := WriteTable(&out, res); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(100*res.Ratio(), "%static-peak")
			b.ReportMetric(100*res.SecondsBelowDemand/res.DurationSeconds, "%below-demand")
			b.Logf("%s\n%s", sc.name, out.String())
			for _, v := range judge(sc, res) {
				b.Logf("target %s: %s", sc.name, v)
			}
			// Beside the targets' figure, what Kafka's buffering carried: the time its intake
			// was below the demand (records waited at the producers) and the longest a record
			// waited, against the catch-up time the lag is sized to drain in.
			b.Logf("kafka %s: intake below demand %.2f%% of the time; largest lag %.0f s (catch-up %d s)", sc.name,
				100*res.SecondsIntakeBelowDemand/res.DurationSeconds, res.MaxLagSeconds, catchUpSeconds(p))
			if sc.kind == kindStep || sc.kind == kindSpike {
				// The oracle (oracle.go): what knowing the load at once, and only scaling up,
				// spends below demand on the same trace with the same delays.
				ref, err := Oracle(p, tiers, sc.trace, DefaultDelays())
				if err != nil {
					b.Fatal(err)
				}
				line := fmt.Sprintf("oracle %s: below demand %.2f%% of the time", sc.name, 100*ref.SecondsBelowDemand/ref.DurationSeconds)
				if sc.kind == kindStep {
					line += "; capacity >= demand (for 5 min) " + minutes(reachedAfter(ref, sc.stepAt)) + " after the step"
				}
				b.Log(line)
			}
		})
	}
}
