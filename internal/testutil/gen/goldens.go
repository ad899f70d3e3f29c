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

// GoldenSplitTiers is the split-tiers case's pipeline: docs/api.md's example (Kafka, spill and
// Elasticsearch on local NVMe, final shuffle data on st1 HDD) with volumes retained, a
// ServiceAccount of the user's, arguments and sparkConf the plan must override. The planner gives
// it three brokers.
func GoldenSplitTiers() *v1alpha1.AnalyticsPipeline {
	return Pipeline(SetName("analytics", "sensors"), SetUID("6f1c2d3e-0000-4000-8000-000000000001"),
		SetTopic("sensor-readings"),
		// The samples' claim: a data node's claim binds one of nvme-local's 400Gi disks, and a
		// larger one would never bind (the planner refuses it).
		SetElasticsearchSize("400Gi"),
		// Two producer nodes, as in the sample: one would send its 90.28 MB/s over a link planned
		// at 90 MB/s, and the plan would not be valid (CapacityExceeded).
		SetProducers(2),
		SetSpec(func(s *v1alpha1.AnalyticsPipelineSpec) {
			// A ServiceAccount of the user's: the operator accepts it when installed with
			// spark.allowUserServiceAccounts (TestGoldenCasesArePlannable says so).
			s.Spark.ServiceAccountName = "sensor-job"
			s.Spark.Arguments = []string{"--checkpoint", "/checkpoints/sensors"}
			s.Spark.SparkConf = map[string]string{
				"spark.sql.shuffle.partitions":    "40",
				"spark.executor.memory":           "2g", // the plan's heap wins
				"spark.executor.extraJavaOptions": "-Duser.timezone=UTC",
				"spark.dynamicAllocation.enabled": "true", // the plan's executor count wins
			}
			// The shuffle data claim stays the example's 40Gi: the planner claims 925Gi of st1
			// for it (st1's 125Gi minimum sustains 4.9 MB/s; an executor writes 36.11 MB/s at
			// its processing rate), which is what the golden files show.
			s.Elasticsearch.MasterNodes = 3
			s.VolumeReclaimPolicy = "Retain"
		}))
}

// GoldenSingleTierDelete is the single-tier-delete case's pipeline: a small pipeline on one SSD
// tier ("ssd", StorageClass gp3): spill and shuffle data share it, one broker (so no Cruise
// Control), a Python job without off-heap memory, zones as failure domains, volumes deleted with
// the pipeline, and a spec the API server has not defaulted (no Kafka, Spark or Elasticsearch
// version).
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
