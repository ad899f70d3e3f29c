package pipeline

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

// readyCondition reads a Strimzi status, for the generation the object has now. Strimzi sets
// one condition of type Ready (status True) when a reconciliation succeeds and one of type
// NotReady (status True, the error's reason and message) when it fails
// (strimzi-kafka-operator 1.2.0, operator-common/src/main/java/io/strimzi/operator/common/model/
// StatusUtils.java: setStatusConditionAndObservedGeneration), ReconciliationPaused while the
// strimzi.io/pause-reconciliation annotation holds it (same file), and the Topic Operator
// Unmanaged for a topic annotated strimzi.io/managed: "false" (topic-operator/.../
// BatchingTopicController.java). Warning conditions may stand beside Ready and do not change it.
func readyCondition(u *unstructured.Unstructured) (ready bool, message string) {
	if u == nil {
		return false, "not created yet"
	}
	if g, ok, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); ok && g < u.GetGeneration() {
		return false, fmt.Sprintf("generation %d not yet observed by its operator", u.GetGeneration())
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	byType := map[string]map[string]any{}
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["status"] == "True" {
			byType[fmt.Sprint(m["type"])] = m
		}
	}
	switch {
	case byType["ReconciliationPaused"] != nil:
		return false, "reconciliation paused (strimzi.io/pause-reconciliation)"
	case byType["Unmanaged"] != nil:
		return false, "not managed by the Topic Operator (strimzi.io/managed: \"false\")"
	case byType["Ready"] != nil:
		return true, ""
	case byType["NotReady"] != nil:
		return false, reasonMessage(byType["NotReady"])
	}
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			return false, reasonMessage(m) // Ready False, as Strimzi 0.x wrote it
		}
	}
	return false, "no Ready condition reported yet"
}

func reasonMessage(cond map[string]any) string {
	return strings.TrimSuffix(fmt.Sprintf("%v: %v", cond["reason"], cond["message"]), ": <nil>")
}

// kafkaStatus: Strimzi reports the Kafka cluster, the topic and the job's KafkaUser Ready. The
// User Operator writes the same Ready/NotReady conditions (user-operator/.../
// UserControllerLoop.java, through StatusUtils); until it has, the job cannot authenticate.
func kafkaStatus(kafka, topic, user *unstructured.Unstructured) childStatus {
	if ok, msg := readyCondition(kafka); !ok {
		return progressing("Kafka %s: %s", nameOf(kafka), msg)
	}
	if ok, msg := readyCondition(topic); !ok {
		return progressing("KafkaTopic %s: %s", nameOf(topic), msg)
	}
	if ok, msg := readyCondition(user); !ok {
		return progressing("KafkaUser %s: %s", nameOf(user), msg)
	}
	return childStatus{metav1.ConditionTrue, v1alpha1.ReasonAvailable, "Strimzi reports the Kafka cluster, the topic and the job's user Ready"}
}

// sparkStatus reads the Spark operator's status.applicationState.state (kubeflow/spark-operator
// v2.5.2, api/v1beta2/sparkapplication_types.go, ApplicationStateType): only RUNNING carries
// the stream; the failed states say why; a streaming job that completed, or is suspended, moves
// nothing until it runs again.
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
	case "COMPLETED", "SUCCEEDING":
		return progressing("SparkApplication %s is %s: the streaming job stopped, and the Spark operator runs it again (restartPolicy Always)", app.GetName(), state)
	case "SUSPENDING", "SUSPENDED":
		return progressing("SparkApplication %s is %s (spec.suspend): nothing is read until it resumes", app.GetName(), state)
	case "UNKNOWN":
		return progressing("SparkApplication %s is UNKNOWN: the Spark operator lost track of its driver", app.GetName())
	default: // SUBMITTED, PENDING_RERUN, INVALIDATING, RESUMING
		return progressing("SparkApplication %s is %s", app.GetName(), state)
	}
}

// elasticsearchStatus reads ECK's status.phase and status.health for the generation the object
// has now (elastic/cloud-on-k8s v3.5.0, pkg/apis/elasticsearch/v1/elasticsearch_types.go:
// phases Ready, ApplyingChanges, MigratingData, Stalled, Invalid; health green, yellow, red,
// unknown). Ready with green or yellow health serves; red health, a stalled node shutdown and an
// invalid resource need someone to look.
func elasticsearchStatus(es *unstructured.Unstructured) childStatus {
	if es == nil {
		return progressing("Elasticsearch not created yet")
	}
	if g, ok, _ := unstructured.NestedInt64(es.Object, "status", "observedGeneration"); ok && g < es.GetGeneration() {
		return progressing("Elasticsearch %s: generation %d not yet observed by ECK", es.GetName(), es.GetGeneration())
	}
	phase, _, _ := unstructured.NestedString(es.Object, "status", "phase")
	health, _, _ := unstructured.NestedString(es.Object, "status", "health")
	switch {
	case health == "red":
		return childStatus{metav1.ConditionFalse, v1alpha1.ReasonUnhealthy, fmt.Sprintf("ECK reports Elasticsearch %s health red (phase %q)", es.GetName(), phase)}
	case phase == "Invalid":
		return childStatus{metav1.ConditionFalse, v1alpha1.ReasonUnhealthy, fmt.Sprintf("ECK marks Elasticsearch %s Invalid: its spec is refused; see the Elasticsearch's events", es.GetName())}
	case phase == "Stalled":
		return childStatus{metav1.ConditionFalse, v1alpha1.ReasonUnhealthy, fmt.Sprintf("ECK reports Elasticsearch %s Stalled: a node shutdown cannot progress (health %q)", es.GetName(), health)}
	case phase == "Ready" && (health == "green" || health == "yellow"):
		return childStatus{metav1.ConditionTrue, v1alpha1.ReasonAvailable, fmt.Sprintf("ECK reports Elasticsearch %s Ready, health %s", es.GetName(), health)}
	case phase == "":
		return progressing("Elasticsearch %s not yet reconciled by ECK", es.GetName())
	default: // ApplyingChanges, MigratingData, or Ready with health unknown
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
// keptPartitions is the least the topic must keep: what its KafkaTopic says, or what the last
// plan applied (status.plan) when that is more. A KafkaTopic missing from the cache (an
// informer relisting after its watch expired: the API-server fault test saw one reconcile plan
// 21 partitions for a topic of 28), or deleted by hand, must not make the plan shrink the
// topic: Strimzi refuses a decrease and leaves the topic NotReady, the partitions staying in
// Kafka.
func keptPartitions(obs observed, p *v1alpha1.AnalyticsPipeline) int32 {
	n := topicPartitions(obs, p)
	if p.Status.Plan != nil && p.Status.Plan.Partitions > n {
		n = p.Status.Plan.Partitions
	}
	return n
}

func topicPartitions(obs observed, p *v1alpha1.AnalyticsPipeline) int32 {
	topic := obs.get(desired.KafkaTopicGVK, p.Namespace, desired.KafkaTopicName(p))
	if topic == nil {
		return 0
	}
	n, _, _ := unstructured.NestedInt64(topic.Object, "spec", "partitions")
	return int32(n)
}
