package pipeline

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// A child nobody writes a status on is reported NotReconciled once the timeout has passed since
// it was created, naming its operator, the namespace and the setting that decides what the
// operator watches; before that, the reconcile is told when to look again.
func TestNotReconciled(t *testing.T) {
	created := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	obj := func(kind string, status map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetKind(kind)
		u.SetName("sensors")
		u.SetNamespace("analytics")
		u.SetCreationTimestamp(metav1.NewTime(created))
		if status != nil {
			u.Object["status"] = status
		}
		return u
	}
	const timeout = 3 * time.Minute
	for _, c := range []struct {
		name    string
		u       *unstructured.Unstructured
		after   time.Duration
		want    []string // in the message; nil: not NotReconciled
		recheck time.Duration
	}{
		{"SparkApplication past the timeout", obj(desired.SparkApplicationGVK.Kind, nil), 4 * time.Minute,
			[]string{"SparkApplication sensors", "the Spark operator", `namespace "analytics"`, "spark.jobNamespaces"}, 0},
		{"Kafka past the timeout", obj(desired.KafkaGVK.Kind, nil), timeout,
			[]string{"Strimzi's cluster operator", "watchNamespaces", "2026-11-27T10:00:00Z"}, 0},
		{"Elasticsearch with an empty status", obj(desired.ElasticsearchGVK.Kind, map[string]any{}), time.Hour,
			[]string{"ECK", "managedNamespaces"}, 0},
		{"KafkaTopic", obj(desired.KafkaTopicGVK.Kind, nil), time.Hour, []string{"Topic Operator"}, 0},
		{"within the timeout", obj(desired.SparkApplicationGVK.Kind, nil), time.Minute, nil, 2 * time.Minute},
		{"a status, however early", obj(desired.SparkApplicationGVK.Kind, map[string]any{"applicationState": map[string]any{"state": ""}}),
			time.Hour, nil, 0},
		{"not created", nil, time.Hour, nil, 0},
	} {
		s, ok, recheck := notReconciled(c.u, created.Add(c.after), timeout)
		if ok != (c.want != nil) {
			t.Errorf("%s: NotReconciled %v (%+v), want %v", c.name, ok, s, c.want != nil)
			continue
		}
		if recheck != c.recheck {
			t.Errorf("%s: recheck after %s, want %s", c.name, recheck, c.recheck)
		}
		if !ok {
			continue
		}
		if s.status != metav1.ConditionFalse || s.reason != v1alpha1.ReasonNotReconciled {
			t.Errorf("%s: %s %s, want False NotReconciled", c.name, s.status, s.reason)
		}
		for _, w := range c.want {
			if !strings.Contains(s.message, w) {
				t.Errorf("%s: message %q lacks %q", c.name, s.message, w)
			}
		}
	}
	// The message must not change from one reconcile to the next: each would write the status.
	a, _, _ := notReconciled(obj(desired.KafkaGVK.Kind, nil), created.Add(4*time.Minute), timeout)
	b, _, _ := notReconciled(obj(desired.KafkaGVK.Kind, nil), created.Add(9*time.Minute), timeout)
	if a.message != b.message {
		t.Errorf("the message changes with time:\n%s\n%s", a.message, b.message)
	}
	// 0 disables the check.
	if _, ok, recheck := notReconciled(obj(desired.KafkaGVK.Kind, nil), created.Add(time.Hour), 0); ok || recheck != 0 {
		t.Errorf("timeout 0: NotReconciled %v, recheck %s; want neither", ok, recheck)
	}
}
