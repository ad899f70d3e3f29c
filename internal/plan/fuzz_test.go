package plan_test

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// The fuzz targets throw arbitrary numbers and quantity strings at Compute. Whatever comes in,
// Compute must not panic, must fail only with the error types the controller understands, and
// every plan it returns must keep the invariants. Seeds live in testdata/fuzz/<Target>/; CI
// runs only those, `go test -fuzz FuzzCompute -fuzztime 20s ./internal/plan` explores.

func quantity(s string) resource.Quantity {
	v, err := resource.ParseQuantity(s)
	if err != nil {
		return resource.Quantity{}
	}
	return v
}

func checkError(t *testing.T, err error) {
	t.Helper()
	var fe *plan.FieldError
	var mt *plan.MissingTierError
	if !errors.As(err, &fe) && !errors.As(err, &mt) {
		t.Fatalf("untyped error %T: %v", err, err)
	}
	if fe != nil && (fe.Field == "" || fe.Detail == "") {
		t.Fatalf("FieldError without a field or detail: %+v", fe)
	}
}

func FuzzCompute(f *testing.F) {
	f.Fuzz(func(t *testing.T,
		mps, bytes, consumer int64, producers int32,
		link string, efficiency, target int32,
		replication, brokersMin, brokersMax int32, logSize, logWrite string,
		executorsMin, executorsMax, cores int32, perExecutor int64,
		budget, minHeap string, pageCache, offHeap int32,
		nodesMin, nodesMax int32, perNode int64, partitions, shards int32, price string,
	) {
		in := gen.Pipeline(gen.SetProducers(2))
		s := &in.Spec
		s.Workload = v1alpha1.WorkloadSpec{MessagesPerSecond: mps, MessageBytes: bytes, ConsumerMessagesPerSecond: consumer, Producers: producers}
		s.Network = v1alpha1.NetworkSpec{LinkBitsPerSecond: quantity(link), EfficiencyPercent: efficiency, TargetUtilizationPercent: target}
		s.Kafka.ReplicationFactor = replication
		s.Kafka.Brokers = v1alpha1.Range{Min: brokersMin, Max: brokersMax}
		s.Kafka.Storage.Size = quantity(logSize)
		s.Kafka.Topic.Partitions = partitions
		s.Spark.Executors = v1alpha1.ExecutorsSpec{Min: executorsMin, Max: executorsMax, Cores: cores}
		s.Spark.MessagesPerSecondPerExecutor = perExecutor
		h := quantity(minHeap)
		s.Spark.Memory = v1alpha1.MemorySpec{Budget: quantity(budget), MinHeap: &h, PageCachePercent: pageCache, OffHeapPercent: offHeap}
		s.Elasticsearch.DataNodes = v1alpha1.Range{Min: nodesMin, Max: nodesMax}
		s.Elasticsearch.MessagesPerSecondPerNode = perNode
		s.Elasticsearch.Shards = shards
		tiers := gen.APITiers()
		tiers[0].Spec.WriteBytesPerSecond = quantity(logWrite)
		tiers[1].Spec.MonthlyPricePerGiB = price

		p, err := plan.Fresh(in, tiers)
		if err != nil {
			checkError(t, err)
			return
		}
		if problem := planProblem(in, p); problem != "" {
			t.Fatalf("%s\nspec %+v", problem, in.Spec)
		}
	})
}

func FuzzMemory(f *testing.F) {
	f.Fuzz(func(t *testing.T, budget, minHeap int64, pageCache, offHeap int32) {
		m := v1alpha1.MemorySpec{
			Budget:           *resource.NewQuantity(budget, resource.BinarySI),
			MinHeap:          resource.NewQuantity(minHeap, resource.BinarySI),
			PageCachePercent: pageCache,
			OffHeapPercent:   offHeap,
		}
		em, err := computeMemory(m)
		var fe *plan.FieldError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
		if err == nil {
			if problem := memoryProblem(m, em); problem != "" {
				t.Fatal(problem)
			}
		}
		// In whole MiB, and where only the MemorySpec rule decides, Compute agrees with it.
		inRange := budget > 512<<20 && budget < 4<<40 && minHeap < budget &&
			pageCache >= 0 && pageCache <= 80 && offHeap >= 0 && offHeap <= 90
		if inRange && budget%(1<<20) == 0 && minHeap%(1<<20) == 0 {
			rejected := fe != nil && fe.Field == "spec.spark.memory.minHeap"
			if rejected == admissionAdmits(m) {
				t.Fatalf("admission admits=%v but Compute: %v", admissionAdmits(m), err)
			}
		}
	})
}

func BenchmarkCompute(b *testing.B) {
	in, tiers := gen.Pipeline(gen.SetProducers(2)), gen.APITiers()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := plan.Fresh(in, tiers); err != nil {
			b.Fatal(err)
		}
	}
}
