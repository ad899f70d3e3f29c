package autoscale

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// TestBaseKeepsTheSpecsCounts: the base the autoscaler scales from has the measured rate and
// split but the spec's counts (the targets reach the plan through plan.Compute).
func TestBaseKeepsTheSpecsCounts(t *testing.T) {
	p := pipeline()
	p.Spec.Kafka.Brokers = v1alpha1.Range{Min: 2, Max: 6}
	p.Spec.Spark.MessagesPerSecondPerExecutor = 4000
	p.Spec.Spark.Memory = v1alpha1.MemorySpec{Budget: resource.MustParse("16Gi"), PageCachePercent: 20, OffHeapPercent: 50}
	st := &v1alpha1.AutoscalingStatus{Brokers: 9, MessagesPerSecondPerExecutor: 3000,
		PageCachePercent: ptr.To[int32](25), OffHeapPercent: ptr.To[int32](50)}

	got := Base(p, st).Spec
	if got.Kafka.Brokers != (v1alpha1.Range{Min: 2, Max: 6}) {
		t.Errorf("brokers %+v: the base keeps the spec's counts", got.Kafka.Brokers)
	}
	if got.Spark.MessagesPerSecondPerExecutor != 3000 || got.Spark.Memory.PageCachePercent != 25 {
		t.Errorf("measured rate and split not applied: %+v", got.Spark)
	}
	if p.Spec.Spark.MessagesPerSecondPerExecutor != 4000 || p.Spec.Spark.Memory.PageCachePercent != 20 {
		t.Error("Base changed its argument")
	}
	// A split that no longer fits the budget gives way to the spec's.
	st.PageCachePercent, st.OffHeapPercent = ptr.To[int32](80), ptr.To[int32](90)
	if got := Base(p, st).Spec.Spark.Memory; got.PageCachePercent != 20 || got.OffHeapPercent != 50 {
		t.Errorf("split %d%%/%d%%, want the spec's 20%%/50%%", got.PageCachePercent, got.OffHeapPercent)
	}
}

// pipeline is the API example in "analytics", its topic "readings", read every 5 s.
func pipeline() *v1alpha1.AnalyticsPipeline {
	return gen.Pipeline(gen.SetName("analytics", "sensors"), gen.SetTopic("readings"),
		gen.SetAutoscaling(v1alpha1.AutoscalingSpec{Enabled: true, IntervalSeconds: 5}))
}
