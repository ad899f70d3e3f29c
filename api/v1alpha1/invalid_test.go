package v1alpha1_test

import (
	"context"
	"fmt"
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
	{"min.insync above replication", "AnalyticsPipeline", map[string]any{"spec.kafka.replicationFactor": int64(2), "spec.kafka.minInSyncReplicas": int64(3)}, "spec.kafka.minInSyncReplicas must not exceed spec.kafka.replicationFactor"},
	{"min.insync 0", "AnalyticsPipeline", map[string]any{"spec.kafka.minInSyncReplicas": int64(0)}, "spec.kafka.minInSyncReplicas"},
	{"brokers min above max", "AnalyticsPipeline", map[string]any{"spec.kafka.brokers.min": int64(5), "spec.kafka.brokers.max": int64(3)}, "spec.kafka.brokers: Invalid value"},
	{"brokers min 0", "AnalyticsPipeline", map[string]any{"spec.kafka.brokers.min": int64(0)}, "spec.kafka.brokers.min"},
	{"empty Kafka tier", "AnalyticsPipeline", map[string]any{"spec.kafka.storage.tier": ""}, "spec.kafka.storage.tier"},
	{"zero Kafka volume", "AnalyticsPipeline", map[string]any{"spec.kafka.storage.size": "0"}, "spec.kafka.storage.size"},
	{"negative partitions", "AnalyticsPipeline", map[string]any{"spec.kafka.topic.partitions": int64(-1)}, "spec.kafka.topic.partitions"},
	{"bad topic name", "AnalyticsPipeline", map[string]any{"spec.kafka.topic.name": "bad name!"}, "spec.kafka.topic.name"},
	{"bad Kafka version", "AnalyticsPipeline", map[string]any{"spec.kafka.version": "latest"}, "spec.kafka.version"},
	{"empty image", "AnalyticsPipeline", map[string]any{"spec.spark.image": ""}, "spec.spark.image"},
	{"mainClass without mainApplicationFile", "AnalyticsPipeline", map[string]any{"spec.spark.mainClass": "example.SensorJob", "spec.spark.mainApplicationFile": nil}, "spec.spark.mainClass"},
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
	{"a data node CPU below 100m", "AnalyticsPipeline", map[string]any{"spec.elasticsearch.resources.cpu": "50m"}, "spec.elasticsearch.resources.cpu"},
	{"a broker memory below 1Gi", "AnalyticsPipeline", map[string]any{"spec.kafka.resources.memory": "512Mi"}, "spec.kafka.resources.memory"},
	{"autoscaling without Prometheus", "AnalyticsPipeline", map[string]any{"spec.autoscaling.enabled": true, "spec.autoscaling.prometheusURL": nil}, "spec.autoscaling.prometheusURL is required"},
	{"Prometheus URL not http", "AnalyticsPipeline", map[string]any{"spec.autoscaling.prometheusURL": "ftp://prometheus:9090"}, "spec.autoscaling.prometheusURL"},
	{"interval too short", "AnalyticsPipeline", map[string]any{"spec.autoscaling.intervalSeconds": int64(1)}, "spec.autoscaling.intervalSeconds"},
	{"negative cool-down", "AnalyticsPipeline", map[string]any{"spec.autoscaling.cooldownSeconds": int64(-1)}, "spec.autoscaling.cooldownSeconds"},
	{"catch-up time of 0", "AnalyticsPipeline", map[string]any{"spec.autoscaling.catchUpSeconds": int64(0)}, "spec.autoscaling.catchUpSeconds"},
	{"catch-up time over a day", "AnalyticsPipeline", map[string]any{"spec.autoscaling.catchUpSeconds": int64(86401)}, "spec.autoscaling.catchUpSeconds"},
	{"saturated scale-up factor of 1", "AnalyticsPipeline", map[string]any{"spec.autoscaling.saturatedScaleUpPercent": int64(100)}, "spec.autoscaling.saturatedScaleUpPercent"},
	{"saturated scale-up factor under 1", "AnalyticsPipeline", map[string]any{"spec.autoscaling.saturatedScaleUpPercent": int64(50)}, "spec.autoscaling.saturatedScaleUpPercent"},
	{"negative scale-down delay", "AnalyticsPipeline", map[string]any{"spec.autoscaling.scaleDownDelayAfterScaleUpSeconds": int64(-1)}, "spec.autoscaling.scaleDownDelayAfterScaleUpSeconds"},
	{"query too long", "AnalyticsPipeline", map[string]any{"spec.autoscaling.queries.consumerLag": strings.Repeat("x", 4097)}, "spec.autoscaling.queries.consumerLag"},
	{"unknown query signal", "AnalyticsPipeline", map[string]any{"spec.autoscaling.queries.lagg": "up"}, `unknown field "spec.autoscaling.queries.lagg"`},
	{"unknown reclaim policy", "AnalyticsPipeline", map[string]any{"spec.volumeReclaimPolicy": "Keep"}, "spec.volumeReclaimPolicy"},
	{"misspelt field", "AnalyticsPipeline", map[string]any{"spec.kafka.brokerz": int64(3)}, `unknown field "spec.kafka.brokerz"`},
	{"name too long", "AnalyticsPipeline", map[string]any{"metadata.name": strings.Repeat("a", 24)}, "metadata.name must be at most 23 characters"},
	// Issue 29: the API server accepts a DNS subdomain; the Spark operator's webhook, Strimzi's
	// and ECK's Services need a DNS-1035 label.
	{"name with a dot", "AnalyticsPipeline", map[string]any{"metadata.name": "sen.sors"}, "metadata.name must be a DNS-1035 label"},
	{"name with a leading digit", "AnalyticsPipeline", map[string]any{"metadata.name": "1sensors"}, "metadata.name must be a DNS-1035 label"},
	{"unknown medium", "StorageTier", map[string]any{"spec.medium": "Tape"}, "spec.medium"},
	{"empty class", "StorageTier", map[string]any{"spec.storageClassName": ""}, "spec.storageClassName"},
	{"zero read bandwidth", "StorageTier", map[string]any{"spec.readBytesPerSecond": "0"}, "spec.readBytesPerSecond"},
	{"write bandwidth missing", "StorageTier", map[string]any{"spec.writeBytesPerSecond": nil}, "spec.writeBytesPerSecond: Required"},
	{"negative price", "StorageTier", map[string]any{"spec.monthlyPricePerGiB": "-0.1"}, "spec.monthlyPricePerGiB"},
	{"price not a number", "StorageTier", map[string]any{"spec.monthlyPricePerGiB": "cheap"}, "spec.monthlyPricePerGiB"},
	{"no local paths", "StorageTier", map[string]any{"spec.local.paths": []any{}}, "spec.local.paths"},
	{"relative local path", "StorageTier", map[string]any{"spec.local.paths": []any{"mnt/nvme0"}}, "spec.local.paths: every path must be absolute"},
	{"zero local capacity", "StorageTier", map[string]any{"spec.local.capacityPerPath": "0"}, "spec.local.capacityPerPath"},
	// Issue 15: inputs the CRDs used to accept.
	{"link of 1e30", "AnalyticsPipeline", map[string]any{"spec.network.linkBitsPerSecond": "1e30"}, "spec.network.linkBitsPerSecond"},
	{"link above 1.6T", "AnalyticsPipeline", map[string]any{"spec.network.linkBitsPerSecond": "1601G"}, "spec.network.linkBitsPerSecond"},
	{"Kafka volume of half a byte", "AnalyticsPipeline", map[string]any{"spec.kafka.storage.size": "0.5"}, "spec.kafka.storage.size"},
	{"Kafka volume of 1m bytes", "AnalyticsPipeline", map[string]any{"spec.kafka.storage.size": "1m"}, "spec.kafka.storage.size"},
	{"Kafka volume below 1Gi", "AnalyticsPipeline", map[string]any{"spec.kafka.storage.size": "1023Mi"}, "spec.kafka.storage.size"},
	{"Kafka volume of 8Ei", "AnalyticsPipeline", map[string]any{"spec.kafka.storage.size": "8Ei"}, "spec.kafka.storage.size"},
	{"Elasticsearch volume of 8Ei", "AnalyticsPipeline", map[string]any{"spec.elasticsearch.storage.size": "8Ei"}, "spec.elasticsearch.storage.size"},
	{"spill volume of 8Ei", "AnalyticsPipeline", map[string]any{"spec.spark.shuffle.spillSize": "8Ei"}, "spec.spark.shuffle.spillSize"},
	{"shuffle data volume of 1k", "AnalyticsPipeline", map[string]any{"spec.spark.shuffle.dataSize": "1k"}, "spec.spark.shuffle.dataSize"},
	{"huge exponent link", "AnalyticsPipeline", map[string]any{"spec.network.linkBitsPerSecond": "1e99999999"}, "spec.network.linkBitsPerSecond"},
	{"huge negative exponent link", "AnalyticsPipeline", map[string]any{"spec.network.linkBitsPerSecond": "1e-99999999"}, "spec.network.linkBitsPerSecond"},
	{"huge exponent Kafka volume", "AnalyticsPipeline", map[string]any{"spec.kafka.storage.size": "1e99999999"}, "spec.kafka.storage.size"},
	{"huge exponent Elasticsearch volume", "AnalyticsPipeline", map[string]any{"spec.elasticsearch.storage.size": "1e99999999"}, "spec.elasticsearch.storage.size"},
	{"huge exponent spill volume", "AnalyticsPipeline", map[string]any{"spec.spark.shuffle.spillSize": "1e99999999"}, "spec.spark.shuffle.spillSize"},
	{"huge exponent shuffle data volume", "AnalyticsPipeline", map[string]any{"spec.spark.shuffle.dataSize": "1e99999999"}, "spec.spark.shuffle.dataSize"},
	{"huge exponent memory budget", "AnalyticsPipeline", map[string]any{"spec.spark.memory.budget": "1e99999999"}, "spec.spark.memory.budget"},
	{"huge negative exponent memory budget", "AnalyticsPipeline", map[string]any{"spec.spark.memory.budget": "1e-99999999"}, "spec.spark.memory.budget"},
	{"huge exponent minHeap", "AnalyticsPipeline", map[string]any{"spec.spark.memory.minHeap": "1e99999999"}, "spec.spark.memory.minHeap"},
	{"zero with a huge exponent", "AnalyticsPipeline", map[string]any{"spec.spark.memory.minHeap": "0e-99999999"}, "spec.spark.memory.minHeap"},
	{"automatic partitions above the cap", "AnalyticsPipeline", map[string]any{"spec.spark.executors.max": int64(10000), "spec.spark.executors.cores": int64(256)}, "spec.kafka.topic.partitions"},
	{"rack key not a label key", "AnalyticsPipeline", map[string]any{"spec.kafka.rackTopologyKey": "not a label key!"}, "spec.kafka.rackTopologyKey"},
	{"rack key name over 63", "AnalyticsPipeline", map[string]any{"spec.kafka.rackTopologyKey": "example.com/" + strings.Repeat("z", 64)}, "spec.kafka.rackTopologyKey"},
	{"Kafka version Strimzi does not run", "AnalyticsPipeline", map[string]any{"spec.kafka.version": "99.99.99"}, "spec.kafka.version"},
	{"garbage image", "AnalyticsPipeline", map[string]any{"spec.spark.image": "::not an image::"}, "spec.spark.image"},
	{"image with upper case", "AnalyticsPipeline", map[string]any{"spec.spark.image": "Registry.example/Job:1"}, "spec.spark.image"},
	{"Prometheus URL with user:password", "AnalyticsPipeline", map[string]any{"spec.autoscaling.prometheusURL": "http://user:secret@prometheus:9090"}, "spec.autoscaling.prometheusURL"},
	{"Prometheus URL unparseable", "AnalyticsPipeline", map[string]any{"spec.autoscaling.prometheusURL": "http://[::1"}, "spec.autoscaling.prometheusURL"},
	{"Prometheus URL without host", "AnalyticsPipeline", map[string]any{"spec.autoscaling.prometheusURL": "http:///api"}, "spec.autoscaling.prometheusURL"},
	{"Prometheus URL file scheme", "AnalyticsPipeline", map[string]any{"spec.autoscaling.prometheusURL": "file:///etc/passwd"}, "spec.autoscaling.prometheusURL"},
	{"sparkConf value too long", "AnalyticsPipeline", map[string]any{"spec.spark.sparkConf": map[string]any{"spark.x": strings.Repeat("x", 8193)}}, "spec.spark.sparkConf"},
	{"sparkConf key too long", "AnalyticsPipeline", map[string]any{"spec.spark.sparkConf": map[string]any{strings.Repeat("k", 257): "v"}}, "spec.spark.sparkConf"},
	{"too many sparkConf settings", "AnalyticsPipeline", map[string]any{"spec.spark.sparkConf": manySettings(257)}, "spec.spark.sparkConf"},
	{"argument too long", "AnalyticsPipeline", map[string]any{"spec.spark.arguments": []any{strings.Repeat("a", 8193)}}, "spec.spark.arguments[0]"},
	{"too many arguments", "AnalyticsPipeline", map[string]any{"spec.spark.arguments": manyArguments(257)}, "spec.spark.arguments"},
	{"main class too long", "AnalyticsPipeline", map[string]any{"spec.spark.mainClass": strings.Repeat("c", 1025)}, "spec.spark.mainClass"},
	{"bad service account", "AnalyticsPipeline", map[string]any{"spec.spark.serviceAccountName": "Driver SA"}, "spec.spark.serviceAccountName"},
	{"huge exponent read bandwidth", "StorageTier", map[string]any{"spec.readBytesPerSecond": "1e99999999"}, "spec.readBytesPerSecond"},
	{"write bandwidth above 1T", "StorageTier", map[string]any{"spec.writeBytesPerSecond": "2T"}, "spec.writeBytesPerSecond"},
	{"local capacity above 1Pi", "StorageTier", map[string]any{"spec.local.capacityPerPath": "2Pi"}, "spec.local.capacityPerPath"},
	{"huge exponent local capacity", "StorageTier", map[string]any{"spec.local.capacityPerPath": "9e99999999"}, "spec.local.capacityPerPath"},
	{"selector operator unknown", "StorageTier", map[string]any{"spec.local.nodeSelector.matchExpressions": []any{map[string]any{"key": "disk", "operator": "Near", "values": []any{"nvme"}}}}, "spec.local.nodeSelector"},
	{"selector In without values", "StorageTier", map[string]any{"spec.local.nodeSelector.matchExpressions": []any{map[string]any{"key": "disk", "operator": "In"}}}, "spec.local.nodeSelector"},
	{"price too long", "StorageTier", map[string]any{"spec.monthlyPricePerGiB": strings.Repeat("1", 17)}, "spec.monthlyPricePerGiB"},
	// sparkConf keys that would widen what the job's pods may do (docs/security.md).
	{"sparkConf mounts a secret into env", "AnalyticsPipeline", map[string]any{"spec.spark.sparkConf": map[string]any{"spark.kubernetes.driver.secretKeyRef.PASSWORD": "elastic-es-elastic-user:elastic"}}, "spec.spark.sparkConf: spark.kubernetes.driver.secretKeyRef.PASSWORD may not be set"},
	{"sparkConf mounts a secret", "AnalyticsPipeline", map[string]any{"spec.spark.sparkConf": map[string]any{"spark.kubernetes.executor.secrets.admin": "/etc/admin"}}, "spark.kubernetes.executor.secrets.admin may not be set"},
	{"sparkConf mounts a host path", "AnalyticsPipeline", map[string]any{"spec.spark.sparkConf": map[string]any{"spark.kubernetes.executor.volumes.hostPath.root.mount.path": "/host"}}, "spark.kubernetes.executor.volumes.hostPath.root.mount.path may not be set"},
	{"sparkConf changes the driver's identity", "AnalyticsPipeline", map[string]any{"spec.spark.sparkConf": map[string]any{"spark.kubernetes.authenticate.driver.serviceAccountName": "cluster-admin"}}, "spark.kubernetes.authenticate.driver.serviceAccountName may not be set"},
	{"sparkConf changes the namespace", "AnalyticsPipeline", map[string]any{"spec.spark.sparkConf": map[string]any{"spark.kubernetes.namespace": "kube-system"}}, "spark.kubernetes.namespace may not be set"},
	{"sparkConf brings its own pod template", "AnalyticsPipeline", map[string]any{"spec.spark.sparkConf": map[string]any{"spark.kubernetes.executor.podTemplateFile": "/tmp/t.yaml"}}, "spark.kubernetes.executor.podTemplateFile may not be set"},
	{"tiered shuffle on Spark 3", "AnalyticsPipeline", map[string]any{"spec.spark.sparkVersion": "3.5.1"}, "spec.spark.sparkVersion: the tiered shuffle plugin"},
	{"Spark version not a version", "AnalyticsPipeline", map[string]any{"spec.spark.sparkVersion": "latest"}, "spec.spark.sparkVersion"},
	{"fsGroup 0", "AnalyticsPipeline", map[string]any{"spec.spark.fsGroup": int64(0)}, "spec.spark.fsGroup"},
	{"unknown virtual memory choice", "AnalyticsPipeline", map[string]any{"spec.elasticsearch.virtualMemory": "Swap"}, "spec.elasticsearch.virtualMemory"},
}

func manySettings(n int) map[string]any {
	m := map[string]any{}
	for i := range n {
		m[fmt.Sprintf("spark.strata.test%d", i)] = "v"
	}
	return m
}

func manyArguments(n int) []any {
	a := make([]any, n)
	for i := range a {
		a[i] = "arg"
	}
	return a
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
