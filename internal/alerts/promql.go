package alerts

import (
	"fmt"
	"strings"
)

// The PromQL building blocks the alerts and the dashboards share. Every upstream series is tied
// to its pipeline by joining it with strata_pipeline_info on a label derived from the upstream
// series, following the names Strata gives the children (internal/desired):
//
//   - Kafka broker pods are <broker_podset>-<node id> (Strimzi names them after the
//     KafkaNodePool <pipeline>-broker of the cluster <pipeline>);
//   - the Kafka exporter's pod is <kafka_cluster>-kafka-exporter-<hash>;
//   - executor pods are <spark_application>-<16 hex digits>-exec-<id> (Spark's default name
//     prefix; <spark_application>-exec-<id> when spark.kubernetes.executor.podNamePrefix is
//     the application's name), and Spark's executor metrics carry application_name;
//   - the Elasticsearch exporter's series carry cluster, the Elasticsearch cluster's name.
//
// The join keeps the pipeline's namespace too, so two pipelines of the same name in two
// namespaces never mix. docs/metrics.md documents the conventions.

// Pod selectors of the upstream series.
const (
	brokerPods   = `pod=~".+-broker-[0-9]+"`
	executorPods = `container!="", container!="POD", pod=~".+-exec-[0-9]+"`
	// containerNetwork selects the pod-level network series of cAdvisor.
	exporterPodRegex = `(.+)-kafka-exporter-.+`
	executorPodRegex = `(.+?)(?:-[0-9a-f]{10,16})?-exec-[0-9]+`
)

// Scope restricts the operator's own series (strata_*) that the fragments join on: "" for the
// alerts, which cover every pipeline; `namespace="$namespace", pipeline="$pipeline"` for a
// dashboard's variables. Upstream series follow through the joins.
type Scope string

// M is the selector of one of the operator's metrics within the scope, with extra matchers.
func (s Scope) M(name string, matchers ...string) string {
	if s != "" {
		matchers = append([]string{string(s)}, matchers...)
	}
	if len(matchers) == 0 {
		return name
	}
	return name + "{" + strings.Join(matchers, ", ") + "}"
}

// Window is the rate window of every rate() the rules and dashboards take: four scrapes of 30 s
// and some, as kubernetes-mixin does.
const Window = "5m"

// join adds the pipeline label to expr by matching on the label key (besides namespace) with
// strata_pipeline_info.
func (s Scope) join(expr, key string) string {
	return fmt.Sprintf(`(%s) * on (namespace, %s) group_left (pipeline) %s`, expr, key, s.M("strata_pipeline_info"))
}

// BrokerBytes is bytes per second per broker pod of a cAdvisor network counter, labelled
// namespace, pipeline and pod.
func (s Scope) BrokerBytes(counter string) string {
	return s.join(fmt.Sprintf(`label_replace(sum by (namespace, pod) (rate(%s{%s}[%s])), "broker_podset", "$1", "pod", "(.+)-[0-9]+")`,
		counter, brokerPods, Window), "broker_podset")
}

// BrokerLinkBytes is each broker's busier direction (received or sent), in bytes per second.
func (s Scope) BrokerLinkBytes() string {
	return fmt.Sprintf(`max by (namespace, pipeline, pod) (label_replace(%s, "direction", "send", "", "") or label_replace(%s, "direction", "receive", "", ""))`,
		s.BrokerBytes("container_network_transmit_bytes_total"), s.BrokerBytes("container_network_receive_bytes_total"))
}

// BrokerLinkUtilization is each broker's link use over the pipeline's usable link rate.
func (s Scope) BrokerLinkUtilization() string {
	return fmt.Sprintf(`%s / on (namespace, pipeline) group_left () %s`, s.BrokerLinkBytes(), s.M("strata_pipeline_link_usable_bytes_per_second"))
}

// KafkaBrokerJMXBytes is a broker's own byte counter (internal/desired/kafkametrics.go's rules),
// per broker pod: Kafka's view of the same link.
func (s Scope) KafkaBrokerJMXBytes(counter string) string {
	return s.join(fmt.Sprintf(`label_replace(sum by (namespace, pod) (rate(%s{%s, topic=""}[%s])), "broker_podset", "$1", "pod", "(.+)-[0-9]+")`,
		counter, brokerPods, Window), "broker_podset")
}

