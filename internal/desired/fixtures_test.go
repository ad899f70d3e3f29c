package desired

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// A test case: a pipeline and a plan written by hand (not by internal/plan), so that these
// tests pin the builders alone.
type testCase struct {
	name string
	in   Inputs
}

func testCases() []testCase {
	cases := []testCase{
		{name: "split-tiers", in: splitTiers()},
		{name: "single-tier-delete", in: singleTierDelete()},
		{name: "last-broker-emptying", in: lastBrokerEmptying()},
		{name: "last-broker-leaving", in: lastBrokerLeaving()},
		{name: "strata-job", in: strataJob()},
	}
	for i := range cases {
		// The password the controller would have generated once (a fixed one: golden files).
		cases[i].in.ElasticsearchPassword = goldenPassword
	}
	return cases
}

// goldenPassword stands for the job's generated Elasticsearch password in the golden files.
const goldenPassword = "golden-password-of-the-test-0001"

func q(s string) resource.Quantity { return resource.MustParse(s) }

// splitTiers is docs/api.md's example (Kafka, spill and Elasticsearch on local NVMe, final shuffle
// data on st1 HDD, three brokers) with volumes retained, a service account, arguments and
// sparkConf the plan must override.
func splitTiers() Inputs {
	p := gen.Pipeline(gen.SetName("analytics", "sensors"), gen.SetUID("6f1c2d3e-0000-4000-8000-000000000001"),
		gen.SetTopic("sensor-readings"), gen.SetElasticsearchSize("500Gi"),
		gen.SetSpec(func(s *v1alpha1.AnalyticsPipelineSpec) {
			s.Spark.ServiceAccountName = "sensor-job"
			s.Spark.Arguments = []string{"--checkpoint", "/checkpoints/sensors"}
			s.Spark.SparkConf = map[string]string{
				"spark.sql.shuffle.partitions":    "40",
				"spark.executor.memory":           "2g", // the plan's heap wins
				"spark.executor.extraJavaOptions": "-Duser.timezone=UTC",
				"spark.dynamicAllocation.enabled": "true", // the plan's executor count wins
			}
			s.Elasticsearch.MasterNodes = 3
			s.VolumeReclaimPolicy = "Retain"
		}))
	plan := v1alpha1.Plan{
		Brokers: 3, ReplicationFactor: 2, MinInSyncReplicas: 2, Partitions: 21,
		Executors: 4, ExecutorCores: 5, ElasticsearchDataNodes: 2, Shards: 2,
		IngestBytesPerSecond:          90280000,
		LinkUsableBytesPerSecond:      112500000,
		LinkPlannedBytesPerSecond:     90000000,
		BrokerReceiveBytesPerSecond:   60186666,
		BrokerSendBytesPerSecond:      60186666,
		BrokerDiskWriteBytesPerSecond: 60186666,
		MaxMessagesPerSecond:          16000,
		Bottleneck:                    v1alpha1.BottleneckNone,
		ExecutorMemory: v1alpha1.ExecutorMemory{
			Heap: q("5586Mi"), OffHeap: q("5585Mi"), Overhead: q("1117Mi"), PageCache: q("4Gi"),
			Pod: q("16Gi"),
			// The shape internal/plan writes: typed settings too, and -Xms through
			// _JAVA_OPTIONS.
			SparkConf: map[string]string{
				"spark.executor.memory":           "5586m",
				"spark.executor.memoryOverhead":   "5213m",
				"spark.memory.offHeap.enabled":    "true",
				"spark.memory.offHeap.size":       "5585m",
				"spark.executor.cores":            "5",
				"spark.executorEnv._JAVA_OPTIONS": "-Xms1024m",
			},
			JavaOptions: "-Xms1024m -XX:+UseG1GC -XX:G1PeriodicGCInterval=60000 -XX:MinHeapFreeRatio=10 -XX:MaxHeapFreeRatio=30",
		},
		Storage: []v1alpha1.StoragePlacement{
			{Role: v1alpha1.RoleKafkaLog, Tier: "nvme-local", StorageClassName: "strata-nvme-local",
				SizePerReplica: q("200Gi"), Replicas: 3, MonthlyCost: "129.60"},
			{Role: v1alpha1.RoleSparkSpill, Tier: "nvme-local", StorageClassName: "strata-nvme-local",
				SizePerReplica: q("20Gi"), Replicas: 4, MonthlyCost: "17.28"},
			{Role: v1alpha1.RoleSparkShuffleData, Tier: "hdd-st1", StorageClassName: "st1",
				SizePerReplica: q("40Gi"), Replicas: 4, MonthlyCost: "8.64"},
			{Role: v1alpha1.RoleElasticsearchData, Tier: "nvme-local", StorageClassName: "strata-nvme-local",
				SizePerReplica: q("500Gi"), Replicas: 2, MonthlyCost: "216.00"},
		},
		// The resources internal/plan gives the sample (1 Gbit/s links, 8000 docs/s of 9028 B per
		// data node); the single-tier fixture has none, as a plan written before they were.
		Resources: []v1alpha1.PodResources{
			{Role: v1alpha1.RoleKafkaBroker, CPU: q("2500m"), Memory: q("9Gi"), Heap: q("2Gi"), PageCache: q("6656Mi")},
			{Role: v1alpha1.RoleKafkaController, CPU: q("500m"), Memory: q("2Gi"), Heap: q("1Gi"), PageCache: q("512Mi")},
			{Role: v1alpha1.RoleElasticsearchData, CPU: q("7500m"), Memory: q("15Gi"), Heap: q("7680Mi"), PageCache: q("7680Mi")},
			{Role: v1alpha1.RoleElasticsearchMaster, CPU: q("500m"), Memory: q("2Gi"), Heap: q("1Gi"), PageCache: q("1Gi")},
		},
		// The retention internal/plan chooses for the sample on 400Gi disks with a 1h retention.
		Retention: v1alpha1.RetentionPlan{
			KafkaRetentionBytes: 22639389220, KafkaSegmentBytes: 1 << 30, KafkaRetentionMs: 3600000,
			ElasticsearchReplicas: 1, ElasticsearchRolloverBytes: 18253611008,
			ElasticsearchRolloverSeconds: 616, ElasticsearchDeleteAfterSeconds: 5550,
		},
		MonthlyStorageCost: "371.52", SingleTierMonthlyStorageCost: "380.16",
	}
	return Inputs{Pipeline: p, Plan: plan}
}

