package autoscale

import (
	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
)

// Apply returns a copy of p that plans what the autoscaler decided: each count's minimum raised
// to the autoscaler's target (within the spec's maximum), the measured per-executor rate and
// the shifted memory split in place of the spec's. plan.Compute then plans it like any spec, so
// the plan and every builder stay the one path from a spec to objects, and the plan's count is
// the larger of what the declared workload and the measured load need.
//
// p itself is not changed. A nil status, or autoscaling disabled, returns p as it is.
func Apply(p *v1alpha1.AnalyticsPipeline, st *v1alpha1.AutoscalingStatus) *v1alpha1.AnalyticsPipeline {
	if st == nil || p.Spec.Autoscaling == nil || !p.Spec.Autoscaling.Enabled {
		return p
	}
	out := Base(p, st)
	s := &out.Spec
	raise := func(lo *int32, hi, target int32) {
		if target > *lo {
			*lo = min(target, hi)
		}
	}
	raise(&s.Kafka.Brokers.Min, s.Kafka.Brokers.Max, st.Brokers)
	raise(&s.Spark.Executors.Min, s.Spark.Executors.Max, st.Executors)
	raise(&s.Elasticsearch.DataNodes.Min, s.Elasticsearch.DataNodes.Max, st.ElasticsearchDataNodes)
	return out
}

// Base returns a copy of p with the autoscaler's measured rate and memory split but the spec's
// counts: its plan is the floor the autoscaler scales from — what the declared workload needs.
func Base(p *v1alpha1.AnalyticsPipeline, st *v1alpha1.AutoscalingStatus) *v1alpha1.AnalyticsPipeline {
	out := p.DeepCopy()
	if st == nil {
		return out
	}
	s := &out.Spec
	if c := st.MessagesPerSecondPerExecutor; c > 0 {
		s.Spark.MessagesPerSecondPerExecutor = c
	}
	if st.PageCachePercent != nil || st.OffHeapPercent != nil {
		m := *s.Spark.Memory.DeepCopy()
		if st.PageCachePercent != nil {
			m.PageCachePercent = *st.PageCachePercent
		}
		if st.OffHeapPercent != nil {
			m.OffHeapPercent = *st.OffHeapPercent
		}
		// A split decided for an earlier budget may not fit a new one: the spec's then holds.
		if plan.CheckMemory(m) == nil {
			s.Spark.Memory = m
		}
	}
	return out
}
