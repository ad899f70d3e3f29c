package simulate

import (
	"bytes"
	"testing"
)

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
		})
	}
}