// singleTierDelete is a small pipeline on one SSD tier: spill and shuffle data share it, one
// broker (so no Cruise Control), a Python job without off-heap memory, zones as failure
// domains, volumes deleted with the pipeline, and a spec the API server has not defaulted
// (no Kafka, Spark or Elasticsearch version).
func singleTierDelete() Inputs {
	p := &v1alpha1.AnalyticsPipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "clicks", Namespace: "web",
			UID: "6f1c2d3e-0000-4000-8000-000000000002"},
		Spec: v1alpha1.AnalyticsPipelineSpec{
			Workload: v1alpha1.WorkloadSpec{MessagesPerSecond: 2000, MessageBytes: 1024},
			Network:  v1alpha1.NetworkSpec{LinkBitsPerSecond: q("10G")},
			Kafka: v1alpha1.KafkaSpec{
				ReplicationFactor: 1,
				Brokers:           v1alpha1.Range{Min: 1, Max: 1},
				Storage:           v1alpha1.StorageRef{Tier: "ssd", Size: q("50Gi")},
				RackTopologyKey:   "topology.kubernetes.io/zone",
			},
			Spark: v1alpha1.SparkSpec{
				Image:                        "registry.example/clicks:2.3",
				MainApplicationFile:          "local:///opt/app/job.py",
				Executors:                    v1alpha1.ExecutorsSpec{Min: 1, Max: 4, Cores: 4},
				MessagesPerSecondPerExecutor: 3000,
				Memory:                       v1alpha1.MemorySpec{Budget: q("8Gi"), PageCachePercent: 20},
				Shuffle:                      v1alpha1.ShuffleSpec{SpillTier: "ssd", SpillSize: q("10Gi"), DataSize: ptr.To(q("30Gi"))},
			},
			Elasticsearch: v1alpha1.ElasticsearchSpec{
				DataNodes:                v1alpha1.Range{Min: 1, Max: 3},
				MasterNodes:              1,
				MessagesPerSecondPerNode: 5000,
				Storage:                  v1alpha1.StorageRef{Tier: "ssd", Size: q("100Gi")},
			},
			VolumeReclaimPolicy: "Delete",
		},
	}
	plan := v1alpha1.Plan{
		Brokers: 1, ReplicationFactor: 1, MinInSyncReplicas: 1, Partitions: 8,
		Executors: 2, ExecutorCores: 4, ElasticsearchDataNodes: 1, Shards: 1,
		IngestBytesPerSecond:          2048000,
		LinkUsableBytesPerSecond:      1125000000,
		LinkPlannedBytesPerSecond:     900000000,
		BrokerReceiveBytesPerSecond:   2048000,
		BrokerSendBytesPerSecond:      2048000,
		BrokerDiskWriteBytesPerSecond: 2048000,
		MaxMessagesPerSecond:          5000,
		Bottleneck:                    v1alpha1.BottleneckNone,
		ExecutorMemory: v1alpha1.ExecutorMemory{
			Heap: q("5957Mi"), OffHeap: q("0"), Overhead: q("596Mi"), PageCache: q("1639Mi"), Pod: q("8Gi"),
			SparkConf: map[string]string{
				"spark.executor.memory":         "5957m",
				"spark.executor.memoryOverhead": "2235m",
			},
			JavaOptions: "-XX:+UseG1GC",
		},
		Storage: []v1alpha1.StoragePlacement{
			{Role: v1alpha1.RoleKafkaLog, Tier: "ssd", StorageClassName: "gp3",
				SizePerReplica: q("50Gi"), Replicas: 1, MonthlyCost: "6.00"},
			{Role: v1alpha1.RoleSparkSpill, Tier: "ssd", StorageClassName: "gp3",
				SizePerReplica: q("10Gi"), Replicas: 2, MonthlyCost: "2.40"},
			{Role: v1alpha1.RoleSparkShuffleData, Tier: "ssd", StorageClassName: "gp3",
				SizePerReplica: q("30Gi"), Replicas: 2, MonthlyCost: "7.20"},
			{Role: v1alpha1.RoleElasticsearchData, Tier: "ssd", StorageClassName: "gp3",
				SizePerReplica: q("100Gi"), Replicas: 1, MonthlyCost: "12.00"},
		},
		MonthlyStorageCost: "27.60", SingleTierMonthlyStorageCost: "27.60",
	}
	return Inputs{Pipeline: p, Plan: plan}
}

