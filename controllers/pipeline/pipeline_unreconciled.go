package pipeline

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// A child object no operator picks up waits forever without a word: the Spark operator's chart
// watches only `default` unless told otherwise (spark.jobNamespaces), Strimzi's cluster operator
// only its own namespace (the chart's watchNamespaces / watchAnyNamespace, STRIMZI_NAMESPACE),
// ECK every namespace unless limited (the eck-operator chart's managedNamespaces, its
// --namespaces flag). A pipeline in another namespace would stay Progressing, "not yet
// reconciled", with nothing to say why. So a child that has had no status at all for
// DefaultUpstreamStatusTimeout after it was created is reported NotReconciled, naming the
// operator, the namespace and the setting to check; the reconcile looks again when that time
// is up, since no event from the child will come.

// DefaultUpstreamStatusTimeout is the manager's --upstream-status-timeout default: longer than
// any of the three operators takes to write a first status on a busy cluster (each writes one
// on its first reconcile of the object, before it creates anything: Strimzi's Kafka status with
// its first NotReady/Ready condition, the Spark operator's applicationState on submission,
// ECK's phase), short enough that a user who applied a pipeline is told while still looking.
const DefaultUpstreamStatusTimeout = 3 * time.Minute

// upstreamOperator names the operator that reconciles a kind and the setting that decides the
// namespaces it watches, for the NotReconciled message.
type upstreamOperator struct{ name, watches string }

var upstreamOperators = map[string]upstreamOperator{
	desired.KafkaGVK.Kind: {"Strimzi's cluster operator",
		"its STRIMZI_NAMESPACE, the Strimzi chart's watchNamespaces or watchAnyNamespace"},
	desired.KafkaTopicGVK.Kind: {"Strimzi's Topic Operator (the Kafka's entity operator)",
		"the Kafka's spec.entityOperator.topicOperator; it watches the Kafka's own namespace"},
	desired.KafkaUserGVK.Kind: {"Strimzi's User Operator (the Kafka's entity operator)",
		"the Kafka's spec.entityOperator.userOperator; it watches the Kafka's own namespace"},
	desired.SparkApplicationGVK.Kind: {"the Spark operator",
		"the Spark operator chart's spark.jobNamespaces, [default] unless set"},
	desired.ElasticsearchGVK.Kind: {"ECK",
		"the eck-operator chart's managedNamespaces, the operator's --namespaces flag"},
}

// notReconciled returns the NotReconciled status for u when it exists, has no status at all and
// was created at least timeout before now; else ok is false and recheck is how long until it
// would be (0: never, the object has a status or does not exist).
func notReconciled(u *unstructured.Unstructured, now time.Time, timeout time.Duration) (s childStatus, ok bool, recheck time.Duration) {
	if u == nil || timeout <= 0 {
		return childStatus{}, false, 0
	}
	if st, found, _ := unstructured.NestedMap(u.Object, "status"); found && len(st) > 0 {
		return childStatus{}, false, 0
	}
	age := now.Sub(u.GetCreationTimestamp().Time)
	if created := u.GetCreationTimestamp(); created.IsZero() || age < timeout {
		return childStatus{}, false, max(timeout-age, time.Second)
	}
	op, known := upstreamOperators[u.GetKind()]
	if !known {
		return childStatus{}, false, 0
	}
	// The message holds no age, which would change at every reconcile and write the status
	// each time: the creation time and the timeout say the same once.
	return childStatus{metav1.ConditionFalse, v1alpha1.ReasonNotReconciled, fmt.Sprintf(
		"%s %s has had no status from %s in the %s since it was created (%s): is %s running, and does it watch namespace %q (%s)?",
		u.GetKind(), u.GetName(), op.name, timeout, u.GetCreationTimestamp().UTC().Format(time.RFC3339), op.name,
		u.GetNamespace(), op.watches)}, true, 0
}

// sooner is the earlier of two recheck times, 0 meaning none.
func sooner(a, b time.Duration) time.Duration {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}