// BrokerGauge is a broker JMX gauge summed per pipeline, labelled namespace and pipeline.
func (s Scope) BrokerGauge(metric string) string {
	return fmt.Sprintf(`sum by (namespace, pipeline) (%s)`, s.join(fmt.Sprintf(
		`label_replace(sum by (namespace, pod) (%s{%s}), "broker_podset", "$1", "pod", "(.+)-[0-9]+")`, metric, brokerPods), "broker_podset"))
}

// exporter adds kafka_cluster, from the Kafka exporter's pod name, to expr.
func exporter(expr string) string {
	return fmt.Sprintf(`label_replace(%s, "kafka_cluster", "$1", "pod", %q)`, expr, exporterPodRegex)
}

// kafkaJoin ties a Kafka exporter series (with kafka_cluster) to its pipeline by cluster and topic.
func (s Scope) kafkaJoin(expr string) string {
	return fmt.Sprintf(`(%s) * on (namespace, kafka_cluster, topic) group_left (pipeline) %s`, expr, s.M("strata_pipeline_info"))
}

// ConsumerLag is the records each consumer group is behind on the pipeline's topic.
func (s Scope) ConsumerLag() string {
	return fmt.Sprintf(`sum by (namespace, pipeline, consumergroup, topic) (%s)`,
		s.kafkaJoin(exporter(`kafka_consumergroup_lag`)))
}

// ConsumerLagDelta is how much each group's lag grew over window.
func (s Scope) ConsumerLagDelta(window string) string {
	return fmt.Sprintf(`sum by (namespace, pipeline, consumergroup, topic) (%s)`,
		s.kafkaJoin(exporter(fmt.Sprintf(`delta(kafka_consumergroup_lag[%s])`, window))))
}

// IngestRate is the records per second the producers append to the pipeline's topic.
func (s Scope) IngestRate() string {
	return fmt.Sprintf(`sum by (namespace, pipeline, topic) (%s)`,
		s.kafkaJoin(exporter(fmt.Sprintf(`rate(kafka_topic_partition_current_offset[%s])`, Window))))
}

// ProcessingRate is the records per second each consumer group commits on the pipeline's topic.
func (s Scope) ProcessingRate() string {
	return fmt.Sprintf(`sum by (namespace, pipeline, consumergroup, topic) (%s)`,
		s.kafkaJoin(exporter(fmt.Sprintf(`rate(kafka_consumergroup_current_offset[%s])`, Window))))
}

// executor adds spark_application, from the executor pod's name, and joins the pipeline.
func (s Scope) executor(expr string) string {
	return s.join(fmt.Sprintf(`label_replace(%s, "spark_application", "$1", "pod", %q)`, expr, executorPodRegex), "spark_application")
}

// ExecutorGauge is a cAdvisor gauge summed per executor pod, labelled with its pipeline.
func (s Scope) ExecutorGauge(metric string) string {
	return s.executor(fmt.Sprintf(`sum by (namespace, pod) (%s{%s})`, metric, executorPods))
}

// ExecutorRate is a cAdvisor counter's rate per executor pod, labelled with its pipeline.
func (s Scope) ExecutorRate(counter string) string {
	return s.executor(fmt.Sprintf(`sum by (namespace, pod) (rate(%s{%s}[%s]))`, counter, executorPods, Window))
}

// ExecutorPageCacheRatio is each executor's page cache over the planned page-cache reserve.
func (s Scope) ExecutorPageCacheRatio() string {
	return fmt.Sprintf(`%s / on (namespace, pipeline) group_left () %s`,
		s.ExecutorGauge("container_memory_cache"), s.M("strata_pipeline_executor_memory_bytes", `part="pageCache"`))
}

// spark joins Spark's executor metrics (PrometheusResource: metrics_executor_*, labelled
// application_name and executor_id) to the pipeline.
func (s Scope) spark(expr string) string {
	return s.join(fmt.Sprintf(`label_replace(%s, "spark_application", "$1", "application_name", "(.+)")`, expr), "spark_application")
}

// SparkShuffleWriteRate is the shuffle bytes per second all executors of a pipeline write.
func (s Scope) SparkShuffleWriteRate() string {
	return fmt.Sprintf(`sum by (namespace, pipeline) (%s)`,
		s.spark(fmt.Sprintf(`rate(metrics_executor_totalShuffleWrite_bytes_total{executor_id!="driver"}[%s])`, Window)))
}

// ExecutorDiskWriteRate is the bytes per second all executors of a pipeline write to disk.
func (s Scope) ExecutorDiskWriteRate() string {
	return fmt.Sprintf(`sum by (namespace, pipeline) (%s)`, s.ExecutorRate("container_fs_writes_bytes_total"))
}

