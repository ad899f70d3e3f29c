package desired

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// A test case: a pipeline and the plan internal/plan computes for it on the tiers it names, as
// the operator plans before it builds (controllers/pipeline_steps.go, planStep). The golden files
// document what the operator applies, so their plans are the planner's: hand-written plans showed
// what it refuses or never produces (issue 29: a 500Gi claim on 400Gi local disks, a 40Gi st1
// claim below st1's smallest volume). Only what the operator learns from the running cluster
// rather than from the planner is set by hand (see fixture).
type testCase struct {
	name string
	in   Inputs
}

// fixture is what a case starts from: the pipeline and what its cluster already runs.
type fixture struct {
	pipeline *v1alpha1.AnalyticsPipeline
	// run is the KRaft quorum the cluster was created with, which the controller reads from the
	// running controller pool and passes to the planner (plan.Running).
	run plan.Running
	// step is the brokers of a scale-down's step (0: none): the controller plans it with exactly
	// that many brokers (controllers/kafka_scaling.go, withBrokers) while the spec wants fewer.
	step int32
	// emptyBrokers is set by hand, as the controller sets it from the broker pool's status: the
	// broker a remove-brokers KafkaRebalance empties before the pool goes from two brokers to one.
	emptyBrokers []int32
}

// planned is the plan the controller would build the case's objects from, or the planner's
// refusal.
func (f fixture) planned() (v1alpha1.Plan, error) {
	p := f.pipeline
	if f.step > 0 {
		p = p.DeepCopy()
		p.Spec.Kafka.Brokers.Min, p.Spec.Kafka.Brokers.Max = f.step, max(p.Spec.Kafka.Brokers.Max, f.step)
	}
	return plan.ComputeRunning(p, fixtureTiers(), f.run)
}

// inputs is what the builders get; a case the planner refuses has nothing to build.
func (f fixture) inputs(t testing.TB) Inputs {
	t.Helper()
	pl, err := f.planned()
	if err != nil {
		t.Fatalf("the planner refuses the fixture %s/%s: %v", f.pipeline.Namespace, f.pipeline.Name, err)
	}
	return Inputs{Pipeline: f.pipeline, Plan: pl, EmptyBrokers: f.emptyBrokers,
		// The password the controller would have generated once (a fixed one: golden files).
		ElasticsearchPassword: goldenPassword,
		// The tiers the plan was computed on, as the controller passes them.
		Tiers: fixtureTiers()}
}

func fixtures() map[string]fixture {
	return map[string]fixture{
		"split-tiers":          splitTiersFixture(),
		"single-tier-delete":   singleTierDeleteFixture(),
		"last-broker-emptying": lastBrokerEmptyingFixture(),
		"last-broker-leaving":  lastBrokerLeavingFixture(),
		"strata-job":           strataJobFixture(),
	}
}

var caseNames = []string{"split-tiers", "single-tier-delete", "last-broker-emptying", "last-broker-leaving", "strata-job"}

func testCases(t testing.TB) []testCase {
	t.Helper()
	fs := fixtures()
	cases := make([]testCase, 0, len(caseNames))
	for _, name := range caseNames {
		cases = append(cases, testCase{name: name, in: fs[name].inputs(t)})
	}
	return cases
}

func splitTiers(t testing.TB) Inputs         { return splitTiersFixture().inputs(t) }
func singleTierDelete(t testing.TB) Inputs   { return singleTierDeleteFixture().inputs(t) }
func lastBrokerEmptying(t testing.TB) Inputs { return lastBrokerEmptyingFixture().inputs(t) }
func lastBrokerLeaving(t testing.TB) Inputs  { return lastBrokerLeavingFixture().inputs(t) }
func strataJob(t testing.TB) Inputs          { return strataJobFixture().inputs(t) }

// goldenPassword stands for the job's generated Elasticsearch password in the golden files.
const goldenPassword = "golden-password-of-the-test-0001"

func q(s string) resource.Quantity { return resource.MustParse(s) }

