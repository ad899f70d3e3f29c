package plan_test

import (
	"errors"
	"math/big"
	"math/rand"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// realTiers are the samples' tiers with the real constraints: a local NVMe tier of 400Gi disks
// and an st1 tier with AWS's minimum size and per-TiB throughput.
func realTiers(localVolumes int32) []v1alpha1.StorageTier {
	return []v1alpha1.StorageTier{
		gen.NVMeTier(gen.SetLocal(nil, "400Gi", "/mnt/nvme0"), func(t *v1alpha1.StorageTier) { t.Generation = 1 }, gen.SetVolumes(localVolumes)),
		gen.HDDTier(gen.SetMinVolumeSize("125Gi"), gen.SetThroughputPerTiB("40M", "40M")),
	}
}

func role(p v1alpha1.Plan, name string) v1alpha1.StoragePlacement {
	for _, r := range p.Storage {
		if r.Role == name {
			return r
		}
	}
	return v1alpha1.StoragePlacement{}
}

func TestClaimLargerThanLocalDiskIsInvalid(t *testing.T) {
	in := gen.Pipeline(gen.SetProducers(2))
	in.Spec.Elasticsearch.Storage.Size = q("500Gi")
	_, err := plan.Fresh(in, realTiers(100))
	var fe *plan.FieldError
	if !errors.As(err, &fe) || fe.Field != "spec.elasticsearch.storage.size" || !strings.Contains(fe.Detail, "400Gi") {
		t.Fatalf("want a FieldError on spec.elasticsearch.storage.size naming 400Gi, got %v", err)
	}
}

func TestLocalVolumesCountedAndPricedWhole(t *testing.T) {
	in := gen.Pipeline(gen.SetProducers(2))
	in.Spec.Elasticsearch.Storage.Size = q("300Gi")
	p := mustCompute(t, in, realTiers(1))
	if !strings.Contains(p.StorageUnsatisfied, `StorageTier "nvme-local" has 1 local volumes`) {
		t.Fatalf("storageUnsatisfied %q does not report the missing volumes", p.StorageUnsatisfied)
	}
	if len(p.LocalVolumes) != 1 || p.LocalVolumes[0].Available == nil || *p.LocalVolumes[0].Available != 1 {
		t.Fatalf("local volumes %+v", p.LocalVolumes)
	}
	es := role(p, v1alpha1.RoleElasticsearchData)
	if es.VolumeSize == nil || es.VolumeSize.Cmp(q("400Gi")) != 0 {
		t.Fatalf("ES volume %v, want the whole 400Gi disk", es.VolumeSize)
	}
	// Without a status the count is unknown, not zero.
	tiers := realTiers(0)
	tiers[0].Status = v1alpha1.StorageTierStatus{}
	p = mustCompute(t, in, tiers)
	if p.StorageUnsatisfied != "" || p.LocalVolumes[0].Available != nil {
		t.Fatalf("unknown count reported as %q, %+v", p.StorageUnsatisfied, p.LocalVolumes)
	}
}

func TestMinVolumeSizeAndScaledThroughput(t *testing.T) {
	in := gen.Pipeline(gen.SetProducers(2))
	in.Spec.Spark.Shuffle.DataTier = "hdd-st1"
	in.Spec.Spark.Shuffle.DataSize = ptrQ("40Gi")
	in.Spec.Kafka.Storage = v1alpha1.StorageRef{Tier: "hdd-st1", Size: q("125Gi")}
	in.Spec.Elasticsearch.Storage.Size = q("400Gi")
	p := mustCompute(t, in, realTiers(100))
	// The shuffle data claim is rounded up to 125Gi, and then sized up for the executors' writes
	// (shuffledisk_test.go).
	data := role(p, v1alpha1.RoleSparkShuffleData)
	if data.SizePerReplica.Cmp(q("125Gi")) < 0 {
		t.Fatalf("shuffle data claim %s, want at least st1's 125Gi", data.SizePerReplica.String())
	}
	// 125Gi at 40 MB/s per TiB is 4.88 MB/s: the Kafka disk stage must see that, not 500M.
	var disk int64
	for _, s := range p.Stages {
		if s.Name == v1alpha1.StageKafkaDisk {
			disk = s.MaxMessagesPerSecond
		}
	}
	perBroker := 40e6 * 125.0 / 1024 // bytes/s
	// The busiest broker writes ⌈P·R/B⌉ replicas of the P partitions.
	replicas := (p.Partitions*p.ReplicationFactor + p.Brokers - 1) / p.Brokers
	want := int64(perBroker * float64(p.Partitions) / float64(in.Spec.Workload.MessageBytes*int64(replicas)))
	if disk > want+1 || disk < want-1 {
		t.Fatalf("KafkaDisk capacity %d msgs/s, want about %d (scaled st1 bandwidth)", disk, want)
	}
}

func TestKafkaRetentionThatDoesNotFit(t *testing.T) {
	in := gen.Pipeline(gen.SetProducers(2))
	in.Spec.Kafka.Retention = &metav1.Duration{Duration: 10000 * time.Hour}
	p := mustCompute(t, in, gen.APITiers())
	if !strings.Contains(p.StorageUnsatisfied, "spec.kafka.retention") || !strings.Contains(p.StorageUnsatisfied, "hours fit") {
		t.Fatalf("storageUnsatisfied %q", p.StorageUnsatisfied)
	}
	in.Spec.Kafka.Retention = &metav1.Duration{Duration: 10 * time.Minute}
	p = mustCompute(t, in, gen.APITiers())
	if p.StorageUnsatisfied != "" || p.Retention.KafkaRetentionMs != 600000 || role(p, v1alpha1.RoleKafkaLog).RetentionSeconds != 600 {
		t.Fatalf("10m retention: %q, %+v", p.StorageUnsatisfied, p.Retention)
	}
}

// Over random valid pipelines on the real tiers: what a broker retains fits its volume, every
// claim fits its volume, a data node stays under the high watermark, and the cost is at least
// the whole volumes.
func TestPropertyRetainedDataFits(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	checked := 0
	for i := 0; i < 3000; i++ {
		in := randomPipeline(rng)
		in.Spec.Elasticsearch.Storage.Size = *resource.NewQuantity(rng.Int63n(400<<30)+1<<30, resource.BinarySI)
		in.Spec.Kafka.Storage.Size = *resource.NewQuantity(rng.Int63n(400<<30)+1<<30, resource.BinarySI)
		p, err := plan.Fresh(in, realTiers(1000))
		if err != nil {
			continue // memory splits and claims larger than a disk are refused
		}
		checked++
		r := p.Retention
		log := role(p, v1alpha1.RoleKafkaLog)
		if r.KafkaRetentionBytes > 0 {
			held := (int64(p.Partitions)*int64(p.ReplicationFactor) + int64(p.Brokers) - 1) / int64(p.Brokers)
			worst := held*(r.KafkaRetentionBytes+2*r.KafkaSegmentBytes) + 300*p.BrokerDiskWriteBytesPerSecond
			if worst > log.VolumeSize.Value() {
				t.Fatalf("a broker may hold %d bytes on a %s volume: %+v", worst, log.VolumeSize.String(), r)
			}
		}
		es := role(p, v1alpha1.RoleElasticsearchData)
		if r.ElasticsearchDeleteAfterSeconds > 0 {
			held := es.WriteBytesPerSecond * (r.ElasticsearchRolloverSeconds + r.ElasticsearchDeleteAfterSeconds + 1200)
			if held*100 > es.VolumeSize.Value()*90 {
				t.Fatalf("a data node may hold %d bytes on %s, over the 90%% watermark", held, es.VolumeSize.String())
			}
		}
		sum := new(big.Rat)
		for _, row := range p.Storage {
			if row.SizePerReplica.Cmp(*row.VolumeSize) > 0 {
				t.Fatalf("%s claims %s of a %s volume", row.Role, row.SizePerReplica.String(), row.VolumeSize.String())
			}
			price := map[string]string{"nvme-local": "0.216", "hdd-st1": "0.054"}[row.Tier]
			pr, _ := new(big.Rat).SetString(price)
			v := new(big.Rat).SetInt(row.VolumeSize.AsDec().UnscaledBig())
			v.Quo(v, new(big.Rat).SetInt64(1<<30))
			sum.Add(sum, v.Mul(v, pr).Mul(v, new(big.Rat).SetInt64(int64(row.Replicas))))
		}
		cost, _ := new(big.Rat).SetString(p.MonthlyStorageCost)
		slack := new(big.Rat).SetFrac64(int64(len(p.Storage)), 200) // half a cent of rounding per row
		if cost.Add(cost, slack).Cmp(sum) < 0 {
			t.Fatalf("cost %s < whole volumes %s", p.MonthlyStorageCost, sum.FloatString(4))
		}
	}
	if checked < 500 {
		t.Errorf("only %d pipelines planned", checked)
	}
}

func ptrQ(s string) *resource.Quantity { v := resource.MustParse(s); return &v }

func TestMetadataVolumesOffTheLocalDisks(t *testing.T) {
	in := gen.Pipeline(gen.SetProducers(2))
	in.Spec.Elasticsearch.Storage.Size = q("300Gi")
	p := mustCompute(t, in, realTiers(100))
	if len(p.MetadataVolumes) != 2 {
		t.Fatalf("metadata volumes %+v", p.MetadataVolumes)
	}
	for _, v := range p.MetadataVolumes {
		if v.StorageClassName != "" || v.Tier != "" || v.Size.Cmp(q("10Gi")) != 0 || v.Replicas != 3 {
			t.Errorf("default %s volume %+v, want 3 × 10Gi on the default class", v.Role, v)
		}
	}
	base := p.LocalVolumes[0].Claims // brokers + executors ×1 (spill) + data nodes
	// Named on the local tier, each controller takes a whole disk and is counted.
	in.Spec.Kafka.Controllers = &v1alpha1.KafkaControllersSpec{Storage: v1alpha1.MetadataStorage{Tier: "nvme-local"}}
	p = mustCompute(t, in, realTiers(100))
	if got := p.LocalVolumes[0].Claims; got != base+3 {
		t.Errorf("local claims %d, want %d + 3 controllers", got, base)
	}
	if p.MetadataVolumes[0].StorageClassName != "strata-nvme-local" {
		t.Errorf("controllers' class %q", p.MetadataVolumes[0].StorageClassName)
	}
	// A tier that does not exist is waited for, like the data tiers.
	in.Spec.Elasticsearch.Masters = &v1alpha1.ElasticsearchMastersSpec{Storage: v1alpha1.MetadataStorage{Tier: "gone"}}
	if _, err := plan.Fresh(in, realTiers(100)); !plan.IsMissingTier(err) {
		t.Errorf("missing masters' tier: %v", err)
	}
}

// TestKafkaRetentionUnderCruiseControlsDiskThreshold: what a broker keeps at full retention
// (its replicas at retention.bytes plus two segments each, plus a retention check's writes)
// stays under 75 % of the claim size Strimzi declares to Cruise Control as its disk capacity
// (Cruise Control refuses every rebalance that leaves a broker above 80 % of it), and under
// 85 % of the volume it really gets. The sample's 200Gi claims on 400Gi local disks were
// planned to fill 85 % of the disk: 340Gi against a declared 200Gi.
func TestKafkaRetentionUnderCruiseControlsDiskThreshold(t *testing.T) {
	for _, c := range []struct {
		name, claim string
		volume      string // what the claim really gets
	}{
		{"sample: 200Gi claims on 400Gi local disks", "200Gi", "400Gi"},
		{"claims of the whole disk", "400Gi", "400Gi"},
		{"small claims", "50Gi", "400Gi"},
	} {
		in := gen.Pipeline(gen.SetProducers(2))
		in.Spec.Kafka.Storage.Size = q(c.claim)
		p := mustCompute(t, in, realTiers(100))
		held := (int64(p.Partitions)*int64(p.ReplicationFactor) + int64(p.Brokers) - 1) / int64(p.Brokers)
		keeps := held*(p.Retention.KafkaRetentionBytes+2*p.Retention.KafkaSegmentBytes) + 300*p.BrokerReceiveBytesPerSecond
		claim, volume := q(c.claim), q(c.volume)
		if limit := claim.Value() * 75 / 100; keeps > limit {
			t.Errorf("%s: a broker keeps %s, over 75%% of the declared %s (%s)", c.name,
				resource.NewQuantity(keeps, resource.BinarySI), c.claim, resource.NewQuantity(limit, resource.BinarySI))
		}
		if limit := volume.Value() * 85 / 100; keeps > limit {
			t.Errorf("%s: a broker keeps %s, over 85%% of its %s volume", c.name, resource.NewQuantity(keeps, resource.BinarySI), c.volume)
		}
		if keeps < claim.Value()*60/100 {
			t.Errorf("%s: a broker keeps only %s of a %s claim: retention wastes the disk", c.name,
				resource.NewQuantity(keeps, resource.BinarySI), c.claim)
		}
	}
}
