package upstream

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/autoscale"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil"
)

// No Kafka runs in the harness, so two answers a real cluster gives Strimzi come from the test:
//   - Strimzi asks the brokers (Kafka's Admin API, KafkaClusterCreator.brokerRemovalCheck in
//     strimzi-kafka-operator 1.2.0) whether a broker it is to remove still holds replicas, and
//     fails the whole reconcile when they cannot be reached. The Kafka's
//     strimzi.io/skip-broker-scaledown-check annotation (same function) stands in for the
//     answer "empty" a real cluster gives once Cruise Control moved the partitions off;
//   - Cruise Control, which moves them, does not run: the test sets the KafkaRebalance Strata
//     makes for the last broker but one Ready, as Strimzi does when Cruise Control reports the
//     moves done (KafkaRebalanceAssemblyOperator: a Ready rebalance whose observedGeneration
//     matches stays Ready, without asking Cruise Control again).
// Everything else — which broker count Strata applies when, Strimzi's validation of each Kafka,
// its pod sets and pods, the scheduler — is the real thing.

// skipScaleDownCheck annotates the pipeline's Kafka as a test's stand-in for empty brokers.
func skipScaleDownCheck(ctx context.Context, t *testing.T, h *Cluster, p *v1alpha1.AnalyticsPipeline) {
	t.Helper()
	k := &unstructured.Unstructured{}
	k.SetGroupVersionKind(desired.KafkaGVK)
	k.SetNamespace(p.Namespace)
	k.SetName(desired.KafkaName(p))
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"strimzi.io/skip-broker-scaledown-check":"true"}}}`))
	if err := h.Client.Patch(ctx, k, patch, client.FieldOwner("harness")); err != nil {
		t.Fatal(err)
	}
}

// setLoad changes the pipeline's messages per second.
func setLoad(ctx context.Context, t *testing.T, h *Cluster, p *v1alpha1.AnalyticsPipeline, perSecond int) {
	t.Helper()
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"workload":{"messagesPerSecond":%d}}}`, perSecond)))
	if err := h.Client.Patch(ctx, &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}, patch); err != nil {
		t.Fatal(err)
	}
}

// history records every distinct value f gives an object as the API server reports its changes
// (a watch: no state between two is missed, as a poll could).
type history struct {
	mu     sync.Mutex
	values []string
}

func (r *history) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.values)
}

func record(ctx context.Context, t *testing.T, h *Cluster, gvk schema.GroupVersionKind, ns, name string, f func(*unstructured.Unstructured) string) *history {
	t.Helper()
	wc, err := client.NewWithWatch(h.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	w, err := wc.Watch(ctx, list, client.InNamespace(ns), client.MatchingFields{"metadata.name": name})
	if err != nil {
		t.Fatal(err)
	}
	r := &history{}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type == watch.Error {
				continue
			}
			v := f(u)
			r.mu.Lock()
			if n := len(r.values); n == 0 || r.values[n-1] != v {
				r.values = append(r.values, v)
			}
			r.mu.Unlock()
		}
	}()
	return r
}

// poolState is a node pool's spec.replicas and how many node IDs Strimzi reports for it.
type poolState struct{ replicas, nodes int }

func poolStateOf(u *unstructured.Unstructured) string {
	n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	ids, _, _ := unstructured.NestedSlice(u.Object, "status", "nodeIds")
	return fmt.Sprintf("%d/%d", n, len(ids))
}

func parsePoolStates(t *testing.T, values []string) []poolState {
	out := make([]poolState, 0, len(values))
	for _, v := range values {
		var s poolState
		if _, err := fmt.Sscanf(v, "%d/%d", &s.replicas, &s.nodes); err != nil {
			t.Fatalf("pool state %q: %v", v, err)
		}
		out = append(out, s)
	}
	return out
}

// checkOneAtATime fails unless every lowering of the pool's replicas is by one, from a count
// Strimzi had reached (its node IDs), as Strata's broker step promises.
func checkOneAtATime(t *testing.T, states []poolState) {
	t.Helper()
	for i := 1; i < len(states); i++ {
		prev, cur := states[i-1], states[i]
		if cur.replicas >= prev.replicas {
			continue
		}
		if cur.replicas != prev.replicas-1 {
			t.Errorf("the broker pool went from %d to %d replicas at once", prev.replicas, cur.replicas)
		}
		if prev.nodes != prev.replicas {
			t.Errorf("the broker pool went to %d replicas while Strimzi ran %d nodes for %d", cur.replicas, prev.nodes, prev.replicas)
		}
	}
}

// conditionsOf is a Kafka's conditions, one line.
func conditionsOf(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var parts []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		parts = append(parts, fmt.Sprintf("%v=%v %v: %v", m["type"], m["status"], m["reason"], m["message"]))
	}
	return strings.Join(parts, "; ")
}

// checkNeverRefused fails for every Kafka status in which Strimzi refused the resource.
func checkNeverRefused(t *testing.T, kafka []string) {
	t.Helper()
	for _, c := range kafka {
		if strings.Contains(c, "InvalidResource") {
			t.Errorf("Strimzi refused the Kafka: %s", c)
		}
	}
}

// waitBrokers waits for the broker pool at want replicas, Strimzi's node IDs and Running pods.
func waitBrokers(ctx context.Context, t *testing.T, h *Cluster, p *v1alpha1.AnalyticsPipeline, want int) {
	t.Helper()
	waitBrokersWhile(ctx, t, h, p, want, nil)
}

