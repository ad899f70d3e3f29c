package pipeline_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	"github.com/strata-dev/strata/internal/desired"
)

// setRunningBrokers plays Strimzi: the broker pool's status.nodeIds lists n running brokers.
func setRunningBrokers(t *testing.T, c client.Client, p *v1alpha1.AnalyticsPipeline, n int) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pool := envtestutil.Child(t, c, desired.KafkaNodePoolGVK, p.Namespace, desired.BrokerPoolName(p))
		if pool == nil {
			return fmt.Errorf("no broker pool")
		}
		ids := make([]any, n)
		for i := range ids {
			ids[i] = int64(i)
		}
		if err := unstructured.SetNestedSlice(pool.Object, ids, "status", "nodeIds"); err != nil {
			return err
		}
		return c.Status().Update(context.Background(), pool)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// setRebalanceReady plays Strimzi: the KafkaRebalance's moves are done.
func setRebalanceReady(t *testing.T, c client.Client, rb *unstructured.Unstructured) {
	t.Helper()
	setRebalanceState(t, c, rb, "Ready", "")
}

// setRebalanceState plays Strimzi: the KafkaRebalance's state (its one True condition) is state,
// with message.
func setRebalanceState(t *testing.T, c client.Client, rb *unstructured.Unstructured, state, message string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live := envtestutil.Child(t, c, desired.KafkaRebalanceGVK, rb.GetNamespace(), rb.GetName())
		if live == nil {
			return fmt.Errorf("KafkaRebalance %s is gone", rb.GetName())
		}
		conds := []any{map[string]any{"type": state, "status": "True", "lastTransitionTime": "2026-01-01T12:00:00Z",
			"message": message}}
		if err := unstructured.SetNestedSlice(live.Object, conds, "status", "conditions"); err != nil {
			return err
		}
		return c.Status().Update(context.Background(), live)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func controllerReplicas(t *testing.T, c client.Client, p *v1alpha1.AnalyticsPipeline) int64 {
	t.Helper()
	return envtestutil.PoolReplicas(t, c, p, desired.ControllerPoolName(p))
}

// planNote waits until the pipeline's current generation is planned, its broker pool asks for
// brokers replicas and PlanValid's message says note.
func planNote(t *testing.T, c client.Client, p *v1alpha1.AnalyticsPipeline, brokers int64, note string) {
	t.Helper()
	envtestutil.WaitPlanned(t, c, p, func() error {
		if got := envtestutil.BrokerReplicas(t, c, p); got != brokers {
			return fmt.Errorf("broker pool has %d replicas, want %d", got, brokers)
		}
		if msg := envtestutil.Meta(p, v1alpha1.ConditionPlanValid).Message; !strings.Contains(msg, note) {
			return fmt.Errorf("PlanValid %q does not say %q", msg, note)
		}
		return nil
	})
}

func hasCruiseControl(t *testing.T, c client.Client, p *v1alpha1.AnalyticsPipeline) (kafka, template bool) {
	t.Helper()
	k := envtestutil.Child(t, c, desired.KafkaGVK, p.Namespace, desired.KafkaName(p))
	if k != nil {
		_, kafka, _ = unstructured.NestedMap(k.Object, "spec", "cruiseControl")
	}
	return kafka, envtestutil.Child(t, c, desired.KafkaRebalanceGVK, p.Namespace, desired.RebalanceTemplateName(p)) != nil
}

// TestBrokerScaleDownStepsAndQuorum: a spec edit from six brokers to one lowers the broker pool
// one broker at a time, each step only once Strimzi (played by the test through the pool's
// status.nodeIds) runs no more brokers than the pool asks for; the quorum of three controllers
// the cluster was created with never changes; Cruise Control stays until the second broker is
// emptied by a remove-brokers KafkaRebalance, and goes with the pool's last step. A pipeline created with one broker keeps its single controller when it grows to three.
func TestBrokerScaleDownStepsAndQuorum(t *testing.T) {
	o := envtestutil.StartOperator(t)
	ns, _ := o.CreateSamples(t)
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}

	envtestutil.WaitPlanned(t, o.C, p, func() error {
		if got := envtestutil.BrokerReplicas(t, o.C, p); got != 3 {
			return fmt.Errorf("broker pool has %d replicas, want the sample's 3", got)
		}
		return nil
	})
	if got := controllerReplicas(t, o.C, p); got != 3 {
		t.Fatalf("controller pool has %d replicas, want 3", got)
	}

	// Growth is applied at once.
	envtestutil.UpdateSpec(t, o.C, p, func() { p.Spec.Kafka.Brokers = v1alpha1.Range{Min: 6, Max: 6} })
	planNote(t, o.C, p, 6, "")
	setRunningBrokers(t, o.C, p, 6)

	// A spec drop to one broker: one step, then held while Strimzi still runs six.
	envtestutil.UpdateSpec(t, o.C, p, func() {
		p.Spec.Kafka.Brokers = v1alpha1.Range{Min: 1, Max: 1}
		p.Spec.Kafka.ReplicationFactor = 1
	})
	for running := int64(6); running > 2; running-- {
		planNote(t, o.C, p, running-1, "brokers stay at "+strconv.FormatInt(running-1, 10)+" (1 planned)")
		if got := controllerReplicas(t, o.C, p); got != 3 {
			t.Fatalf("controller pool has %d replicas with %d brokers, want the quorum of 3 kept", got, running-1)
		}
		if kafka, template := hasCruiseControl(t, o.C, p); !kafka || !template {
			t.Fatalf("Cruise Control dropped (Kafka %v, template %v) during the scale-down", kafka, template)
		}
		setRunningBrokers(t, o.C, p, int(running-1))
	}
	// Two running, two asked for: Strimzi refuses Cruise Control with one broker in the pools,
	// so the pool stays at two while a remove-brokers KafkaRebalance empties broker 1 (the
	// highest node ID, which Strimzi removes), with Cruise Control still there.
	planNote(t, o.C, p, 2, "KafkaRebalance sensors-remove-brokers moves broker 1's partitions off")
	if kafka, template := hasCruiseControl(t, o.C, p); !kafka || !template {
		t.Fatalf("Cruise Control dropped (Kafka %v, template %v) before the second broker is empty", kafka, template)
	}
	removal := envtestutil.Child(t, o.C, desired.KafkaRebalanceGVK, p.Namespace, desired.BrokerRemovalName(p))
	if removal == nil {
		t.Fatal("no KafkaRebalance empties the second broker")
	}
	if mode, _, _ := unstructured.NestedString(removal.Object, "spec", "mode"); mode != "remove-brokers" {
		t.Errorf("the removal's mode is %q, want remove-brokers", mode)
	}
	if brokers, _, _ := unstructured.NestedSlice(removal.Object, "spec", "brokers"); len(brokers) != 1 || brokers[0] != int64(1) {
		t.Errorf("the removal empties brokers %v, want [1]", brokers)
	}
	// Strimzi runs it, or refuses it while the Kafka is not Ready (the real Strimzi's first
	// answer under the upstream harness): the removal is what empties the broker, so it stays,
	// the same object, and PlanValid says what Strimzi reports. (Counted as a rebalance that
	// holds brokers back, it was deleted and made again thousands of times a minute.)
	for _, st := range []struct{ state, message, note string }{
		{"Rebalancing", "", "Strimzi reports it Rebalancing"},
		{"NotReady", "Kafka cluster is not Ready", "Strimzi reports it NotReady: Kafka cluster is not Ready"},
	} {
		setRebalanceState(t, o.C, removal, st.state, st.message)
		planNote(t, o.C, p, 2, st.note)
		if got := envtestutil.Child(t, o.C, desired.KafkaRebalanceGVK, p.Namespace, desired.BrokerRemovalName(p)); got == nil || got.GetUID() != removal.GetUID() {
			t.Fatalf("the broker removal was deleted or made again while Strimzi reported it %s", st.state)
		}
	}
	// It has been NotReady since long ago (the condition's time): Strimzi, which leaves it so
	// until asked, is asked to try it again.
	envtestutil.WaitFor(t, o.C, removal, func() error {
		if got := removal.GetAnnotations()[desired.RebalanceAnnotation]; got != "refresh" {
			return fmt.Errorf("annotation %s %q, want refresh", desired.RebalanceAnnotation, got)
		}
		return nil
	})
	// Strimzi reports it done: the pool goes to one broker and Cruise Control goes with it in
	// the same apply (what Strimzi accepts), and the removal is no longer wanted.
	setRebalanceReady(t, o.C, removal)
	planNote(t, o.C, p, 1, "keeps the 3 controller(s)")
	envtestutil.WaitFor(t, o.C, p, func() error {
		if kafka, template := hasCruiseControl(t, o.C, p); kafka || template {
			return fmt.Errorf("Cruise Control still there (Kafka %v, template %v) with the pool at one broker", kafka, template)
		}
		if envtestutil.Child(t, o.C, desired.KafkaRebalanceGVK, p.Namespace, desired.BrokerRemovalName(p)) != nil {
			return fmt.Errorf("the broker removal is still there")
		}
		return nil
	})
	if got := controllerReplicas(t, o.C, p); got != 3 {
		t.Fatalf("controller pool has %d replicas with 1 broker, want the quorum of 3 kept", got)
	}
	setRunningBrokers(t, o.C, p, 1)

	// Born with one broker: one controller, kept when the brokers grow to three.
	single := p.DeepCopy()
	single.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "single"}
	single.Status = v1alpha1.AnalyticsPipelineStatus{}
	single.Spec.Kafka.Topic.Name = "single"
	if err := o.C.Create(context.Background(), single); err != nil {
		t.Fatal(err)
	}
	planNote(t, o.C, single, 1, "")
	if got := controllerReplicas(t, o.C, single); got != 1 {
		t.Fatalf("a one-broker cluster got %d controllers, want 1", got)
	}
	envtestutil.UpdateSpec(t, o.C, single, func() { single.Spec.Kafka.Brokers = v1alpha1.Range{Min: 3, Max: 3} })
	planNote(t, o.C, single, 3, "keeps the 1 controller(s) the cluster was created with, although a new cluster of 3 broker(s) would get 3")
	if got := controllerReplicas(t, o.C, single); got != 1 {
		t.Fatalf("growing to three brokers changed the quorum to %d controllers", got)
	}
}
