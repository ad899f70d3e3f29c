package autoscale

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

func TestApplyRaisesMinimaWithinTheSpec(t *testing.T) {
	p := pipeline()
	p.Spec.Kafka.Brokers = v1alpha1.Range{Min: 2, Max: 6}
	p.Spec.Spark.Executors = v1alpha1.ExecutorsSpec{Min: 2, Max: 10, Cores: 5}
	p.Spec.Spark.MessagesPerSecondPerExecutor = 4000
	p.Spec.Elasticsearch.DataNodes = v1alpha1.Range{Min: 2, Max: 6}
	p.Spec.Spark.Memory = v1alpha1.MemorySpec{Budget: resource.MustParse("16Gi"), PageCachePercent: 20, OffHeapPercent: 50}
	st := &v1alpha1.AutoscalingStatus{Brokers: 9, Executors: 1, ElasticsearchDataNodes: 4,
		MessagesPerSecondPerExecutor: 3000, PageCachePercent: ptr.To[int32](25), OffHeapPercent: ptr.To[int32](50)}

	got := Apply(p, st).Spec
	if got.Kafka.Brokers != (v1alpha1.Range{Min: 6, Max: 6}) {
		t.Errorf("brokers %+v: a target above max is held at max", got.Kafka.Brokers)
	}
	if got.Spark.Executors.Min != 2 {
		t.Errorf("executors min %d: a target below min leaves it", got.Spark.Executors.Min)
	}
	if got.Elasticsearch.DataNodes.Min != 4 || got.Spark.MessagesPerSecondPerExecutor != 3000 || got.Spark.Memory.PageCachePercent != 25 {
		t.Errorf("overrides not applied: %+v", got)
	}
	if p.Spec.Kafka.Brokers.Min != 2 || p.Spec.Spark.Memory.PageCachePercent != 20 {
		t.Error("Apply changed its argument")
	}

	// A split that no longer fits the budget gives way to the spec's.
	st.PageCachePercent, st.OffHeapPercent = ptr.To[int32](80), ptr.To[int32](90)
	if got := Apply(p, st).Spec.Spark.Memory; got.PageCachePercent != 20 || got.OffHeapPercent != 50 {
		t.Errorf("split %d%%/%d%%, want the spec's 20%%/50%%", got.PageCachePercent, got.OffHeapPercent)
	}

	p.Spec.Autoscaling.Enabled = false
	if Apply(p, st) != p {
		t.Error("with autoscaling off, the spec is planned as it is")
	}
}

// pipeline is the API example in "analytics", its topic "readings", read every 5 s.
func pipeline() *v1alpha1.AnalyticsPipeline {
	return gen.Pipeline(gen.SetName("analytics", "sensors"), gen.SetTopic("readings"),
		gen.SetAutoscaling(v1alpha1.AutoscalingSpec{Enabled: true, IntervalSeconds: 5}))
}
