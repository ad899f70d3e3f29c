package main

import (
	"slices"
	"testing"

	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// TestChildKindsListsEveryChild: `make run` lists every kind of child the operator builds for
// the sample (the driver's ServiceAccount and RoleBinding included), and summarises the
// RoleBinding by the ClusterRole it binds.
func TestChildKindsListsEveryChild(t *testing.T) {
	p := gen.Pipeline(gen.SetProducers(2))
	pl, err := plan.Fresh(p, gen.APITiers())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, o := range desired.All(desired.Inputs{Pipeline: p, Plan: pl}) {
		gvk := o.GroupVersionKind()
		seen[gvk.Kind] = true
		if !slices.Contains(childKinds, gvk) {
			t.Errorf("%s %s is built but not listed", gvk.Kind, o.GetName())
		}
		if gvk.Kind == "RoleBinding" {
			if got := summary(o); got != "ClusterRole/"+desired.SparkDriverClusterRole {
				t.Errorf("RoleBinding summary %q, want ClusterRole/%s", got, desired.SparkDriverClusterRole)
			}
		}
	}
	for _, k := range []string{"ServiceAccount", "RoleBinding"} {
		if !seen[k] {
			t.Errorf("the sample has no %s: the test no longer covers it", k)
		}
	}
}
