package gen

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// GoldenPipeline is the pipeline of one of internal/desired's golden cases, by the case's name.
type GoldenPipeline struct {
	Case     string
	Pipeline *v1alpha1.AnalyticsPipeline
}

// GoldenPipelines are the pipelines internal/desired's golden cases are built from (its
// fixtures_test.go, which TestGoldenPipelinesAreTheFixtures holds these to), for tests outside
// that package that create them on a cluster (the upgrade test). last-broker-emptying is
// last-broker-leaving's pipeline in the middle of a scale-down, a state of the running cluster
// rather than a pipeline of its own, so it is not here.
func GoldenPipelines() []GoldenPipeline {
	leaving := GoldenSplitTiers()
	s := &leaving.Spec
	s.Workload.MessagesPerSecond = 5000
	s.Kafka.Brokers.Min, s.Kafka.ReplicationFactor = 1, 1
	s.Kafka.Topic.Partitions = 21

	job := GoldenSplitTiers()
	s = &job.Spec
	s.Spark.Image, s.Spark.MainApplicationFile, s.Spark.MainClass = "", "", ""
	s.Workload.ConsumerMessagesPerSecond = 3 * s.Workload.MessagesPerSecond

	return []GoldenPipeline{
		{"split-tiers", GoldenSplitTiers()},
		{"single-tier-delete", GoldenSingleTierDelete()},
		{"last-broker-leaving", leaving},
		{"strata-job", job},
	}
}

// GoldenSplitTiers is the split-tiers case's pipeline: docs/api.md's example with volumes
// retained, a ServiceAccount of the user's, arguments and sparkConf the plan overrides.
func GoldenSplitTiers() *v1alpha1.AnalyticsPipeline {
	return Pipeline(SetName("analytics", "sensors"), SetUID("6f1c2d3e-0000-4000-8000-000000000001"),
		SetTopic("sensor-readings"),
		SetElasticsearchSize("400Gi"),
		SetProducers(2),
		SetSpec(func(s *v1alpha1.AnalyticsPipelineSpec) {
			s.Spark.ServiceAccountName = "sensor-job"
			s.Spark.Arguments = []string{"--checkpoint", "/checkpoints/sensors"}
			s.Spark.SparkConf = map[string]string{
				"spark.sql.shuffle.partitions":    "40",
				"spark.executor.memory":           "2g",
				"spark.executor.extraJavaOptions": "-Duser.timezone=UTC",
				"spark.dynamicAllocation.enabled": "true",
			}
			s.Elasticsearch.MasterNodes = 3
			s.VolumeReclaimPolicy = "Retain"
		}))
}

// GoldenSingleTierDelete is the single-tier-delete case's pipeline: a small pipeline on one SSD
// tier ("ssd", StorageClass gp3), one broker, a Python job, volumes deleted with the pipeline.
func GoldenSingleTierDelete() *v1alpha1.AnalyticsPipeline {
	return &v1alpha1.AnalyticsPipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "clicks", Namespace: "web",
			UID: "6f1c2d3e-0000-4000-8000-000000000002"},
		Spec: v1alpha1.AnalyticsPipelineSpec{
			Workload: v1alpha1.WorkloadSpec{MessagesPerSecond: 2000, MessageBytes: 1024},
			Network:  v1alpha1.NetworkSpec{LinkBitsPerSecond: Q("10G")},
			Kafka: v1alpha1.KafkaSpec{
				ReplicationFactor: 1,
				Brokers:           v1alpha1.Range{Min: 1, Max: 1},
				Storage:           v1alpha1.StorageRef{Tier: "ssd", Size: Q("50Gi")},
				RackTopologyKey:   "topology.kubernetes.io/zone",
			},
			Spark: v1alpha1.SparkSpec{
				Image:                        "registry.example/clicks:2.3",
				MainApplicationFile:          "local:///opt/app/job.py",
				Executors:                    v1alpha1.ExecutorsSpec{Min: 1, Max: 4, Cores: 4},
				MessagesPerSecondPerExecutor: 3000,
				Memory:                       v1alpha1.MemorySpec{Budget: Q("8Gi"), PageCachePercent: 20},
				Shuffle:                      v1alpha1.ShuffleSpec{SpillTier: "ssd", SpillSize: Q("10Gi"), DataSize: ptr.To(Q("30Gi"))},
			},
			Elasticsearch: v1alpha1.ElasticsearchSpec{
				DataNodes:                v1alpha1.Range{Min: 1, Max: 3},
				MasterNodes:              1,
				MessagesPerSecondPerNode: 5000,
				Storage:                  v1alpha1.StorageRef{Tier: "ssd", Size: Q("100Gi")},
			},
			VolumeReclaimPolicy: "Delete",
		},
	}
}

// GoldenSSDTier is the single-tier-delete case's tier: gp3's baseline throughput (125 MiB/s)
// and us-east-1 price, on the StorageClass gp3.
func GoldenSSDTier() v1alpha1.StorageTier {
	return Tier("ssd", v1alpha1.MediumSSD, "125Mi", "125Mi", "0.08", SetStorageClass("gp3"))
}
