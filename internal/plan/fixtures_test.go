package plan_test

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/strata-dev/strata/api/v1alpha1"
)

func q(s string) resource.Quantity { return resource.MustParse(s) }

func qp(s string) *resource.Quantity { v := resource.MustParse(s); return &v }

// apiExample is the pipeline of docs/api.md, with two producers (see TestAPIExample).
func apiExample() *v1alpha1.AnalyticsPipeline {
	return &v1alpha1.AnalyticsPipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "sensors", Namespace: "default"},
		Spec: v1alpha1.AnalyticsPipelineSpec{
			Workload: v1alpha1.WorkloadSpec{MessagesPerSecond: 10000, MessageBytes: 9028, Producers: 2},
			Network:  v1alpha1.NetworkSpec{LinkBitsPerSecond: q("1G"), EfficiencyPercent: 90, TargetUtilizationPercent: 80},
			Kafka: v1alpha1.KafkaSpec{
				Version:           "4.2.0",
				ReplicationFactor: 2,
				Brokers:           v1alpha1.Range{Min: 2, Max: 6},
				Storage:           v1alpha1.StorageRef{Tier: "nvme-local", Size: q("200Gi")},
				Topic:             v1alpha1.TopicSpec{Name: "sensors"},
			},
			Spark: v1alpha1.SparkSpec{
				Image:                        "registry.example/sensor-job:1.0",
				MainApplicationFile:          "local:///opt/app/job.jar",
				Executors:                    v1alpha1.ExecutorsSpec{Min: 2, Max: 10, Cores: 5},
				MessagesPerSecondPerExecutor: 4000,
				Memory: v1alpha1.MemorySpec{
					Budget: q("16Gi"), OffHeapPercent: 50, PageCachePercent: 25, MinHeap: qp("2Gi"),
				},
				Shuffle: v1alpha1.ShuffleSpec{
					SpillTier: "nvme-local", SpillSize: q("20Gi"), DataTier: "hdd-st1", DataSize: qp("40Gi"),
				},
			},
			Elasticsearch: v1alpha1.ElasticsearchSpec{
				DataNodes:                v1alpha1.Range{Min: 2, Max: 6},
				MessagesPerSecondPerNode: 8000,
				Storage:                  v1alpha1.StorageRef{Tier: "nvme-local", Size: q("500Gi")},
			},
		},
	}
}

func tier(name string, medium v1alpha1.Medium, read, write, price string) v1alpha1.StorageTier {
	return v1alpha1.StorageTier{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.StorageTierSpec{
			Medium:              medium,
			StorageClassName:    "strata-" + name,
			ReadBytesPerSecond:  q(read),
			WriteBytesPerSecond: q(write),
			MonthlyPricePerGiB:  price,
		},
	}
}

func apiTiers() []v1alpha1.StorageTier {
	return []v1alpha1.StorageTier{
		tier("nvme-local", v1alpha1.MediumNVMe, "800M", "700M", "0.216"),
		tier("hdd-st1", v1alpha1.MediumHDD, "500M", "500M", "0.054"),
	}
}
