package desired

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
)

// TestGoldenCasesArePlannable: every golden case is one the operator could apply (issue 29).
// Strata's admission accepts its pipeline; the planner accepts it on the tiers it names — no
// error, which PlanValid=False would report as InvalidSpec or TierNotFound — with every stage
// within the target utilization and every retention fitting its volumes (no Unsatisfied or
// StorageUnsatisfied, which PlanValid=False would report as CapacityExceeded). What the cases set
// by hand on top of the plan is what the controller reads from the running cluster, and it must
// be what the cluster's own plan gave it. (split-tiers also names a ServiceAccount of the user's,
// which an installation allows with spark.allowUserServiceAccounts: not the planner's call.)
func TestGoldenCasesArePlannable(t *testing.T) {
	strata, _ := admissions(t)
	fs := fixtures()
	if len(fs) != len(caseNames) {
		t.Fatalf("%d fixtures, %d case names", len(fs), len(caseNames))
	}
	for _, name := range caseNames {
		f := fs[name]
		t.Run(name, func(t *testing.T) {
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(f.pipeline)
			if err != nil {
				t.Fatal(err)
			}
			obj["apiVersion"], obj["kind"] = "strata.dev/v1alpha1", "AnalyticsPipeline"
			if err := strata.Admit(context.Background(), obj); err != nil {
				t.Errorf("Strata's admission refuses the pipeline: %v", err)
			}
			pl, err := f.planned()
			if err != nil {
				t.Fatalf("the planner refuses it (PlanValid=False): %v", err)
			}
			valid(t, "the plan", pl)

			if f.step() > 0 {
				// A scale-down's step is planned only while the spec's own plan wants fewer
				// brokers, and that plan too must be valid: it is what the step leads to.
				spec, err := fixture{pipeline: f.pipeline, obs: plan.Observed{KafkaControllers: f.obs.KafkaControllers}}.planned()
				if err != nil {
					t.Fatalf("the planner refuses the spec the step leads to: %v", err)
				}
				valid(t, "the spec's plan", spec)
				if spec.Brokers >= f.step() {
					t.Errorf("a step of %d brokers, but the spec's plan wants %d: there is nothing to step down to", f.step(), spec.Brokers)
				}
			}
			if f.obs.KafkaControllers > 0 {
				// A running cluster (the scale-downs of split-tiers, which it was created as)
				// keeps its quorum, which the planner is told, and its topic's partitions, which
				// the plan must have at least: the controller would raise a plan's fewer to the
				// topic's after planning, with the retention planned for fewer.
				created, err := splitTiersFixture().planned()
				if err != nil {
					t.Fatal(err)
				}
				if got, want := int64(f.obs.KafkaControllers), ControllerReplicas(created); got != want {
					t.Errorf("running quorum %d, but the cluster was created with %d controllers", got, want)
				}
				if pl.Partitions < created.Partitions {
					t.Errorf("the plan has %d partitions, but the topic was created with %d", pl.Partitions, created.Partitions)
				}
			}
		})
	}
}

// valid fails the test when PlanValid would be False with reason CapacityExceeded.
func valid(t *testing.T, what string, pl v1alpha1.Plan) {
	t.Helper()
	if pl.Unsatisfied != "" || pl.StorageUnsatisfied != "" || pl.Bottleneck != v1alpha1.BottleneckNone {
		t.Errorf("%s is not valid (CapacityExceeded): bottleneck %s; %s; %s", what, pl.Bottleneck, pl.Unsatisfied, pl.StorageUnsatisfied)
	}
}
