package v1alpha1_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// invalid is one input admission must reject, and the field its message must name.
type invalid struct {
	name   string
	kind   string // AnalyticsPipeline (the sample "sensors") or StorageTier (the sample "nvme-local")
	change map[string]any
	want   string
}

var invalidInputs = []invalid{
	{"zero ingest", "AnalyticsPipeline", map[string]any{"spec.workload.messagesPerSecond": int64(0)}, "spec.workload.messagesPerSecond"},
	{"negative record size", "AnalyticsPipeline", map[string]any{"spec.workload.messageBytes": int64(-1)}, "spec.workload.messageBytes"},
	{"ingest missing", "AnalyticsPipeline", map[string]any{"spec.workload.messagesPerSecond": nil}, "spec.workload.messagesPerSecond: Required"},
	{"negative consumer rate", "AnalyticsPipeline", map[string]any{"spec.workload.consumerMessagesPerSecond": int64(-5)}, "spec.workload.consumerMessagesPerSecond"},
	{"no producers", "AnalyticsPipeline", map[string]any{"spec.workload.producers": int64(0)}, "spec.workload.producers"},
	{"efficiency 0", "AnalyticsPipeline", map[string]any{"spec.network.efficiencyPercent": int64(0)}, "spec.network.efficiencyPercent"},
	{"target over 100", "AnalyticsPipeline", map[string]any{"spec.network.targetUtilizationPercent": int64(101)}, "spec.network.targetUtilizationPercent"},
	{"zero link", "AnalyticsPipeline", map[string]any{"spec.network.linkBitsPerSecond": "0"}, "spec.network.linkBitsPerSecond"},
	{"unparseable link", "AnalyticsPipeline", map[string]any{"spec.network.linkBitsPerSecond": "fast"}, "spec.network.linkBitsPerSecond"},
	{"replication above brokers.max", "AnalyticsPipeline", map[string]any{"spec.kafka.replicationFactor": int64(4), "spec.kafka.brokers.max": int64(3)}, "spec.kafka.replicationFactor must not exceed spec.kafka.brokers.max"},
	{"replication above 5", "AnalyticsPipeline", map[string]any{"spec.kafka.replicationFactor": int64(6)}, "spec.kafka.replicationFactor"},
	{"brokers min above max", "AnalyticsPipeline", map[string]any{"spec.kafka.brokers.min": int64(5), "spec.kafka.brokers.max": int64(3)}, "spec.kafka.brokers: Invalid value"},
	{"brokers min 0", "AnalyticsPipeline", map[string]any{"spec.kafka.brokers.min": int64(0)}, "spec.kafka.brokers.min"},
	{"empty Kafka tier", "AnalyticsPipeline", map[string]any{"spec.kafka.storage.tier": ""}, "spec.kafka.storage.tier"},
	{"zero Kafka volume", "AnalyticsPipeline", map[string]any{"spec.kafka.storage.size": "0"}, "spec.kafka.storage.size"},
	{"negative partitions", "AnalyticsPipeline", map[string]any{"spec.kafka.topic.partitions": int64(-1)}, "spec.kafka.topic.partitions"},
	{"bad topic name", "AnalyticsPipeline", map[string]any{"spec.kafka.topic.name": "bad name!"}, "spec.kafka.topic.name"},
	{"bad Kafka version", "AnalyticsPipeline", map[string]any{"spec.kafka.version": "latest"}, "spec.kafka.version"},
	{"empty image", "AnalyticsPipeline", map[string]any{"spec.spark.image": ""}, "spec.spark.image"},
	{"executors min above max", "AnalyticsPipeline", map[string]any{"spec.spark.executors.min": int64(11)}, "spec.spark.executors.min must be less than or equal to spec.spark.executors.max"},
	{"zero cores", "AnalyticsPipeline", map[string]any{"spec.spark.executors.cores": int64(0)}, "spec.spark.executors.cores"},
	{"zero executor rate", "AnalyticsPipeline", map[string]any{"spec.spark.messagesPerSecondPerExecutor": int64(0)}, "spec.spark.messagesPerSecondPerExecutor"},
	{"minHeap above budget", "AnalyticsPipeline", map[string]any{"spec.spark.memory.minHeap": "20Gi"}, "spec.spark.memory.minHeap must be less than spec.spark.memory.budget"},
	{"page cache over 80%", "AnalyticsPipeline", map[string]any{"spec.spark.memory.pageCachePercent": int64(81)}, "spec.spark.memory.pageCachePercent"},
	{"off-heap over 90%", "AnalyticsPipeline", map[string]any{"spec.spark.memory.offHeapPercent": int64(91)}, "spec.spark.memory.offHeapPercent"},
	{"no room for the heap", "AnalyticsPipeline", map[string]any{"spec.spark.memory.pageCachePercent": int64(80), "spec.spark.memory.offHeapPercent": int64(90)}, "leave no room for minHeap"},
	{"minHeap below Spark's minimum", "AnalyticsPipeline", map[string]any{"spec.spark.memory.minHeap": "256Mi"}, "spec.spark.memory.minHeap must be at least 450Mi"},
	{"budget too small", "AnalyticsPipeline", map[string]any{"spec.spark.memory.budget": "500Mi", "spec.spark.memory.minHeap": "450Mi"}, "spec.spark.memory.budget must be more than 512Mi"},
	{"empty spill tier", "AnalyticsPipeline", map[string]any{"spec.spark.shuffle.spillTier": ""}, "spec.spark.shuffle.spillTier"},
	{"negative spill size", "AnalyticsPipeline", map[string]any{"spec.spark.shuffle.spillSize": "-1Gi"}, "spec.spark.shuffle.spillSize"},
	{"zero shuffle data size", "AnalyticsPipeline", map[string]any{"spec.spark.shuffle.dataSize": "0"}, "spec.spark.shuffle.dataSize"},
	{"data nodes min above max", "AnalyticsPipeline", map[string]any{"spec.elasticsearch.dataNodes.min": int64(7)}, "spec.elasticsearch.dataNodes: Invalid value"},
	{"even master count", "AnalyticsPipeline", map[string]any{"spec.elasticsearch.masterNodes": int64(2)}, "spec.elasticsearch.masterNodes"},
	{"zero indexing rate", "AnalyticsPipeline", map[string]any{"spec.elasticsearch.messagesPerSecondPerNode": int64(0)}, "spec.elasticsearch.messagesPerSecondPerNode"},
	{"negative shards", "AnalyticsPipeline", map[string]any{"spec.elasticsearch.shards": int64(-1)}, "spec.elasticsearch.shards"},
	{"autoscaling without Prometheus", "AnalyticsPipeline", map[string]any{"spec.autoscaling.enabled": true, "spec.autoscaling.prometheusURL": nil}, "spec.autoscaling.prometheusURL is required"},
	{"Prometheus URL not http", "AnalyticsPipeline", map[string]any{"spec.autoscaling.prometheusURL": "ftp://prometheus:9090"}, "spec.autoscaling.prometheusURL"},
	{"interval too short", "AnalyticsPipeline", map[string]any{"spec.autoscaling.intervalSeconds": int64(1)}, "spec.autoscaling.intervalSeconds"},
	{"negative cool-down", "AnalyticsPipeline", map[string]any{"spec.autoscaling.cooldownSeconds": int64(-1)}, "spec.autoscaling.cooldownSeconds"},
	{"query too long", "AnalyticsPipeline", map[string]any{"spec.autoscaling.queries.consumerLag": strings.Repeat("x", 4097)}, "spec.autoscaling.queries.consumerLag"},
	{"unknown query signal", "AnalyticsPipeline", map[string]any{"spec.autoscaling.queries.lagg": "up"}, `unknown field "spec.autoscaling.queries.lagg"`},
	{"unknown reclaim policy", "AnalyticsPipeline", map[string]any{"spec.volumeReclaimPolicy": "Keep"}, "spec.volumeReclaimPolicy"},
	{"misspelt field", "AnalyticsPipeline", map[string]any{"spec.kafka.brokerz": int64(3)}, `unknown field "spec.kafka.brokerz"`},
	{"name too long", "AnalyticsPipeline", map[string]any{"metadata.name": strings.Repeat("a", 24)}, "metadata.name must be at most 23 characters"},
	{"unknown medium", "StorageTier", map[string]any{"spec.medium": "Tape"}, "spec.medium"},
	{"empty class", "StorageTier", map[string]any{"spec.storageClassName": ""}, "spec.storageClassName"},
	{"zero read bandwidth", "StorageTier", map[string]any{"spec.readBytesPerSecond": "0"}, "spec.readBytesPerSecond"},
	{"write bandwidth missing", "StorageTier", map[string]any{"spec.writeBytesPerSecond": nil}, "spec.writeBytesPerSecond: Required"},
	{"negative price", "StorageTier", map[string]any{"spec.monthlyPricePerGiB": "-0.1"}, "spec.monthlyPricePerGiB"},
	{"price not a number", "StorageTier", map[string]any{"spec.monthlyPricePerGiB": "cheap"}, "spec.monthlyPricePerGiB"},
	{"no local paths", "StorageTier", map[string]any{"spec.local.paths": []any{}}, "spec.local.paths"},
	{"relative local path", "StorageTier", map[string]any{"spec.local.paths": []any{"mnt/nvme0"}}, "spec.local.paths: every path must be absolute"},
	{"zero local capacity", "StorageTier", map[string]any{"spec.local.capacityPerPath": "0"}, "spec.local.capacityPerPath"},
}

// TestInvalidRejected submits each invalid input (as a dry run) and checks that admission rejects
// it with a message naming the field.
func TestInvalidRejected(t *testing.T) {
	if len(invalidInputs) < 20 {
		t.Fatalf("the issue asks for at least 20 invalid inputs, have %d", len(invalidInputs))
	}
	for _, tc := range invalidInputs {
		t.Run(tc.name, func(t *testing.T) {
			var u *unstructured.Unstructured
			if tc.kind == "StorageTier" {
				u = sample(t, "StorageTier", "nvme-local")
			} else {
				u = pipeline(t)
			}
			for path, v := range tc.change {
				set(u, path, v)
			}
			err := k8s.Create(context.Background(), u, client.DryRunAll)
			if err == nil {
				t.Fatalf("accepted; want a rejection naming %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("rejected, but the message does not name %q:\n%v", tc.want, err)
			}
		})
	}
}
