package desired

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// A test case: a pipeline and the plan internal/plan computes for it on the tiers it names, as
// the operator plans before it builds (controllers/pipeline/pipeline_steps.go, planStep). The golden files
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
	// obs is what the controller reads from the running cluster and passes to the planner
	// (plan.Observed): the KRaft quorum it was created with, the broker pool a scale-down steps.
	obs plan.Observed
}

// result is what the planner decides for the case: the plan the controller would build the
// case's objects from, and the broker to empty; or the planner's refusal.
func (f fixture) result() (plan.Result, error) {
	return plan.Compute(f.pipeline, fixtureTiers(), f.obs)
}

// planned is result's plan.
func (f fixture) planned() (v1alpha1.Plan, error) {
	r, err := f.result()
	return r.Plan, err
}

// step is the brokers of a scale-down's step (0: none): the pool runs that many while the
// spec's own plan wants fewer.
func (f fixture) step() int32 { return f.obs.Brokers.Replicas }

// inputs is what the builders get; a case the planner refuses has nothing to build.
func (f fixture) inputs(t testing.TB) Inputs {
	t.Helper()
	r, err := f.result()
	pl := r.Plan
	if err != nil {
		t.Fatalf("the planner refuses the fixture %s/%s: %v", f.pipeline.Namespace, f.pipeline.Name, err)
	}
	return Inputs{Pipeline: f.pipeline, Plan: pl, EmptyBrokers: r.EmptyBrokers,
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

// splitTiersFixture and singleTierDeleteFixture are the pipelines internal/testutil/gen keeps
// for every test that creates the golden cases (gen.GoldenSplitTiers, gen.GoldenSingleTierDelete
// say what each holds and why).
func splitTiersFixture() fixture       { return fixture{pipeline: gen.GoldenSplitTiers()} }
func singleTierDeleteFixture() fixture { return fixture{pipeline: gen.GoldenSingleTierDelete()} }

// lastBrokerEmptyingFixture is lastBrokerLeaving's pipeline on its way from two brokers to one:
// the pool still has two brokers and Cruise Control, and the KafkaRebalance that empties broker 4
// (the highest ID, which Strimzi removes first) runs before the pool is lowered.
func lastBrokerEmptyingFixture() fixture {
	f := lastBrokerLeavingFixture()
	// The pool runs brokers 3 and 4 and nothing has emptied 4 yet: the planner keeps two
	// brokers and names broker 4 to empty.
	f.obs.Brokers = plan.BrokerPool{Replicas: 2, NodeIDs: []int32{3, 4}, Removal: BrokerRemovalName(f.pipeline)}
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
	f.obs.KafkaControllers = 3
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
