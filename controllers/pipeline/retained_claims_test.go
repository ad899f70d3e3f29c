package pipeline

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// What the claims of a retained cluster record: the newest claim's values win, and a partition
// count of another topic, or one that is no count, is not the pipeline's.
func TestReadRetained(t *testing.T) {
	at := func(min int) metav1.Time { return metav1.NewTime(time.Date(2026, 11, 28, 9, min, 0, 0, time.UTC)) }
	claim := func(name string, created metav1.Time, annotations map[string]string) corev1.PersistentVolumeClaim {
		return corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: created, Annotations: annotations}}
	}
	cases := []struct {
		name   string
		claims []corev1.PersistentVolumeClaim
		id     string
		parts  int32
	}{
		{name: "none recorded"},
		{name: "both recorded", claims: []corev1.PersistentVolumeClaim{
			claim("a", at(0), map[string]string{AnnotationKafkaClusterID: "x", AnnotationKafkaTopicPartitions: "sensors=30"}),
		}, id: "x", parts: 30},
		{name: "the newest claim wins", claims: []corev1.PersistentVolumeClaim{
			claim("a", at(5), map[string]string{AnnotationKafkaClusterID: "new", AnnotationKafkaTopicPartitions: "sensors=42"}),
			claim("b", at(0), map[string]string{AnnotationKafkaClusterID: "old", AnnotationKafkaTopicPartitions: "sensors=30"}),
		}, id: "new", parts: 42},
		{name: "another topic's count is not the pipeline's", claims: []corev1.PersistentVolumeClaim{
			claim("a", at(0), map[string]string{AnnotationKafkaTopicPartitions: "clicks=30"}),
		}},
		{name: "no count", claims: []corev1.PersistentVolumeClaim{
			claim("a", at(0), map[string]string{AnnotationKafkaTopicPartitions: "sensors=many"}),
			claim("b", at(1), map[string]string{AnnotationKafkaTopicPartitions: "sensors=-3"}),
			claim("c", at(2), map[string]string{AnnotationKafkaTopicPartitions: "sensors"}),
		}},
	}
	for _, c := range cases {
		got := readRetained(c.claims, "sensors")
		if got.clusterID != c.id || got.partitions != c.parts {
			t.Errorf("%s: cluster ID %q, partitions %d; want %q, %d", c.name, got.clusterID, got.partitions, c.id, c.parts)
		}
	}
}

// What a deleted pipeline records of its topic: the most its KafkaTopics or its last plan had.
func TestTopicRecord(t *testing.T) {
	kt := func(name, topicName string, partitions int64) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"partitions": partitions}}}
		u.SetName(name)
		if topicName != "" {
			_ = unstructured.SetNestedField(u.Object, topicName, "spec", "topicName")
		}
		return u
	}
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Name: "sensors"}}
	p.Spec.Kafka.Topic.Name = "readings"
	cases := []struct {
		name   string
		plan   int32
		topics []*unstructured.Unstructured
		want   string
	}{
		{name: "nothing known", want: ""},
		{name: "the plan's", plan: 21, want: "readings=21"},
		{name: "the KafkaTopic's, more", plan: 21, topics: []*unstructured.Unstructured{kt("sensors", "readings", 30)}, want: "readings=30"},
		{name: "the plan's, more", plan: 33, topics: []*unstructured.Unstructured{kt("sensors", "readings", 30)}, want: "readings=33"},
		{name: "a KafkaTopic of another topic", topics: []*unstructured.Unstructured{kt("readings", "", 30), kt("x", "other", 50)}, want: "readings=30"},
	}
	for _, c := range cases {
		p.Status.Plan = nil
		if c.plan > 0 {
			p.Status.Plan = &v1alpha1.Plan{Partitions: c.plan}
		}
		if got := topicRecord(p, c.topics); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
