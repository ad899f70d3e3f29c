package plan_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// TestInvalidInput feeds Compute what admission would reject: each must come back as a
// FieldError naming the field, never a panic or a plan.
func TestInvalidInput(t *testing.T) {
	cases := []struct {
		field string
		edit  func(*v1alpha1.AnalyticsPipeline, []v1alpha1.StorageTier)
	}{
		{"spec.workload.messagesPerSecond", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Workload.MessagesPerSecond = 0
		}},
		{"spec.workload.messagesPerSecond", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Workload.MessagesPerSecond = -5
		}},
		{"spec.workload.messageBytes", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Workload.MessageBytes = 1 << 40
		}},
		{"spec.workload.consumerMessagesPerSecond", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Workload.ConsumerMessagesPerSecond = -1
		}},
		{"spec.network.linkBitsPerSecond", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Network.LinkBitsPerSecond = q("0")
		}},
		{"spec.network.linkBitsPerSecond", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			// A valid Quantity whose expansion has a billion digits: refused before any use.
			p.Spec.Network.LinkBitsPerSecond = q("1e999999999")
		}},
		{"spec.spark.memory.budget", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Spark.Memory.Budget = q("1e999999999")
		}},
		{"spec.network.efficiencyPercent", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Network.EfficiencyPercent = 101
		}},
		// Issue 29: names the upstream operators refuse in the children's names (a DNS
		// subdomain, which the API server accepts for a custom resource, is not a DNS-1035 label).
		{"metadata.name", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) { p.Name = "sen.sors" }},
		{"metadata.name", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) { p.Name = "1sensors" }},
		{"metadata.name", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) { p.Name = "sensors-" }},
		{"metadata.name", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) { p.Name = strings.Repeat("a", 24) }},
		// Issue 15: the caps of api/v1alpha1/bounds.go.
		{"spec.network.linkBitsPerSecond", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Network.LinkBitsPerSecond = q("1e30")
		}},
		{"spec.kafka.storage.size", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Kafka.Storage.Size = q("0.5")
		}},
		{"spec.kafka.minInSyncReplicas", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Kafka.MinInSyncReplicas = ptr(p.Spec.Kafka.ReplicationFactor + 1)
		}},
		{"spec.kafka.minInSyncReplicas", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Kafka.MinInSyncReplicas = ptr(int32(0))
		}},
		{"spec.kafka.storage.size", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Kafka.Storage.Size = q("8Ei")
		}},
		{"spec.elasticsearch.storage.size", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Elasticsearch.Storage.Size = q("1m")
		}},
		{"spec.spark.shuffle.spillSize", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Spark.Shuffle.SpillSize = q("2Pi")
		}},
		{"spec.kafka.topic.partitions", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Spark.Executors = v1alpha1.ExecutorsSpec{Min: 1, Max: 10000, Cores: 256}
		}},
		{"spec.kafka.rackTopologyKey", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Kafka.RackTopologyKey = "not a label key!"
		}},
		{"spec.kafka.version", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Kafka.Version = "99.99.99"
		}},
		{"spec.spark.image", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Spark.Image = "::garbage::"
		}},
		{"spec.spark.mainClass", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Spark.MainApplicationFile, p.Spec.Spark.MainClass = "", "example.SensorJob"
		}},
		{"spec.writeBytesPerSecond", func(_ *v1alpha1.AnalyticsPipeline, ts []v1alpha1.StorageTier) {
			ts[0].Spec.WriteBytesPerSecond = q("2T")
		}},
		{"spec.network.targetUtilizationPercent", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Network.TargetUtilizationPercent = -3
		}},
		{"spec.kafka.brokers.min", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Kafka.Brokers = v1alpha1.Range{Min: 5, Max: 3}
		}},
		{"spec.kafka.replicationFactor", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Kafka.ReplicationFactor = 4
			p.Spec.Kafka.Brokers = v1alpha1.Range{Min: 2, Max: 3}
		}},
		{"spec.kafka.storage.size", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Kafka.Storage.Size = q("-1Gi")
		}},
		{"spec.spark.executors.min", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Spark.Executors = v1alpha1.ExecutorsSpec{Min: 11, Max: 10, Cores: 1}
		}},
		{"spec.spark.messagesPerSecondPerExecutor", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Spark.MessagesPerSecondPerExecutor = 0
		}},
		{"spec.spark.memory.budget", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Spark.Memory.Budget = q("512Mi")
		}},
		{"spec.spark.memory.pageCachePercent", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Spark.Memory.PageCachePercent = 81
		}},
		{"spec.spark.memory.offHeapPercent", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Spark.Memory.OffHeapPercent = 91
		}},
		{"spec.spark.memory.minHeap", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Spark.Memory.MinHeap = qp("16Gi")
		}},
		{"spec.spark.memory", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			// Admission accepts this (the heap, 128Mi, is above minHeap), but Spark refuses
			// executors with less than 450Mi.
			p.Spec.Spark.Memory = v1alpha1.MemorySpec{Budget: q("1Gi"), MinHeap: qp("100Mi"), PageCachePercent: 50}
		}},
		{"spec.spark.shuffle.dataSize", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Spark.Shuffle.DataSize = qp("0")
		}},
		{"spec.elasticsearch.dataNodes.max", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Elasticsearch.DataNodes = v1alpha1.Range{Min: 1, Max: 1001}
		}},
		{"spec.elasticsearch.shards", func(p *v1alpha1.AnalyticsPipeline, _ []v1alpha1.StorageTier) {
			p.Spec.Elasticsearch.Shards = 2000
		}},
		{"spec.monthlyPricePerGiB", func(_ *v1alpha1.AnalyticsPipeline, ts []v1alpha1.StorageTier) {
			ts[1].Spec.MonthlyPricePerGiB = "cheap"
		}},
		{"spec.writeBytesPerSecond", func(_ *v1alpha1.AnalyticsPipeline, ts []v1alpha1.StorageTier) {
			ts[0].Spec.WriteBytesPerSecond = q("0")
		}},
		{"spec.readBytesPerSecond", func(_ *v1alpha1.AnalyticsPipeline, ts []v1alpha1.StorageTier) {
			ts[0].Spec.ReadBytesPerSecond = q("8e99999999")
		}},
		{"spec.medium", func(_ *v1alpha1.AnalyticsPipeline, ts []v1alpha1.StorageTier) {
			ts[0].Spec.Medium = "Tape"
		}},
	}
	for _, c := range cases {
		t.Run(c.field, func(t *testing.T) {
			in, tiers := gen.Pipeline(gen.SetProducers(2)), gen.APITiers()
			c.edit(in, tiers)
			_, err := plan.Fresh(in, tiers)
			var fe *plan.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a FieldError", err)
			}
			if fe.Field != c.field {
				t.Errorf("field = %s, want %s (%v)", fe.Field, c.field, err)
			}
			if !strings.HasPrefix(err.Error(), c.field) && !strings.Contains(err.Error(), ": "+c.field+": ") {
				t.Errorf("message %q does not lead with the field", err)
			}
			if plan.IsMissingTier(err) {
				t.Error("an invalid spec reported as a missing tier")
			}
		})
	}
}