// fixtureTiers are the tiers the cases name: the samples' nvme-local (local disks of 400Gi) and
// hdd-st1 (AWS st1, volumes of 125Gi at least), read from config/samples so that the goldens
// follow them, and a dynamic SSD tier on AWS gp3 for single-tier-delete.
func fixtureTiers() []v1alpha1.StorageTier {
	var out []v1alpha1.StorageTier
	for _, f := range []string{"storagetier-nvme-local.yaml", "storagetier-hdd-st1.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", f))
		if err != nil {
			panic(err) // the repository's own files: a test cannot run without them
		}
		var tier v1alpha1.StorageTier
		if err := yaml.UnmarshalStrict(b, &tier); err != nil {
			panic(f + ": " + err.Error())
		}
		out = append(out, tier)
	}
	// gp3's baseline throughput (125 MiB/s) and us-east-1 price
	// (https://aws.amazon.com/ebs/pricing/).
	ssd := gen.Tier("ssd", v1alpha1.MediumSSD, "125Mi", "125Mi", "0.08", gen.SetStorageClass("gp3"))
	return append(out, ssd)
}

// splitTiersFixture is docs/api.md's example (Kafka, spill and Elasticsearch on local NVMe,
// final shuffle data on st1 HDD) with volumes retained, a service account, arguments and
// sparkConf the plan must override. The planner gives it three brokers.
func splitTiersFixture() fixture {
	p := gen.Pipeline(gen.SetName("analytics", "sensors"), gen.SetUID("6f1c2d3e-0000-4000-8000-000000000001"),
		gen.SetTopic("sensor-readings"),
		// The samples' claim: a data node's claim binds one of nvme-local's 400Gi disks, and a
		// larger one would never bind (the planner refuses it).
		gen.SetElasticsearchSize("400Gi"),
		// Two producer nodes, as in the sample: one would send its 90.28 MB/s over a link planned
		// at 90 MB/s, and the plan would not be valid (CapacityExceeded).
		gen.SetProducers(2),
		gen.SetSpec(func(s *v1alpha1.AnalyticsPipelineSpec) {
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
	return fixture{pipeline: p}
}

// singleTierDeleteFixture is a small pipeline on one SSD tier: spill and shuffle data share it,
// one broker (so no Cruise Control), a Python job without off-heap memory, zones as failure
// domains, volumes deleted with the pipeline, and a spec the API server has not defaulted
// (no Kafka, Spark or Elasticsearch version).
func singleTierDeleteFixture() fixture {
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
	return fixture{pipeline: p}
}

// lastBrokerEmptyingFixture is lastBrokerLeaving's pipeline on its way from two brokers to one:
// the pool still has two brokers and Cruise Control, and the KafkaRebalance that empties broker 4
// (the highest ID, which Strimzi removes first) runs before the pool is lowered.
func lastBrokerEmptyingFixture() fixture {
	f := lastBrokerLeavingFixture()
	f.step = 2
	f.emptyBrokers = []int32{4}
	return f
}

// lastBrokerLeavingFixture is splitTiers after its ingest halved, with one copy of each
// record: one broker carries it (at the full ingest one broker's link would be over the target).
// The cluster was created as splitTiers, with three brokers, so its quorum stays three
// controllers. This is the step after lastBrokerEmptying: broker 4 is empty, the pool goes to one
// broker and Cruise Control goes with it (Strimzi refuses it with one broker).
func lastBrokerLeavingFixture() fixture {
	f := splitTiersFixture()
	s := &f.pipeline.Spec
	s.Workload.MessagesPerSecond = 5000
	s.Kafka.Brokers.Min, s.Kafka.ReplicationFactor = 1, 1
	// The topic's 21 partitions, which it was created with and Kafka cannot remove, named so
	// that the plan (retention.bytes per partition included) is made for them: automatic
	// partitions would plan 10, which the controller would raise to the topic's 21 after
	// planning, keeping the retention planned for 10.
	s.Kafka.Topic.Partitions = 21
	f.run = plan.Running{KafkaControllers: 3}
	return f
}

// strataJobFixture is splitTiers running Strata's own ingestion job (no image, jar or main class
// of the user's), with a catch-up rate above the ingest: the job's image, keys and checkpoint
// claim are built.
func strataJobFixture() fixture {
	f := splitTiersFixture()
	s := &f.pipeline.Spec
	s.Spark.Image, s.Spark.MainApplicationFile, s.Spark.MainClass = "", "", ""
	s.Workload.ConsumerMessagesPerSecond = 3 * s.Workload.MessagesPerSecond
	return f
}
