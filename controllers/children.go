package controllers

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/ssa"
)

// observed is what the cache holds of a pipeline's children, by kind and name.
type observed map[ssa.Key]*unstructured.Unstructured

func (o observed) get(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	return o[ssa.Key{GVK: gvk, Namespace: namespace, Name: name}]
}

// childStatus is one condition computed from the children's own status, as their operators
// report it: the operator never assumes a child is ready because it was created.
type childStatus struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

func progressing(format string, args ...any) childStatus {
	return childStatus{metav1.ConditionFalse, v1alpha1.ReasonProgressing, fmt.Sprintf(format, args...)}
}

// readyCondition reads a Strimzi-style status: conditions[type=Ready], for the generation the
// object has now.
func readyCondition(u *unstructured.Unstructured) (ready bool, message string) {
	if u == nil {
		return false, "not created yet"
	}
	if g, ok, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); ok && g < u.GetGeneration() {
		return false, fmt.Sprintf("generation %d not yet observed by its operator", u.GetGeneration())
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" {
			if m["status"] == "True" {
				return true, ""
			}
			return false, fmt.Sprintf("%v: %v", m["reason"], m["message"])
		}
	}
	return false, "no Ready condition reported yet"
}

// kafkaStatus: Strimzi reports the Kafka cluster and the topic Ready.
func kafkaStatus(kafka, topic *unstructured.Unstructured) childStatus {
	if ok, msg := readyCondition(kafka); !ok {
		return progressing("Kafka %s: %s", nameOf(kafka), msg)
	}
	if ok, msg := readyCondition(topic); !ok {
		return progressing("KafkaTopic %s: %s", nameOf(topic), msg)
	}
	return childStatus{metav1.ConditionTrue, v1alpha1.ReasonAvailable, "Strimzi reports the Kafka cluster and the topic Ready"}
}

// sparkStatus: the Spark operator's applicationState.state.
func sparkStatus(app *unstructured.Unstructured) childStatus {
	if app == nil {
		return progressing("SparkApplication not created yet")
	}
	state, _, _ := unstructured.NestedString(app.Object, "status", "applicationState", "state")
	errMsg, _, _ := unstructured.NestedString(app.Object, "status", "applicationState", "errorMessage")
	switch state {
	case "RUNNING":
		return childStatus{metav1.ConditionTrue, v1alpha1.ReasonAvailable, "the Spark operator reports the application RUNNING"}
	case "FAILED", "SUBMISSION_FAILED", "FAILING":
		return childStatus{metav1.ConditionFalse, v1alpha1.ReasonApplicationFailed, strings.TrimSpace("SparkApplication " + state + ": " + errMsg)}
	case "":
		return progressing("SparkApplication %s not yet submitted by the Spark operator", app.GetName())
	default:
		return progressing("SparkApplication %s is %s", app.GetName(), state)
	}
}

// elasticsearchStatus: ECK's phase and health.
func elasticsearchStatus(es *unstructured.Unstructured) childStatus {
	if es == nil {
		return progressing("Elasticsearch not created yet")
	}
	phase, _, _ := unstructured.NestedString(es.Object, "status", "phase")
	health, _, _ := unstructured.NestedString(es.Object, "status", "health")
	switch {
	case health == "red":
		return childStatus{metav1.ConditionFalse, v1alpha1.ReasonUnhealthy, fmt.Sprintf("ECK reports Elasticsearch %s health red (phase %q)", es.GetName(), phase)}
	case phase == "Ready" && (health == "green" || health == "yellow"):
		return childStatus{metav1.ConditionTrue, v1alpha1.ReasonAvailable, fmt.Sprintf("ECK reports Elasticsearch %s Ready, health %s", es.GetName(), health)}
	case phase == "":
		return progressing("Elasticsearch %s not yet reconciled by ECK", es.GetName())
	default:
		return progressing("Elasticsearch %s phase %q, health %q", es.GetName(), phase, health)
	}
}

func nameOf(u *unstructured.Unstructured) string {
	if u == nil {
		return ""
	}
	return u.GetName()
}

// topicPartitions is the partition count of the existing topic, 0 when there is none.
func topicPartitions(obs observed, p *v1alpha1.AnalyticsPipeline) int32 {
	topic := obs.get(desired.KafkaTopicGVK, p.Namespace, desired.KafkaTopicName(p))
	if topic == nil {
		return 0
	}
	n, _, _ := unstructured.NestedInt64(topic.Object, "spec", "partitions")
	return int32(n)
}
