package desired

import (
	"reflect"
	"testing"

	"github.com/strata-dev/strata/internal/testutil/gen"
)

// TestGoldenPipelinesAreTheFixtures holds gen.GoldenPipelines, which the upgrade test creates on
// a cluster, to the pipelines the golden cases are built from: a fixture changed here without
// gen would leave the upgrade test upgrading pipelines no golden file describes.
func TestGoldenPipelinesAreTheFixtures(t *testing.T) {
	fs := fixtures()
	seen := map[string]bool{}
	for _, g := range gen.GoldenPipelines() {
		f, ok := fs[g.Case]
		if !ok {
			t.Errorf("gen.GoldenPipelines has %s, which is no golden case", g.Case)
			continue
		}
		seen[g.Case] = true
		if !reflect.DeepEqual(f.pipeline, g.Pipeline) {
			t.Errorf("%s: gen.GoldenPipelines' pipeline differs from the fixture's", g.Case)
		}
	}
	for name, f := range fs {
		// A fixture that is a running cluster's state (a scale-down's step) has another case's
		// pipeline.
		if !seen[name] && (f.step() == 0 || !seen["last-broker-leaving"]) {
			t.Errorf("golden case %s has no pipeline in gen.GoldenPipelines", name)
		}
	}
	var ssd bool
	for _, tier := range fixtureTiers() {
		if tier.Name == "ssd" {
			ssd = reflect.DeepEqual(tier, gen.GoldenSSDTier())
		}
	}
	if !ssd {
		t.Error("the fixtures' ssd tier differs from gen.GoldenSSDTier")
	}
}
