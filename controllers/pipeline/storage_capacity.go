package pipeline

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

// metadataTiers are the tiers the metadata volume specs name (empty for the default class).
func metadataTiers(s v1alpha1.AnalyticsPipelineSpec) []string {
	var out []string
	if c := s.Kafka.Controllers; c != nil {
		out = append(out, c.Storage.Tier)
	}
	if m := s.Elasticsearch.Masters; m != nil {
		out = append(out, m.Storage.Tier)
	}
	return out
}
