package desired

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Topic builds p's KafkaTopic (kafka.strimzi.io/v1), which the Topic Operator turns into the
// Kafka topic the producers write and the Spark job reads. It joins the cluster through the
// strimzi.io/cluster label; the object is named after the pipeline and spec.topicName carries
// the topic's name, so that a topic name that is not a valid Kubernetes name still works.
//
// partitions and replicas are the plan's: the plan only ever grows partitions (Kafka cannot
// shrink them), and the Topic Operator changes the replication factor through Cruise Control.
// min.insync.replicas is set on the topic too, so that it holds even if the broker default
// changes.
func Topic(in Inputs) *unstructured.Unstructured {
	p := in.Pipeline
	rf, minISR := replication(in.Plan)
	spec := object{
		"topicName": TopicName(p),
		"replicas":  rf,
		"config":    object{"min.insync.replicas": minISR},
	}
	// The CRD requires at least one partition; a plan always has some, and leaving the field
	// out of a broken plan lets the broker default apply instead of failing the apply.
	if in.Plan.Partitions > 0 {
		spec["partitions"] = int64(in.Plan.Partitions)
	}
	retentionConfig(spec["config"].(object), in.Plan.Retention)
	return newObject(KafkaTopicGVK, p, KafkaTopicName(p), AppKafka, ComponentTopic,
		map[string]string{StrimziClusterLabel: KafkaName(p)}, nil, object{"spec": spec})
}

// retentionConfig sets the plan's size bound on the topic (retention.bytes is per partition in
// Kafka, and segment.bytes is the granularity of deletion: see internal/plan/retention.go) and
// spec.kafka.retention's time bound. Without a size bound Kafka keeps data for 168 hours, which
// fills a log volume at any real rate.
func retentionConfig(cfg object, r v1alpha1.RetentionPlan) {
	if r.KafkaRetentionBytes > 0 {
		cfg["retention.bytes"] = r.KafkaRetentionBytes
		cfg["segment.bytes"] = r.KafkaSegmentBytes
	}
	if r.KafkaRetentionMs > 0 {
		cfg["retention.ms"] = r.KafkaRetentionMs
	}
}
