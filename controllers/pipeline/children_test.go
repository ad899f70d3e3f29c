package pipeline

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// The conditions a pipeline shows are read off its children's status as their operators write
// it. Each case below is a status an upstream operator documents, cited where it is defined.

// child is an object of generation 2 with the given status (nil: no status).
func child(name string, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetName(name)
	u.SetGeneration(2)
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func conds(cs ...map[string]any) map[string]any {
	list := make([]any, len(cs))
	for i, c := range cs {
		list[i] = c
	}
	return map[string]any{"observedGeneration": int64(2), "conditions": list}
}

func cond(condType, status, reason, message string) map[string]any {
	return map[string]any{"type": condType, "status": status, "reason": reason, "message": message}
}

type statusCase struct {
	name   string
	got    childStatus
	status metav1.ConditionStatus
	reason string
	text   string // the message contains it
}

func checkStatus(t *testing.T, cases []statusCase) {
	t.Helper()
	for _, c := range cases {
		if c.got.status != c.status || c.got.reason != c.reason || !strings.Contains(c.got.message, c.text) {
			t.Errorf("%s: got %s/%s %q, want %s/%s containing %q", c.name, c.got.status, c.got.reason, c.got.message,
				c.status, c.reason, c.text)
		}
	}
}

func TestKafkaStatusFromStrimzi(t *testing.T) {
	ready := child("sensors", conds(cond("Ready", "True", "", "")))
	topicReady := child("sensors", conds(cond("Ready", "True", "", "")))
	userReady := child("sensors-ingest", conds(cond("Ready", "True", "", "")))
	ks := func(kafka, topic *unstructured.Unstructured) childStatus { return kafkaStatus(kafka, topic, userReady) }
	F, T := metav1.ConditionFalse, metav1.ConditionTrue
	P, A := v1alpha1.ReasonProgressing, v1alpha1.ReasonAvailable
	checkStatus(t, []statusCase{
		{"no Kafka yet", ks(nil, nil), F, P, "not created yet"},
		{"no status yet", ks(child("sensors", nil), topicReady), F, P, "no Ready condition reported yet"},
		// strimzi-kafka-operator 1.2.0, operator-common/.../model/StatusUtils.java:
		// setStatusConditionAndObservedGeneration writes Ready/True on success...
		{"Ready", ks(ready, topicReady), T, A, "Kafka cluster, the topic and the job's user Ready"},
		// ...and NotReady/True with the error's reason and message on failure.
		{"NotReady", ks(child("sensors", conds(cond("NotReady", "True", "InvalidResourceException",
			"Kafka version 9.9.9 is not supported"))), topicReady), F, P, "InvalidResourceException: Kafka version 9.9.9 is not supported"},
		// Same file: Warning conditions stand beside Ready (deprecated fields, ...) and change nothing.
		{"Ready with a warning", ks(child("sensors", conds(cond("Warning", "True", "DeprecatedFields", "x"),
			cond("Ready", "True", "", ""))), topicReady), T, A, "Ready"},
		// Same file: ReconciliationPaused while strimzi.io/pause-reconciliation is "true".
		{"paused", ks(child("sensors", conds(cond("ReconciliationPaused", "True", "", ""))), topicReady),
			F, P, "reconciliation paused"},
		// status.observedGeneration behind metadata.generation: the operator has not seen the change.
		{"generation not observed", ks(child("sensors", map[string]any{"observedGeneration": int64(1),
			"conditions": []any{cond("Ready", "True", "", "")}}), topicReady), F, P, "generation 2 not yet observed"},
		// Strimzi 0.x wrote Ready/False; still read.
		{"Ready False", ks(child("sensors", conds(cond("Ready", "False", "Creating", "waiting"))), topicReady),
			F, P, "Creating: waiting"},
		// topic-operator/.../BatchingTopicController.java: Unmanaged for strimzi.io/managed "false".
		{"topic unmanaged", ks(ready, child("sensors", conds(cond("Unmanaged", "True", "", "")))),
			F, P, "not managed by the Topic Operator"},
		{"topic NotReady", ks(ready, child("sensors", conds(cond("NotReady", "True", "KafkaError",
			"Policy violation")))), F, P, "KafkaTopic sensors: KafkaError: Policy violation"},
		{"no topic yet", ks(ready, nil), F, P, "KafkaTopic : not created yet"},
		// The User Operator's KafkaUser: the job cannot authenticate before it is Ready.
		{"no user yet", kafkaStatus(ready, topicReady, nil), F, P, "KafkaUser : not created yet"},
		{"user NotReady", kafkaStatus(ready, topicReady, child("sensors-ingest", conds(cond("NotReady", "True",
			"InvalidResourceException", "Authorization needs to be enabled in the Kafka custom resource")))),
			F, P, "KafkaUser sensors-ingest: InvalidResourceException"},
	})
}

func TestSparkStatusFromTheSparkOperator(t *testing.T) {
	app := func(state, errMsg string) *unstructured.Unstructured {
		return child("sensors", map[string]any{"applicationState": map[string]any{"state": state, "errorMessage": errMsg}})
	}
	F, T := metav1.ConditionFalse, metav1.ConditionTrue
	P, A, X := v1alpha1.ReasonProgressing, v1alpha1.ReasonAvailable, v1alpha1.ReasonApplicationFailed
	// kubeflow/spark-operator v2.5.2, api/v1beta2/sparkapplication_types.go: ApplicationStateType,
	// every value.
	checkStatus(t, []statusCase{
		{"not created", sparkStatus(nil), F, P, "not created yet"},
		{"NEW (empty)", sparkStatus(app("", "")), F, P, "not yet submitted"},
		{"SUBMITTED", sparkStatus(app("SUBMITTED", "")), F, P, "is SUBMITTED"},
		{"RUNNING", sparkStatus(app("RUNNING", "")), T, A, "RUNNING"},
		{"COMPLETED", sparkStatus(app("COMPLETED", "")), F, P, "streaming job stopped"},
		{"SUCCEEDING", sparkStatus(app("SUCCEEDING", "")), F, P, "streaming job stopped"},
		{"FAILED", sparkStatus(app("FAILED", "driver OOMKilled")), F, X, "SparkApplication FAILED: driver OOMKilled"},
		{"SUBMISSION_FAILED", sparkStatus(app("SUBMISSION_FAILED", "forbidden: pods")), F, X, "SUBMISSION_FAILED: forbidden"},
		{"FAILING", sparkStatus(app("FAILING", "")), F, X, "FAILING"},
		{"PENDING_RERUN", sparkStatus(app("PENDING_RERUN", "")), F, P, "is PENDING_RERUN"},
		{"INVALIDATING", sparkStatus(app("INVALIDATING", "")), F, P, "is INVALIDATING"},
		{"SUSPENDING", sparkStatus(app("SUSPENDING", "")), F, P, "spec.suspend"},
		{"SUSPENDED", sparkStatus(app("SUSPENDED", "")), F, P, "spec.suspend"},
		{"RESUMING", sparkStatus(app("RESUMING", "")), F, P, "is RESUMING"},
		{"UNKNOWN", sparkStatus(app("UNKNOWN", "")), F, P, "lost track of its driver"},
	})
}

func TestElasticsearchStatusFromECK(t *testing.T) {
	es := func(phase, health string) *unstructured.Unstructured {
		return child("sensors", map[string]any{"observedGeneration": int64(2), "phase": phase, "health": health})
	}
	F, T := metav1.ConditionFalse, metav1.ConditionTrue
	P, A, U := v1alpha1.ReasonProgressing, v1alpha1.ReasonAvailable, v1alpha1.ReasonUnhealthy
	// elastic/cloud-on-k8s v3.5.0, pkg/apis/elasticsearch/v1/elasticsearch_types.go:
	// ElasticsearchOrchestrationPhase and ElasticsearchHealth, every value.
	checkStatus(t, []statusCase{
		{"not created", elasticsearchStatus(nil), F, P, "not created yet"},
		{"not reconciled", elasticsearchStatus(es("", "")), F, P, "not yet reconciled by ECK"},
		{"Ready green", elasticsearchStatus(es("Ready", "green")), T, A, "Ready, health green"},
		{"Ready yellow", elasticsearchStatus(es("Ready", "yellow")), T, A, "Ready, health yellow"},
		{"Ready red", elasticsearchStatus(es("Ready", "red")), F, U, "health red"},
		{"Ready unknown", elasticsearchStatus(es("Ready", "unknown")), F, P, `health "unknown"`},
		{"ApplyingChanges", elasticsearchStatus(es("ApplyingChanges", "green")), F, P, `phase "ApplyingChanges"`},
		{"MigratingData", elasticsearchStatus(es("MigratingData", "yellow")), F, P, `phase "MigratingData"`},
		{"Stalled", elasticsearchStatus(es("Stalled", "yellow")), F, U, "a node shutdown cannot progress"},
		{"Invalid", elasticsearchStatus(es("Invalid", "")), F, U, "Invalid"},
		{"generation not observed", elasticsearchStatus(child("sensors", map[string]any{"observedGeneration": int64(1),
			"phase": "Ready", "health": "green"})), F, P, "generation 2 not yet observed by ECK"},
	})
}
