package controllers

import (
	"strings"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
)

// unsatisfied joins the plan's throughput and storage reasons: either makes PlanValid False
// with reason CapacityExceeded (internal/plan/retention.go and volumes.go say what the storage
// ones are).
func unsatisfied(p v1alpha1.Plan) string {
	var parts []string
	for _, s := range []string{p.Unsatisfied, p.StorageUnsatisfied} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, plan.ReasonSeparator)
}
