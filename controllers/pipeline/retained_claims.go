package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// What a deleted Retain pipeline leaves on its Kafka claims for the pipeline created again under
// its name: the claims are all that outlives it (pipeline_retain.go).
//
//   - The cluster ID (AnnotationKafkaClusterID): the new Kafka takes it, or its brokers refuse
//     the volumes.
//   - The topic's partitions (AnnotationKafkaTopicPartitions). Kafka cannot remove partitions,
//     and the topic in the kept volumes has the partitions the old pipeline grew it to (executors
//     scaled up: 21 partitions planned, 30 after the autoscaler took 6 executors). Planned afresh,
//     the new KafkaTopic asks for fewer: Strimzi's Topic Operator refuses the decrease and leaves
//     it NotReady, but applies its config all the same (Strimzi 1.2.0,
//     topic-operator/.../BatchingTopicController.java, updateManagedNonPausedTopics: the config
//     changes and the partition changes are worked out apart, and alterConfigs runs for every
//     topic whose config differs, whatever partitionChanges said), and retention.bytes is per
//     partition: planned for 21 on a topic of 30, the brokers would keep 30/21 of what their
//     volumes hold. So the count is recorded, and the plan of the new pipeline keeps it, as it
//     keeps the partitions of a running topic (plan.Observed.Partitions).

// AnnotationKafkaTopicPartitions is set on kept Kafka claims: the pipeline's topic and the
// partitions it had, "<topic>=<count>".
const AnnotationKafkaTopicPartitions = "strata.dev/kafka-topic-partitions"

// retainedCluster is what the claims of a Kafka cluster of a pipeline's name record.
type retainedCluster struct {
	// clusterID is the newest claim's recorded cluster ID ("": none); from lists every claim
	// that records one, "<claim>=<id>", for the log.
	clusterID string
	from      []string
	// partitions is the partition count recorded for the pipeline's topic (0: none).
	partitions int32
}

// retained reads what the claims of a Kafka cluster of the pipeline's name record, once per
// reconcile: the plan (partitions) and the Kafka's creation (cluster ID) both ask.
func (r *Reconciler) retained(ctx context.Context, s *scope) (retainedCluster, error) {
	if s.retained != nil {
		return *s.retained, nil
	}
	claims, err := r.kafkaClaims(ctx, s.pipeline)
	if err != nil {
		return retainedCluster{}, err
	}
	rc := readRetained(claims, desired.TopicName(s.pipeline))
	s.retained = &rc
	return rc, nil
}

// readRetained reads the claims' records (sorted by name). Claims recording different values are
// not guessed between: the newest claim's win.
func readRetained(claims []corev1.PersistentVolumeClaim, topic string) retainedCluster {
	var rc retainedCluster
	var newestID, newestParts *corev1.PersistentVolumeClaim
	for i := range claims {
		pvc := &claims[i]
		if got := pvc.Annotations[AnnotationKafkaClusterID]; got != "" {
			rc.from = append(rc.from, pvc.Name+"="+got)
			if newestID == nil || pvc.CreationTimestamp.After(newestID.CreationTimestamp.Time) {
				newestID, rc.clusterID = pvc, got
			}
		}
		name, count, ok := strings.Cut(pvc.Annotations[AnnotationKafkaTopicPartitions], "=")
		n, err := strconv.ParseInt(count, 10, 32)
		if !ok || err != nil || name != topic || n <= 0 {
			continue
		}
		if newestParts == nil || pvc.CreationTimestamp.After(newestParts.CreationTimestamp.Time) {
			newestParts, rc.partitions = pvc, int32(n)
		}
	}
	return rc
}

// topicRecord is the partitions the pipeline's topic has, to record on its claims: what its
// KafkaTopics ask for (the Topic Operator has applied it, or is applying an increase Kafka
// keeps), or what the last plan applied when that is more; "" when neither is known.
func topicRecord(p *v1alpha1.AnalyticsPipeline, topics []*unstructured.Unstructured) string {
	topic := desired.TopicName(p)
	var n int64
	if p.Status.Plan != nil {
		n = int64(p.Status.Plan.Partitions)
	}
	for _, kt := range topics {
		name, _, _ := unstructured.NestedString(kt.Object, "spec", "topicName")
		if name == "" {
			name = kt.GetName()
		}
		if got, _, _ := unstructured.NestedInt64(kt.Object, "spec", "partitions"); name == topic && got > n {
			n = got
		}
	}
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf("%s=%d", topic, n)
}

// recordRetained annotates the claims of the pipeline's Kafka cluster with annotations (those
// with a value; a claim that has them all is left alone). Claims are read from the API server:
// the operator caches none.
func (r *Reconciler) recordRetained(ctx context.Context, p *v1alpha1.AnalyticsPipeline, annotations map[string]string) error {
	for k, v := range annotations {
		if v == "" {
			delete(annotations, k)
		}
	}
	if len(annotations) == 0 {
		return nil
	}
	claims, err := r.kafkaClaims(ctx, p)
	if err != nil {
		return err
	}
	for i := range claims {
		pvc := &claims[i]
		missing := map[string]string{}
		for k, v := range annotations {
			if pvc.Annotations[k] != v {
				missing[k] = v
			}
		}
		if len(missing) == 0 {
			continue
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": missing}})
		if err != nil {
			return err
		}
		if err := r.Client.Patch(ctx, pvc, client.RawPatch(types.MergePatchType, patch)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("recording the retained Kafka cluster on claim %s/%s: %w", pvc.Namespace, pvc.Name, err)
		}
	}
	return nil
}

// kafkaClaims lists the claims Strimzi made for the pipeline's Kafka cluster (label
// strimzi.io/cluster), sorted by name.
func (r *Reconciler) kafkaClaims(ctx context.Context, p *v1alpha1.AnalyticsPipeline) ([]corev1.PersistentVolumeClaim, error) {
	list := &corev1.PersistentVolumeClaimList{}
	if err := r.APIReader.List(ctx, list, client.InNamespace(p.Namespace),
		client.MatchingLabels{desired.StrimziClusterLabel: desired.KafkaName(p)}); err != nil {
		return nil, err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items, nil
}

// retainedPartitions is the partition count recorded for the pipeline's topic on the claims of a
// retained Kafka cluster of its name, for a Retain pipeline that has neither a KafkaTopic nor
// a plan yet (created again); 0 otherwise, without reading the claims.
func (r *Reconciler) retainedPartitions(ctx context.Context, s *scope) (int32, error) {
	p := s.pipeline
	if !retains(p) || p.Status.Plan != nil || topicPartitions(s.observed, p) > 0 {
		return 0, nil
	}
	rc, err := r.retained(ctx, s)
	return rc.partitions, err
}