// SpillRate estimates the spill and temporary files all executors of a pipeline write, in
// bytes per second: their disk writes beyond the shuffle files Spark counts. Spark's Prometheus
// endpoint has no spill counter (executors' own metrics, diskBytesSpilled, stay in the executor);
// without Spark's metrics the estimate is all disk writes.
func (s Scope) SpillRate() string {
	w := s.ExecutorDiskWriteRate()
	return fmt.Sprintf(`clamp_min(%s - on (namespace, pipeline) (%s or on (namespace, pipeline) (%s * 0)), 0)`,
		w, s.SparkShuffleWriteRate(), w)
}

// es joins an Elasticsearch exporter series to its pipeline through its cluster label.
func (s Scope) es(expr string) string {
	return s.join(fmt.Sprintf(`label_replace(%s, "elasticsearch_cluster", "$1", "cluster", "(.+)")`, expr), "elasticsearch_cluster")
}

// ElasticsearchIndexingRate is the documents per second a pipeline's Elasticsearch indexes,
// over every shard copy (primaries and replicas).
func (s Scope) ElasticsearchIndexingRate() string {
	return fmt.Sprintf(`sum by (namespace, pipeline) (%s)`,
		s.es(fmt.Sprintf(`rate(elasticsearch_indices_indexing_index_total[%s])`, Window)))
}

// ElasticsearchWriteRejections is the write requests per second a pipeline's Elasticsearch
// rejects because its write thread pool and queue are full.
func (s Scope) ElasticsearchWriteRejections() string {
	return fmt.Sprintf(`sum by (namespace, pipeline) (%s)`,
		s.es(fmt.Sprintf(`rate(elasticsearch_thread_pool_rejected_count{type="write"}[%s])`, Window)))
}

// ElasticsearchWriteQueue is the largest write queue among a pipeline's Elasticsearch nodes.
func (s Scope) ElasticsearchWriteQueue() string {
	return fmt.Sprintf(`max by (namespace, pipeline) (%s)`, s.es(`elasticsearch_thread_pool_queue_count{type="write"}`))
}

// tierVolumes sums a kubelet volume gauge per StorageTier: volumes join their claim's
// StorageClass (kube-state-metrics) and the class its tier (strata_pipeline_storage_bytes).
func (s Scope) tierVolumes(gauge string) string {
	return fmt.Sprintf(`sum by (tier) ((%s * on (namespace, persistentvolumeclaim) group_left (storageclass) max by (namespace, persistentvolumeclaim, storageclass) (kube_persistentvolumeclaim_info)) * on (storageclass) group_left (tier) max by (storageclass, tier) (%s))`,
		fmt.Sprintf(`max by (namespace, persistentvolumeclaim) (%s)`, gauge), s.M("strata_pipeline_storage_bytes"))
}

// TierUsedRatio is the share of the capacity of a tier's volumes that holds data.
func (s Scope) TierUsedRatio() string {
	return fmt.Sprintf(`%s / %s`, s.tierVolumes("kubelet_volume_stats_used_bytes"), s.tierVolumes("kubelet_volume_stats_capacity_bytes"))
}

// stageResource maps the stages to the resource that scales them.
var stageResource = []struct{ stages, resource string }{
	{"KafkaBrokerNetwork|KafkaDisk", "Brokers"},
	{"SparkProcessing|SparkNetwork|SparkShuffleDisk", "Executors"},
	{"ElasticsearchIndexing", "ElasticsearchDataNodes"},
}

// saturatedResources is 1 for every (pipeline, resource) that is saturated: its stage is the
// plan's bottleneck, or (brokers) the link the autoscaler last observed is above the target.
func (s Scope) saturatedResources() string {
	var parts []string
	for _, sr := range stageResource {
		parts = append(parts, fmt.Sprintf(`label_replace(%s, "resource", %q, "", "")`,
			s.M("strata_pipeline_bottleneck_info", fmt.Sprintf("stage=~%q", sr.stages)), sr.resource))
	}
	parts = append(parts, fmt.Sprintf(`label_replace(%s > on (namespace, pipeline) %s, "resource", "Brokers", "", "")`,
		s.M("strata_pipeline_broker_link_utilization_ratio"), s.M("strata_pipeline_target_utilization_ratio")))
	return strings.Join(parts, " or ")
}
