package controllers_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// setRunningBrokers plays Strimzi: the broker pool's status.nodeIds lists n running brokers.
func setRunningBrokers(t *testing.T, c client.Client, p *v1alpha1.AnalyticsPipeline, n int) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pool := child(t, c, desired.KafkaNodePoolGVK, p.Namespace, desired.BrokerPoolName(p))
		if pool == nil {
			return errorf("no broker pool")
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

func controllerReplicas(t *testing.T, c client.Client, p *v1alpha1.AnalyticsPipeline) int64 {
	t.Helper()
	return poolReplicas(t, c, p, desired.ControllerPoolName(p))
}

// planNote waits until the pipeline's current generation is planned, its broker pool asks for
// brokers replicas and PlanValid's message says note.
func planNote(t *testing.T, c client.Client, p *v1alpha1.AnalyticsPipeline, brokers int64, note string) {
	t.Helper()
	waitPlanned(t, c, p, func() error {
		if got := brokerReplicas(t, c, p); got != brokers {
			return errorf("broker pool has %d replicas, want %d", got, brokers)
		}
		if msg := meta(p, v1alpha1.ConditionPlanValid).Message; !strings.Contains(msg, note) {
			return errorf("PlanValid %q does not say %q", msg, note)
		}
		return nil
	})
}

func hasCruiseControl(t *testing.T, c client.Client, p *v1alpha1.AnalyticsPipeline) (kafka, template bool) {
	t.Helper()
	k := child(t, c, desired.KafkaGVK, p.Namespace, desired.KafkaName(p))
	if k != nil {
		_, kafka, _ = unstructured.NestedMap(k.Object, "spec", "cruiseControl")
	}
	return kafka, child(t, c, desired.KafkaRebalanceGVK, p.Namespace, desired.RebalanceTemplateName(p)) != nil
}

// TestBrokerScaleDownStepsAndQuorum: a spec edit from six brokers to one lowers the broker pool
// one broker at a time, each step only once Strimzi (played by the test through the pool's
// status.nodeIds) runs no more brokers than the pool asks for; the quorum of three controllers
// the cluster was created with never changes; Cruise Control stays until the last leaving broker
// is gone. A pipeline created with one broker keeps its single controller when it grows to three.
func TestBrokerScaleDownStepsAndQuorum(t *testing.T) {
	o := startOperator(t)
	ns, _ := o.createSamples(t)
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}

	waitPlanned(t, o.c, p, func() error {
		if got := brokerReplicas(t, o.c, p); got != 3 {
			return errorf("broker pool has %d replicas, want the sample's 3", got)
		}
		return nil
	})
	if got := controllerReplicas(t, o.c, p); got != 3 {
		t.Fatalf("controller pool has %d replicas, want 3", got)
	}

	// Growth is applied at once.
	updateSpec(t, o.c, p, func() { p.Spec.Kafka.Brokers = v1alpha1.Range{Min: 6, Max: 6} })
	planNote(t, o.c, p, 6, "")
	setRunningBrokers(t, o.c, p, 6)

	// A spec drop to one broker: one step, then held while Strimzi still runs six.
	updateSpec(t, o.c, p, func() {
		p.Spec.Kafka.Brokers = v1alpha1.Range{Min: 1, Max: 1}
		p.Spec.Kafka.ReplicationFactor = 1
	})
	for running := int64(6); running > 2; running-- {
		planNote(t, o.c, p, running-1, "brokers stay at "+strconv.FormatInt(running-1, 10)+" (1 planned)")
		if got := controllerReplicas(t, o.c, p); got != 3 {
			t.Fatalf("controller pool has %d replicas with %d brokers, want the quorum of 3 kept", got, running-1)
		}
		if kafka, template := hasCruiseControl(t, o.c, p); !kafka || !template {
			t.Fatalf("Cruise Control dropped (Kafka %v, template %v) during the scale-down", kafka, template)
		}
		setRunningBrokers(t, o.c, p, int(running-1))
	}
	// Two running, two asked for: the last step, to the plan's one broker. Cruise Control stays
	// while Strimzi still runs the second broker.
	planNote(t, o.c, p, 1, "keeps the 3 controller(s)")
	if kafka, template := hasCruiseControl(t, o.c, p); !kafka || !template {
		t.Fatalf("Cruise Control dropped (Kafka %v, template %v) while the second broker still runs", kafka, template)
	}
	if got := controllerReplicas(t, o.c, p); got != 3 {
		t.Fatalf("controller pool has %d replicas with 1 broker, want the quorum of 3 kept", got)
	}
	setRunningBrokers(t, o.c, p, 1)
	waitFor(t, o.c, p, func() error {
		if kafka, template := hasCruiseControl(t, o.c, p); kafka || template {
			return errorf("Cruise Control still there (Kafka %v, template %v) with one broker running", kafka, template)
		}
		return nil
	})

	// Born with one broker: one controller, kept when the brokers grow to three.
	single := p.DeepCopy()
	single.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "single"}
	single.Status = v1alpha1.AnalyticsPipelineStatus{}
	single.Spec.Kafka.Topic.Name = "single"
	if err := o.c.Create(context.Background(), single); err != nil {
		t.Fatal(err)
	}
	planNote(t, o.c, single, 1, "")
	if got := controllerReplicas(t, o.c, single); got != 1 {
		t.Fatalf("a one-broker cluster got %d controllers, want 1", got)
	}
	updateSpec(t, o.c, single, func() { single.Spec.Kafka.Brokers = v1alpha1.Range{Min: 3, Max: 3} })
	planNote(t, o.c, single, 3, "keeps the 1 controller(s) the cluster was created with, although a new cluster of 3 broker(s) would get 3")
	if got := controllerReplicas(t, o.c, single); got != 1 {
		t.Fatalf("growing to three brokers changed the quorum to %d controllers", got)
	}
}
