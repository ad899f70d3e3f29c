package plan_test

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

const mib = 1 << 20

func mustCompute(t *testing.T, p *v1alpha1.AnalyticsPipeline, tiers []v1alpha1.StorageTier) v1alpha1.Plan {
	t.Helper()
	out, err := plan.Fresh(p, tiers)
	if err != nil {
		t.Fatalf("Compute: %v", err)
	}
	return out
}

func stageCap(t *testing.T, p v1alpha1.Plan, name string) int64 {
	t.Helper()
	for _, s := range p.Stages {
		if s.Name == name {
			return s.MaxMessagesPerSecond
		}
	}
	t.Fatalf("no stage %s in %+v", name, p.Stages)
	return 0
}

// TestAPIExample reproduces the status.plan example of docs/api.md figure for figure.
//
// docs/api.md's YAML says producers: 1, but one producer on a 1 Gbit/s link sending 10,000 × 9,028
// bytes/s fills 80.2 % of the usable link, over the 80 % target, so its own ProducerNetwork
// stage (12,461 msgs/s) would be the limit and the bottleneck; the published figures
// (maxMessagesPerSecond 16000, bottleneck None) hold with two producers, which change nothing
// else. TestAPIExampleOneProducer pins the one-producer plan.
func TestAPIExample(t *testing.T) {
	p := mustCompute(t, gen.Pipeline(gen.SetProducers(2)), gen.APITiers())
	ints := []struct {
		name      string
		got, want int64
	}{
		{"brokers", int64(p.Brokers), 3},
		// 4 executors × 5 cores, rounded up to a multiple of the 3 brokers.
		{"partitions", int64(p.Partitions), 21},
		{"executors", int64(p.Executors), 4},
		// 10,000 records/s × 2 copies (spec.elasticsearch.replicas defaults to 1) at 80 % of
		// 8,000 per node: 3.125, so 4 data nodes, and as many shards.
		{"elasticsearchDataNodes", int64(p.ElasticsearchDataNodes), 4},
		{"shards", int64(p.Shards), 4},
		{"minInSyncReplicas", int64(p.MinInSyncReplicas), 2},
		{"linkUsableBytesPerSecond", p.LinkUsableBytesPerSecond, 112500000},
		{"linkPlannedBytesPerSecond", p.LinkPlannedBytesPerSecond, 90000000},
		// Each of the 3 brokers holds 14 of the 42 replicas and leads 7 of the 21 partitions: it
		// receives 90.28 MB/s × 14/21 and sends 2 × 90.28 MB/s × 7/21, the mean of 2/3 × 90.28
		// MB/s (with 20 partitions the busiest held 14 of 40 and led 7 of 20, 5 % over it).
		{"brokerReceiveBytesPerSecond", p.BrokerReceiveBytesPerSecond, 60186666},
		{"brokerSendBytesPerSecond", p.BrokerSendBytesPerSecond, 60186666},
		{"brokerDiskWriteBytesPerSecond", p.BrokerDiskWriteBytesPerSecond, 60186666},
		// 112.5 MB/s ÷ (2/3 × 9,028 B).
		{"KafkaBrokerNetwork", stageCap(t, p, v1alpha1.StageKafkaBrokerNetwork), 18691},
		{"SparkProcessing", stageCap(t, p, v1alpha1.StageSparkProcessing), 16000},
		// 4 nodes × 8,000 shared by 2 copies.
		{"ElasticsearchIndexing", stageCap(t, p, v1alpha1.StageElasticsearchIndexing), 16000},
		{"maxMessagesPerSecond", p.MaxMessagesPerSecond, 16000},
	}
	for _, c := range ints {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if p.Bottleneck != v1alpha1.BottleneckNone || p.Unsatisfied != "" {
		t.Errorf("bottleneck %q (%q), want None", p.Bottleneck, p.Unsatisfied)
	}
	if got := p.ExecutorMemory.Pod.String(); got != "16Gi" {
		t.Errorf("pod = %s, want 16Gi", got)
	}
	for _, s := range p.Storage {
		if s.Role == v1alpha1.RoleSparkShuffleData {
			if s.Tier != "hdd-st1" || s.SizePerReplica.String() != "40Gi" || s.Replicas != 4 || s.MonthlyCost != "8.64" {
				t.Errorf("SparkShuffleData = %+v, want hdd-st1 40Gi × 4 = 8.64", s)
			}
		}
	}
}

func TestAPIExampleOneProducer(t *testing.T) {
	in := gen.Pipeline(gen.SetProducers(2))
	in.Spec.Workload.Producers = 1
	p := mustCompute(t, in, gen.APITiers())
	if got := stageCap(t, p, v1alpha1.StageProducerNetwork); got != 12461 {
		t.Errorf("ProducerNetwork = %d, want 12461", got)
	}
	if p.Bottleneck != v1alpha1.StageProducerNetwork || p.MaxMessagesPerSecond != 12461 {
		t.Errorf("bottleneck %s at %d, want ProducerNetwork at 12461", p.Bottleneck, p.MaxMessagesPerSecond)
	}
	if !strings.Contains(p.Unsatisfied, "spec.workload.producers") {
		t.Errorf("unsatisfied %q does not name spec.workload.producers", p.Unsatisfied)
	}
	if p.Brokers != 3 || p.Executors != 4 {
		t.Errorf("producers changed the counts: brokers %d executors %d", p.Brokers, p.Executors)
	}
}

// measured is the configuration measured in docs/studies.md §1.1: 1 producer, 2 brokers replicating
// to each other on 1 Gbit/s, Spark reading at 20,746 records/s. Spark and Elasticsearch get
// enough capacity that Kafka is what is being measured. The study does not say how many
// partitions the topic had: 12 spread evenly over 2 and 3 brokers, so each broker carries the
// mean share the study's figures are.
func measured(brokers int32) *v1alpha1.AnalyticsPipeline {
	p := gen.Pipeline(gen.SetProducers(2))
	p.Spec.Workload = v1alpha1.WorkloadSpec{
		MessagesPerSecond: 10112, MessageBytes: 9028, ConsumerMessagesPerSecond: 20746, Producers: 1,
	}
	p.Spec.Kafka.Brokers = v1alpha1.Range{Min: brokers, Max: brokers}
	p.Spec.Kafka.Topic.Partitions = 12
	p.Spec.Spark.Executors = v1alpha1.ExecutorsSpec{Min: 5, Max: 5, Cores: 1}
	p.Spec.Elasticsearch.DataNodes = v1alpha1.Range{Min: 5, Max: 5}
	return p
}

func TestDesignBrokerLinkIsTheBottleneck(t *testing.T) {
	within := func(t *testing.T, what string, bytes int64, wantMiB float64) {
		t.Helper()
		if got := float64(bytes) / mib; got < wantMiB-1 || got > wantMiB+1 {
			t.Errorf("%s = %.1f MiB/s, want %.0f ± 1", what, got, wantMiB)
		}
	}
	two := mustCompute(t, measured(2), gen.APITiers())
	within(t, "received per broker", two.BrokerReceiveBytesPerSecond, 87)
	within(t, "sent per broker", two.BrokerSendBytesPerSecond, 133)
	if two.BrokerSendBytesPerSecond <= two.LinkUsableBytesPerSecond {
		t.Errorf("sent %d fits the usable link %d; the study saturated it", two.BrokerSendBytesPerSecond, two.LinkUsableBytesPerSecond)
	}
	if two.Bottleneck != v1alpha1.StageKafkaBrokerNetwork {
		t.Errorf("bottleneck = %s, want KafkaBrokerNetwork (stages %+v)", two.Bottleneck, two.Stages)
	}
	if c := stageCap(t, two, v1alpha1.StageKafkaBrokerNetwork); c >= 10112 {
		t.Errorf("broker stage carries %d msgs/s, want below the workload 10112", c)
	}
	if !strings.Contains(two.Unsatisfied, "spec.kafka.brokers.max (2)") {
		t.Errorf("unsatisfied %q does not explain the broker limit", two.Unsatisfied)
	}

	three := mustCompute(t, measured(3), gen.APITiers())
	if three.BrokerSendBytesPerSecond >= three.LinkUsableBytesPerSecond {
		t.Errorf("with 3 brokers each sends %d, want under the usable link %d", three.BrokerSendBytesPerSecond, three.LinkUsableBytesPerSecond)
	}
	if c := stageCap(t, three, v1alpha1.StageKafkaBrokerNetwork); c <= 10112 {
		t.Errorf("with 3 brokers the broker stage carries %d msgs/s, want above 10112", c)
	}
}

// TestDesignSplitTiers reproduces docs/studies.md §1.3: shuffle data twice the size of spill, on st1
// HDD while spill stays on NVMe, costs half of all-NVMe; all-HDD costs a quarter.
func TestDesignSplitTiers(t *testing.T) {
	sparkCost := func(spill, data string) *big.Rat {
		in := gen.Pipeline(gen.SetProducers(2))
		in.Spec.Spark.Shuffle = v1alpha1.ShuffleSpec{SpillTier: spill, SpillSize: q("100Gi"), DataTier: data, DataSize: qp("200Gi")}
		p := mustCompute(t, in, gen.APITiers())
		sum := new(big.Rat)
		rows := 0
		for _, s := range p.Storage {
			if s.Role == v1alpha1.RoleSparkSpill || s.Role == v1alpha1.RoleSparkShuffleData {
				c, ok := new(big.Rat).SetString(s.MonthlyCost)
				if !ok {
					t.Fatalf("cost %q", s.MonthlyCost)
				}
				sum.Add(sum, c)
				rows++
			}
		}
		if rows != 2 {
			t.Fatalf("want a spill row and a data row, got %d rows", rows)
		}
		return sum
	}
	nvme := sparkCost("nvme-local", "nvme-local")
	split := sparkCost("nvme-local", "hdd-st1")
	hdd := sparkCost("hdd-st1", "hdd-st1")
	ratio := func(a, b *big.Rat) float64 { f, _ := new(big.Rat).Quo(a, b).Float64(); return f }
	if r := ratio(split, nvme); r < 0.48 || r > 0.52 {
		t.Errorf("split/all-NVMe = %.3f, want ≈ 0.5", r)
	}
	if r := ratio(hdd, nvme); r < 0.24 || r > 0.26 {
		t.Errorf("all-HDD/all-NVMe = %.3f, want ≈ 0.25", r)
	}
}

func TestSingleTierCost(t *testing.T) {
	p := mustCompute(t, gen.Pipeline(gen.SetProducers(2)), gen.APITiers())
	// 200Gi×3 + 20Gi×4 + 40Gi×4 + 400Gi×4 = 2440 GiB at 0.216 (NVMe is the fastest tier); 4
	// data nodes, as each record is indexed twice (spec.elasticsearch.replicas defaults to 1).
	if p.SingleTierMonthlyStorageCost != "527.04" {
		t.Errorf("single tier = %s, want 527.04", p.SingleTierMonthlyStorageCost)
	}
	// 129.60 + 17.28 + 8.64 + 345.60
	if p.MonthlyStorageCost != "501.12" {
		t.Errorf("total = %s, want 501.12", p.MonthlyStorageCost)
	}
}

func TestMoneyRoundsHalfUp(t *testing.T) {
	in := gen.Pipeline(gen.SetProducers(2))
	tiers := gen.APITiers()
	tiers[1].Spec.MonthlyPricePerGiB = "0.000125" // 40Gi × 4 × 0.000125 = 0.02; 1Gi × 4 → 0.0005
	in.Spec.Spark.Shuffle.DataSize = qp("1Gi")
	in.Spec.Spark.Executors = v1alpha1.ExecutorsSpec{Min: 4, Max: 4, Cores: 5}
	p := mustCompute(t, in, tiers)
	for _, s := range p.Storage {
		if s.Role == v1alpha1.RoleSparkShuffleData && s.MonthlyCost != "0.00" {
			t.Errorf("0.0005 rounds to %s, want 0.00", s.MonthlyCost)
		}
	}
	in.Spec.Spark.Shuffle.DataSize = qp("10Gi") // 10 × 4 × 0.000125 = 0.005 → 0.01 (half up)
	p = mustCompute(t, in, tiers)
	for _, s := range p.Storage {
		if s.Role == v1alpha1.RoleSparkShuffleData && s.MonthlyCost != "0.01" {
			t.Errorf("0.005 rounds to %s, want 0.01", s.MonthlyCost)
		}
	}
}

// TestDesignMemory checks docs/studies.md §1.2's invariants over the settings the TPC-H study ran
// and the API example.
func TestDesignMemory(t *testing.T) {
	cases := []struct {
		budget, minHeap string
		pageCache, off  int32
	}{
		{"16Gi", "2Gi", 25, 50},
		{"31Gi", "1Gi", 20, 0},
		{"31Gi", "8Gi", 10, 55},
		{"28Gi", "16Gi", 5, 0},
		{"16G", "1Gi", 20, 0}, // not a whole number of MiB
		{"1Gi", "500Mi", 0, 0},
	}
	for _, c := range cases {
		in := gen.Pipeline(gen.SetProducers(2))
		in.Spec.Spark.Memory = v1alpha1.MemorySpec{Budget: q(c.budget), MinHeap: qp(c.minHeap), PageCachePercent: c.pageCache, OffHeapPercent: c.off}
		p := mustCompute(t, in, gen.APITiers())
		checkMemory(t, in.Spec.Spark.Memory, p.ExecutorMemory)
	}
}

func TestMemoryTooSmall(t *testing.T) {
	in := gen.Pipeline(gen.SetProducers(2))
	in.Spec.Spark.Memory.MinHeap = qp("12Gi")
	_, err := plan.Fresh(in, gen.APITiers())
	var fe *plan.FieldError
	if !errors.As(err, &fe) || fe.Field != "spec.spark.memory.minHeap" {
		t.Fatalf("err = %v, want a FieldError on spec.spark.memory.minHeap", err)
	}
	if !strings.Contains(err.Error(), "12Gi") || !strings.Contains(err.Error(), "16Gi") {
		t.Errorf("message %q should quote minHeap and budget", err)
	}
}

func TestDefaults(t *testing.T) {
	in := gen.Pipeline(gen.SetProducers(2))
	in.Spec.Workload.Producers = 0
	in.Spec.Network.EfficiencyPercent = 0
	in.Spec.Network.TargetUtilizationPercent = 0
	in.Spec.Kafka.ReplicationFactor = 0
	in.Spec.Kafka.Topic.Name = ""
	in.Spec.Spark.Executors.Cores = 0
	in.Spec.Spark.Memory.MinHeap = nil
	in.Spec.Spark.Shuffle.DataTier = ""
	in.Spec.Spark.Shuffle.DataSize = nil
	d := plan.Defaults(in)
	s := d.Spec
	if s.Workload.Producers != 1 || s.Network.EfficiencyPercent != 90 || s.Network.TargetUtilizationPercent != 80 ||
		s.Kafka.ReplicationFactor != 3 || s.Spark.Executors.Cores != 1 || s.Spark.Memory.MinHeap.String() != "1Gi" ||
		s.Spark.Shuffle.DataTier != "nvme-local" || s.Spark.Shuffle.DataSize.String() != "20Gi" ||
		s.Workload.ConsumerMessagesPerSecond != 10000 || s.Kafka.Topic.Name != "sensors" {
		t.Errorf("defaults not applied: %+v", s)
	}
	if in.Spec.Spark.Memory.MinHeap != nil || in.Spec.Workload.Producers != 0 {
		t.Error("Defaults modified its argument")
	}
	p := mustCompute(t, in, gen.APITiers())
	if p.ReplicationFactor != 3 || p.MinInSyncReplicas != 2 || p.ExecutorCores != 1 || p.Partitions != p.Executors {
		t.Errorf("plan ignores defaults: %+v", p)
	}
	rows := map[string]v1alpha1.StoragePlacement{}
	for _, r := range p.Storage {
		rows[r.Role] = r
	}
	if r := rows[v1alpha1.RoleSparkShuffleData]; r.Tier != "nvme-local" || r.SizePerReplica.String() != "20Gi" {
		t.Errorf("shuffle data not defaulted to the spill tier and size: %+v", r)
	}
}

func TestComputeDoesNotModifyItsInput(t *testing.T) {
	in := gen.Pipeline(gen.SetProducers(2))
	tiers := gen.APITiers()
	before, beforeTiers := in.DeepCopy(), []v1alpha1.StorageTier{*tiers[0].DeepCopy(), *tiers[1].DeepCopy()}
	mustCompute(t, in, tiers)
	if !equalJSON(t, before, in) || !equalJSON(t, beforeTiers, tiers) {
		t.Error("Compute modified its input")
	}
}

func TestFixedPartitionsAndShardsAreKept(t *testing.T) {
	in := gen.Pipeline(gen.SetProducers(2))
	in.Spec.Kafka.Topic.Partitions = 7
	in.Spec.Elasticsearch.Shards = 5
	p := mustCompute(t, in, gen.APITiers())
	if p.Partitions != 7 || p.Shards != 5 {
		t.Errorf("partitions %d shards %d, want 7 and 5", p.Partitions, p.Shards)
	}
}

func TestUnsatisfied(t *testing.T) {
	cases := []struct {
		name       string
		edit       func(*v1alpha1.AnalyticsPipeline, []v1alpha1.StorageTier)
		bottleneck string
		mentions   []string
	}{
		{"brokers", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Workload.MessagesPerSecond = 30000
			p.Spec.Workload.Producers = 10
			p.Spec.Spark.Executors.Max = 100
			p.Spec.Elasticsearch.DataNodes.Max = 100
		}, v1alpha1.StageKafkaBrokerNetwork, []string{"spec.kafka.brokers.max (6)", "90 MB/s", "7 are needed", "compression"}},
		// One partition of 45 MB/s, replicated once, sends 90.28 MB/s from its leader: over the
		// 90 MB/s planned per link on any number of brokers.
		{"one partition over the link", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Workload.MessagesPerSecond = 5000
			p.Spec.Kafka.ReplicationFactor = 2
			p.Spec.Kafka.Topic.Partitions = 1
		}, v1alpha1.StageKafkaBrokerNetwork, []string{"spec.kafka.brokers.max (6)", "no count is enough",
			"one of the 1 partitions", "spec.kafka.topic.partitions"}},
		{"disk", func(p *v1alpha1.AnalyticsPipeline, ts []v1alpha1.StorageTier) {
			p.Spec.Kafka.Storage.Tier = "hdd-st1"
			ts[1].Spec.WriteBytesPerSecond = q("20M")
		}, v1alpha1.StageKafkaDisk, []string{"log writes", `"hdd-st1"`, "faster tier"}},
		{"executors", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Spark.Executors.Max = 3
		}, v1alpha1.StageSparkProcessing, []string{"spec.spark.executors.max (3)", "4 executors are needed"}},
		{"data nodes", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Elasticsearch.MessagesPerSecondPerNode = 1000
		}, v1alpha1.StageElasticsearchIndexing, []string{"spec.elasticsearch.dataNodes.max (6)", "each 2 times", "25 data nodes"}},
		{"data nodes without replicas", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Elasticsearch.MessagesPerSecondPerNode = 1000
			p.Spec.Elasticsearch.Replicas = ptr(int32(0))
		}, v1alpha1.StageElasticsearchIndexing, []string{"spec.elasticsearch.dataNodes.max (6)", "each 1 times", "13 data nodes"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, tiers := gen.Pipeline(gen.SetProducers(2)), gen.APITiers()
			c.edit(in, tiers)
			p := mustCompute(t, in, tiers)
			if p.Bottleneck != c.bottleneck {
				t.Errorf("bottleneck = %s, want %s (%+v)", p.Bottleneck, c.bottleneck, p.Stages)
			}
			for _, m := range c.mentions {
				if !strings.Contains(p.Unsatisfied, m) {
					t.Errorf("unsatisfied %q lacks %q", p.Unsatisfied, m)
				}
			}
			if strings.Contains(p.Unsatisfied, plan.ReasonSeparator) {
				t.Errorf("one reason expected, and a reason must not contain the separator: %q", p.Unsatisfied)
			}
			if strings.Contains(p.Unsatisfied, "replication") && !strings.Contains(p.Unsatisfied, "data loss") {
				t.Errorf("unsatisfied suggests touching replication without a data-loss warning: %q", p.Unsatisfied)
			}
		})
	}
}
