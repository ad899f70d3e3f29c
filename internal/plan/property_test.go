package plan_test

import (
	"errors"
	"math"
	"math/rand"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// Property tests: hand-rolled generators with fixed seeds, so a failure reproduces exactly.

// logUniform returns a value in [lo, hi], spread evenly over orders of magnitude, which is how
// real rates and sizes are spread.
func logUniform(rng *rand.Rand, lo, hi int64) int64 {
	if lo >= hi {
		return lo
	}
	span := float64(hi) / float64(lo)
	v := int64(float64(lo) * math.Pow(span, rng.Float64()))
	return min(max(v, lo), hi)
}

func rangeOf(rng *rand.Rand, hi int32) v1alpha1.Range {
	a, b := 1+rng.Int31n(hi), 1+rng.Int31n(hi)
	return v1alpha1.Range{Min: min(a, b), Max: max(a, b)}
}

// randomPipeline returns a pipeline admission would accept.
func randomPipeline(rng *rand.Rand) *v1alpha1.AnalyticsPipeline {
	p := gen.Pipeline(gen.SetProducers(2))
	s := &p.Spec
	s.Workload = v1alpha1.WorkloadSpec{
		MessagesPerSecond: logUniform(rng, 1, 1_000_000_000),
		MessageBytes:      logUniform(rng, 1, 104_857_600),
		Producers:         int32(logUniform(rng, 1, 10_000)),
	}
	if rng.Intn(2) == 0 {
		s.Workload.ConsumerMessagesPerSecond = logUniform(rng, 1, 1_000_000_000)
	}
	s.Network = v1alpha1.NetworkSpec{
		LinkBitsPerSecond:        *resource.NewQuantity(logUniform(rng, 1_000, 400_000_000_000), resource.DecimalSI),
		EfficiencyPercent:        1 + rng.Int31n(100),
		TargetUtilizationPercent: 1 + rng.Int31n(100),
	}
	s.Kafka.Brokers = rangeOf(rng, 50)
	s.Kafka.ReplicationFactor = 1 + rng.Int31n(min(5, s.Kafka.Brokers.Max))
	s.Spark.Executors = v1alpha1.ExecutorsSpec{Min: 1 + rng.Int31n(20), Cores: 1 + rng.Int31n(16)}
	s.Spark.Executors.Max = s.Spark.Executors.Min + rng.Int31n(200)
	s.Spark.MessagesPerSecondPerExecutor = logUniform(rng, 1, 10_000_000)
	s.Spark.Memory = randomMemory(rng)
	s.Elasticsearch.DataNodes = rangeOf(rng, 50)
	s.Elasticsearch.MessagesPerSecondPerNode = logUniform(rng, 1, 10_000_000)
	return p
}

func randomMemory(rng *rand.Rand) v1alpha1.MemorySpec {
	budget := logUniform(rng, 512<<20+1, 4<<40-1)
	if rng.Intn(2) == 0 {
		budget = budget >> 20 << 20
	}
	return v1alpha1.MemorySpec{
		Budget:           *resource.NewQuantity(budget, resource.BinarySI),
		MinHeap:          resource.NewQuantity(logUniform(rng, 1, budget-1), resource.BinarySI),
		PageCachePercent: rng.Int31n(81),
		OffHeapPercent:   rng.Int31n(91),
	}
}

func TestPropertyPlansKeepTheirInvariants(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	planned := 0
	for i := 0; i < 3000; i++ {
		in := randomPipeline(rng)
		p, err := plan.Fresh(in, gen.APITiers())
		if err != nil {
			var fe *plan.FieldError
			if !errors.As(err, &fe) || (fe.Field != "spec.spark.memory.minHeap" && fe.Field != "spec.spark.memory") {
				t.Fatalf("valid pipeline %+v: %v", in.Spec, err)
			}
			continue
		}
		planned++
		if problem := planProblem(in, p); problem != "" {
			t.Fatalf("%s\nspec %+v", problem, in.Spec)
		}
	}
	if planned < 1000 {
		t.Errorf("only %d of 3000 random pipelines planned: the generator is too harsh", planned)
	}
}

// More ingest never plans fewer brokers, executors or data nodes, at a fixed partition count.
// With automatic partitions it may plan fewer brokers: more executors give more partitions, and
// the rounds that make them a multiple of the brokers stop at the first count that divides them
// (when 25 partitions on 4 brokers, 7 leaders on one, are too many for it, 5 brokers take 25;
// 28 executor cores spread 7 on each of 4).
func TestPropertyMoreIngestNeverPlansLess(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 2000; i++ {
		in := randomPipeline(rng)
		in.Spec.Kafka.Topic.Partitions = int32(logUniform(rng, 1, 1000))
		in.Spec.Spark.Memory = gen.Pipeline(gen.SetProducers(2)).Spec.Spark.Memory
		more := in.DeepCopy()
		more.Spec.Workload.MessagesPerSecond = min(1_000_000_000, in.Spec.Workload.MessagesPerSecond+logUniform(rng, 1, 100_000_000))
		if in.Spec.Workload.ConsumerMessagesPerSecond != 0 {
			more.Spec.Workload.ConsumerMessagesPerSecond = max(in.Spec.Workload.ConsumerMessagesPerSecond, more.Spec.Workload.MessagesPerSecond)
			in.Spec.Workload.ConsumerMessagesPerSecond = max(in.Spec.Workload.ConsumerMessagesPerSecond, in.Spec.Workload.MessagesPerSecond)
		}
		a := mustCompute(t, in, gen.APITiers())
		b := mustCompute(t, more, gen.APITiers())
		if b.Brokers < a.Brokers || b.Executors < a.Executors || b.ElasticsearchDataNodes < a.ElasticsearchDataNodes {
			t.Fatalf("%d → %d msgs/s planned brokers %d → %d, executors %d → %d, data nodes %d → %d",
				in.Spec.Workload.MessagesPerSecond, more.Spec.Workload.MessagesPerSecond,
				a.Brokers, b.Brokers, a.Executors, b.Executors, a.ElasticsearchDataNodes, b.ElasticsearchDataNodes)
		}
	}
}

// A larger budget never shrinks the page cache, and every split keeps the memory invariant.
func TestPropertyMemory(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 5000; i++ {
		m := randomMemory(rng)
		m.MinHeap = resource.NewQuantity(450<<20, resource.BinarySI)
		bigger := *m.DeepCopy()
		bigger.Budget = *resource.NewQuantity(min(4<<40-1, m.Budget.Value()+logUniform(rng, 1, 1<<40)), resource.BinarySI)
		small, errSmall := computeMemory(m)
		large, errLarge := computeMemory(bigger)
		if errSmall != nil || errLarge != nil {
			continue
		}
		checkMemory(t, m, small)
		checkMemory(t, bigger, large)
		if large.PageCache.Cmp(small.PageCache) < 0 {
			t.Fatalf("budget %s → %s shrank the page cache %s → %s (%d%%)",
				m.Budget.String(), bigger.Budget.String(), small.PageCache.String(), large.PageCache.String(), m.PageCachePercent)
		}
	}
}

// admissionAdmits transcribes the MemorySpec CEL rule of api/v1alpha1 (internal/schema checks
// the real rule too).
func admissionAdmits(m v1alpha1.MemorySpec) bool {
	b, h := m.Budget.Value(), m.MinHeap.Value()
	if b <= 512<<20 || b >= 4<<40 || h >= b {
		return true // other rules reject these
	}
	rest := b - b*int64(m.PageCachePercent)/100
	overhead := max(rest/11, 402653184)
	return (rest-overhead)*(100-int64(m.OffHeapPercent))/100 >= h
}

// For budgets and minimum heaps in whole MiB, Compute rejects a minHeap exactly when admission
// does.
func TestPropertyMemoryAgreesWithAdmission(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for i := 0; i < 10000; i++ {
		m := randomMemory(rng)
		m.Budget = *resource.NewQuantity(m.Budget.Value()>>20<<20, resource.BinarySI)
		// Aim at the boundary: the heap admission computes, give or take a MiB.
		edge := admissionHeapOf(m) >> 20
		m.MinHeap = resource.NewQuantity(max(1, edge+int64(rng.Intn(3)-1))<<20, resource.BinarySI)
		if m.MinHeap.Cmp(m.Budget) >= 0 {
			continue
		}
		_, err := computeMemory(m)
		var fe *plan.FieldError
		rejected := errors.As(err, &fe) && fe.Field == "spec.spark.memory.minHeap"
		if rejected == admissionAdmits(m) {
			t.Fatalf("budget %s minHeap %s pc %d off %d: admission admits=%v, Compute: %v",
				m.Budget.String(), m.MinHeap.String(), m.PageCachePercent, m.OffHeapPercent, admissionAdmits(m), err)
		}
	}
}

func admissionHeapOf(m v1alpha1.MemorySpec) int64 {
	b := m.Budget.Value()
	rest := b - b*int64(m.PageCachePercent)/100
	return (rest - max(rest/11, 402653184)) * (100 - int64(m.OffHeapPercent)) / 100
}

func computeMemory(m v1alpha1.MemorySpec) (v1alpha1.ExecutorMemory, error) {
	in := gen.Pipeline(gen.SetProducers(2))
	in.Spec.Spark.Memory = m
	p, err := plan.Fresh(in, gen.APITiers())
	return p.ExecutorMemory, err
}