// lastBrokerEmptying is splitTiers on its way from two brokers to one: the cluster was created
// with three brokers, so its quorum stays three controllers; the pool still has two brokers and
// Cruise Control, and the KafkaRebalance that empties broker 4 (the highest ID, which Strimzi
// removes first) runs before the pool is lowered.
func lastBrokerEmptying() Inputs {
	in := lastBrokerLeaving()
	in.Plan.Brokers = 2
	in.EmptyBrokers = []int32{4}
	return in
}

// lastBrokerLeaving is the step after lastBrokerEmptying: broker 4 is empty, the pool goes to one
// broker and Cruise Control goes with it (Strimzi refuses it with one broker).
func lastBrokerLeaving() Inputs {
	in := splitTiers()
	in.Plan.Brokers, in.Plan.ReplicationFactor, in.Plan.MinInSyncReplicas = 1, 1, 1
	in.Plan.MetadataVolumes = []v1alpha1.MetadataVolume{
		{Role: v1alpha1.RoleKafkaController, Size: q("10Gi"), Replicas: 3},
	}
	return in
}

// strataJob is splitTiers running Strata's own ingestion job (no image, jar or main class of
// the user's), with a catch-up rate above the ingest: the job's image, keys and checkpoint
// claim are built.
func strataJob() Inputs {
	in := splitTiers()
	s := &in.Pipeline.Spec.Spark
	s.Image, s.MainApplicationFile, s.MainClass = "", "", ""
	in.Pipeline.Spec.Workload.ConsumerMessagesPerSecond = 3 * in.Pipeline.Spec.Workload.MessagesPerSecond
	return in
}
