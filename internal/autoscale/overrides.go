package autoscale

import (
	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
)

// Base returns a copy of p with the autoscaler's measured rate and memory split but the spec's
// counts: its plan is the floor the autoscaler scales from — what the declared workload needs.
// The targets themselves reach the plan applied through plan.Compute (plan.Observed.Autoscaling),
// which starts from the same copy (plan.Measured).
func Base(p *v1alpha1.AnalyticsPipeline, st *v1alpha1.AutoscalingStatus) *v1alpha1.AnalyticsPipeline {
	return plan.Measured(p, st)
}