func TestMissingTier(t *testing.T) {
	in := gen.Pipeline(gen.SetProducers(2))
	_, err := plan.Fresh(in, gen.APITiers()[:1]) // no hdd-st1
	var missing *plan.MissingTierError
	if !errors.As(err, &missing) {
		t.Fatalf("err = %v, want a MissingTierError", err)
	}
	if missing.Field != "spec.spark.shuffle.dataTier" || missing.Tier != "hdd-st1" {
		t.Errorf("got %+v", missing)
	}
	if want := `spec.spark.shuffle.dataTier: StorageTier "hdd-st1" not found`; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	var fe *plan.FieldError
	if errors.As(err, &fe) {
		t.Error("a missing tier must not look like an invalid spec")
	}
}

func TestInvalidSpecWinsOverMissingTier(t *testing.T) {
	in := gen.Pipeline(gen.SetProducers(2))
	in.Spec.Workload.MessageBytes = 0
	_, err := plan.Fresh(in, nil)
	if plan.IsMissingTier(err) {
		t.Errorf("err = %v: an invalid spec stays invalid whatever tiers appear", err)
	}
}

func TestNilPipeline(t *testing.T) {
	if _, err := plan.Fresh(nil, nil); err == nil {
		t.Error("want an error for a nil pipeline")
	}
}