// waitBrokersWhile is waitBrokers, calling meanwhile (when not nil) before each look.
func waitBrokersWhile(ctx context.Context, t *testing.T, h *Cluster, p *v1alpha1.AnalyticsPipeline, want int, meanwhile func()) {
	t.Helper()
	pool := &unstructured.Unstructured{}
	pool.SetGroupVersionKind(desired.KafkaNodePoolGVK)
	sel := client.MatchingLabels{desired.StrimziClusterLabel: desired.KafkaName(p), desired.StrimziPoolLabel: desired.BrokerPoolName(p)}
	testutil.Eventually(t, upstreamWait, fmt.Sprintf("%d brokers in the pool, Strimzi's node IDs and Running pods", want), func() error {
		if meanwhile != nil {
			meanwhile()
		}
		if err := h.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: desired.BrokerPoolName(p)}, pool); err != nil {
			return err
		}
		if s := poolStateOf(pool); s != fmt.Sprintf("%d/%d", want, want) {
			return fmt.Errorf("pool replicas/node IDs %s", s)
		}
		var pods corev1.PodList
		if err := h.Client.List(ctx, &pods, client.InNamespace(p.Namespace), sel); err != nil {
			return err
		}
		running := 0
		var not []string
		for _, pod := range pods.Items {
			if pod.Status.Phase == corev1.PodRunning && pod.DeletionTimestamp == nil {
				running++
			} else {
				not = append(not, pod.Name+" "+scheduling(&pod))
			}
		}
		if running != want || len(pods.Items) != want {
			return fmt.Errorf("%d pods, %d Running; not: %s", len(pods.Items), running, strings.Join(not, "; "))
		}
		return nil
	})
}

// soloPipeline is the sample renamed, with one replica and a minimum of one broker, at a load
// that plans two.
func soloPipeline(p *v1alpha1.AnalyticsPipeline) *v1alpha1.AnalyticsPipeline {
	solo := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: "solo"}, Spec: *p.Spec.DeepCopy()}
	solo.Spec.Kafka.ReplicationFactor = 1
	solo.Spec.Kafka.Brokers.Min, solo.Spec.Kafka.Brokers.Max = 1, 3
	solo.Spec.Kafka.Topic.Name = "solo"
	solo.Spec.Workload.MessagesPerSecond = 12000
	return solo
}

// emptyingRebalance waits for the remove-brokers KafkaRebalance Strata makes for the broker
// that leaves when the pool goes from two to one, and checks that it names the pool's highest
// node ID (the one Strimzi removes).
func emptyingRebalance(ctx context.Context, t *testing.T, h *Cluster, p *v1alpha1.AnalyticsPipeline) *unstructured.Unstructured {
	t.Helper()
	pool := &unstructured.Unstructured{}
	pool.SetGroupVersionKind(desired.KafkaNodePoolGVK)
	if err := h.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: desired.BrokerPoolName(p)}, pool); err != nil {
		t.Fatal(err)
	}
	ids, _, _ := unstructured.NestedSlice(pool.Object, "status", "nodeIds")
	var highest int64 = -1
	for _, id := range ids {
		if n, ok := id.(int64); ok && n > highest {
			highest = n
		}
	}
	rb := &unstructured.Unstructured{}
	rb.SetGroupVersionKind(desired.KafkaRebalanceGVK)
	testutil.Eventually(t, upstreamWait, "the remove-brokers KafkaRebalance", func() error {
		return h.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: desired.BrokerRemovalName(p)}, rb)
	})
	mode, _, _ := unstructured.NestedString(rb.Object, "spec", "mode")
	brokers, _, _ := unstructured.NestedSlice(rb.Object, "spec", "brokers")
	if mode != "remove-brokers" || len(brokers) != 1 || brokers[0] != highest {
		t.Errorf("KafkaRebalance %s: mode %q brokers %v, want remove-brokers [%d]", rb.GetName(), mode, brokers, highest)
	}
	return rb
}

// keepRebalanceReady reports rb Ready, as Strimzi does once Cruise Control has moved the
// replicas, whenever it is there and does not say so. The real Strimzi runs here without
// brokers, and its periodic reconciliation writes NotReady ("Kafka cluster is not Ready") over
// a Ready written once: on a loaded machine that came before the operator read the Ready, and
// the pool stayed at two (a test that raced the upstream controller, not the operator).
func keepRebalanceReady(ctx context.Context, h *Cluster, rb *unstructured.Unstructured) {
	_ = setRebalanceReady(ctx, h, rb, true) // gone, or a conflict: tried again at the next look
}

// markRebalanceReady is Cruise Control's part: the moves are done.
func markRebalanceReady(ctx context.Context, t *testing.T, h *Cluster, rb *unstructured.Unstructured) {
	t.Helper()
	testutil.Eventually(t, upstreamWait, "the KafkaRebalance marked Ready", func() error {
		return setRebalanceReady(ctx, h, rb, false)
	})
}

// setRebalanceReady writes Ready as rb's only condition, as Strimzi does when the moves are
// done; unless it says Ready already and onlyIfNot is set.
func setRebalanceReady(ctx context.Context, h *Cluster, rb *unstructured.Unstructured, onlyIfNot bool) error {
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(rb.GroupVersionKind())
	if err := h.Client.Get(ctx, client.ObjectKeyFromObject(rb), cur); err != nil {
		return err
	}
	if onlyIfNot && autoscale.RebalanceReady(cur) {
		return nil
	}
	cur.Object["status"] = map[string]any{
		"observedGeneration": cur.GetGeneration(),
		"conditions": []any{map[string]any{"type": "Ready", "status": "True",
			"lastTransitionTime": metav1.Now().UTC().Format("2006-01-02T15:04:05Z")}},
	}
	return h.Client.Status().Update(ctx, cur)
}
