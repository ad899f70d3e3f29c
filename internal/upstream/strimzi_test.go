package upstream

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil"
)

// TestStrimziRunsTheSample runs Strimzi's real cluster operator on the sample: it accepts the
// Kafka and its node pools, makes a StrimziPodSet per pool and their pods, which the real
// scheduler places by the pools' templates: the brokers and the controllers each on nodes of
// their own, none on the tainted control-plane node, the brokers only where the tier's disks
// are, each pod's claims bound on its node (the brokers' logs to Strata's local volumes). No broker
// process runs, so Strimzi stops short of a ready cluster (it cannot reach the brokers). Then
// brokers are added, removed one at a time down to the spec's minimum, and, in a pipeline whose
// minimum is one, the last broker but one is emptied by a KafkaRebalance before the pool goes to
// one broker without Cruise Control (brokers_test.go says what the test answers for the
// brokers and Cruise Control, which do not run here).
func TestStrimziRunsTheSample(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the upstream harness starts a control plane and seven controllers")
	}
	if StrimziBuild(t) == "" {
		t.Skipf("no Strimzi build: Kafka's pods, spread and claims under Strimzi not checked (hack/strimzi.sh builds it from "+
			"GitHub's source; or set %s)", EnvStrimzi)
	}
	tiers, p := Samples(t)
	// The default nodes and six more with the tier's disks: a second pipeline ("solo", below)
	// needs whole disks for its brokers and data nodes beside the sample's, whose claims stay.
	nodes := DefaultNodes()
	for i := range 6 {
		nodes = append(nodes, Node{Name: fmt.Sprintf("nvme-extra-%d", i), Zone: nodes[i%3].Zone,
			Labels: map[string]string{NVMeLabel: "true"}, CPU: "16", Memory: "64Gi"})
	}
	h := Start(t, Options{Fixtures: tiers, Nodes: nodes})
	ctx := context.Background()
	if err := h.Client.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	byName := map[string]corev1.Node{}
	var list corev1.NodeList
	if err := h.Client.List(ctx, &list); err != nil {
		t.Fatal(err)
	}
	for _, n := range list.Items {
		byName[n.Name] = n
	}
	for _, pool := range []string{desired.BrokerPoolName(p), desired.ControllerPoolName(p)} {
		t.Run(pool, func(t *testing.T) {
			sel := client.MatchingLabels{desired.StrimziClusterLabel: desired.KafkaName(p), desired.StrimziPoolLabel: pool}
			var pods corev1.PodList
			testutil.Eventually(t, upstreamWait, "Strimzi's "+pool+" pods Running", func() error {
				if err := h.Client.List(ctx, &pods, client.InNamespace(p.Namespace), sel); err != nil {
					return err
				}
				if len(pods.Items) == 0 {
					return fmt.Errorf("no pods")
				}
				for _, pod := range pods.Items {
					if pod.Status.Phase != corev1.PodRunning {
						return fmt.Errorf("%s %s", pod.Name, scheduling(&pod))
					}
				}
				return nil
			})
			seen := map[string]string{}
			workload := desired.WorkloadKafkaController
			if pool == desired.BrokerPoolName(p) {
				workload = desired.WorkloadKafkaBroker
			}
			for _, pod := range pods.Items {
				// Strimzi copies the pool's template labels onto its pods: the operator finds a
				// pipeline's pods by them (PodsScheduled).
				if pod.Labels[desired.LabelPipeline] != p.Name || pod.Labels[desired.LabelWorkload] != workload {
					t.Errorf("%s has labels %v, want %s=%s and %s=%s from the pool's template", pod.Name, pod.Labels,
						desired.LabelPipeline, p.Name, desired.LabelWorkload, workload)
				}
				node := byName[pod.Spec.NodeName]
				if other, ok := seen[node.Name]; ok {
					t.Errorf("%s and %s on node %s: one node's loss takes both", other, pod.Name, node.Name)
				}
				seen[node.Name] = pod.Name
				if len(node.Spec.Taints) > 0 {
					t.Errorf("%s on tainted node %s", pod.Name, node.Name)
				}
				if pool == desired.BrokerPoolName(p) && node.Labels[NVMeLabel] != "true" {
					t.Errorf("broker %s on node %s, which has no NVMe disks", pod.Name, node.Name)
				}
			}
			t.Logf("%s pods on nodes %v", pool, seen)
			checkClaims(ctx, t, h, p.Namespace, pods.Items)
		})
	}
	t.Run("Conditions", func(t *testing.T) { checkConditions(ctx, t, h, p) })
	t.Run("a broker added", func(t *testing.T) {
		got := &v1alpha1.AnalyticsPipeline{}
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"workload":{"messagesPerSecond":14000}}}`))
		if err := h.Client.Patch(ctx, &v1alpha1.AnalyticsPipeline{ObjectMeta: p.ObjectMeta}, patch); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, upstreamWait, "the plan for 14000 msgs/s", func() error {
			if err := h.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
				return err
			}
			if got.Status.ObservedGeneration != got.Generation || got.Status.Plan == nil {
				return fmt.Errorf("generation %d observed %d", got.Generation, got.Status.ObservedGeneration)
			}
			return nil
		})
		want := int(got.Status.Plan.Brokers)
		t.Logf("brokers planned: %d", want)
		sel := client.MatchingLabels{desired.StrimziClusterLabel: desired.KafkaName(p), desired.StrimziPoolLabel: desired.BrokerPoolName(p)}
		testutil.Eventually(t, upstreamWait, fmt.Sprintf("Strimzi's %d broker pods Running", want), func() error {
			var pods corev1.PodList
			if err := h.Client.List(ctx, &pods, client.InNamespace(p.Namespace), sel); err != nil {
				return err
			}
			running := 0
			for _, pod := range pods.Items {
				if pod.Status.Phase == corev1.PodRunning {
					running++
				}
			}
			if running != want {
				return fmt.Errorf("%d of %d brokers Running", running, want)
			}
			return nil
		})
	})
	t.Run("brokers removed one at a time", func(t *testing.T) {
		pools := record(ctx, t, h, desired.KafkaNodePoolGVK, p.Namespace, desired.BrokerPoolName(p), poolStateOf)
		kafka := record(ctx, t, h, desired.KafkaGVK, p.Namespace, desired.KafkaName(p), conditionsOf)
		skipScaleDownCheck(ctx, t, h, p)
		setLoad(ctx, t, h, p, 2000) // the spec's minimum, 2 brokers
		waitBrokers(ctx, t, h, p, 2)
		t.Logf("broker pool replicas/node IDs: %v", pools.all())
		states := parsePoolStates(t, pools.all())
		checkOneAtATime(t, states)
		if states[0].replicas < 4 {
			t.Errorf("the scale-down started from %d brokers, want the 4 of 14000 msgs/s: fewer steps than the test means", states[0].replicas)
		}
		checkNeverRefused(t, kafka.all())
	})
	t.Run("the last broker but one emptied first", func(t *testing.T) {
		solo := soloPipeline(p)
		if err := h.Client.Create(ctx, solo); err != nil {
			t.Fatal(err)
		}
		waitBrokers(ctx, t, h, solo, 2)
		pools := record(ctx, t, h, desired.KafkaNodePoolGVK, solo.Namespace, desired.BrokerPoolName(solo), poolStateOf)
		kafka := record(ctx, t, h, desired.KafkaGVK, solo.Namespace, desired.KafkaName(solo), conditionsOf)
		skipScaleDownCheck(ctx, t, h, solo)
		setLoad(ctx, t, h, solo, 1000) // one broker's load
		rb := emptyingRebalance(ctx, t, h, solo)
		pool := &unstructured.Unstructured{}
		pool.SetGroupVersionKind(desired.KafkaNodePoolGVK)
		if err := h.Client.Get(ctx, client.ObjectKey{Namespace: solo.Namespace, Name: desired.BrokerPoolName(solo)}, pool); err != nil {
			t.Fatal(err)
		}
		if s := poolStateOf(pool); s != "2/2" {
			t.Errorf("the broker pool is at %s (replicas/node IDs) while its broker is emptied, want 2/2", s)
		}
		markRebalanceReady(ctx, t, h, rb)
		waitBrokersWhile(ctx, t, h, solo, 1, func() { keepRebalanceReady(ctx, h, rb) })
		k := &unstructured.Unstructured{}
		k.SetGroupVersionKind(desired.KafkaGVK)
		if err := h.Client.Get(ctx, client.ObjectKey{Namespace: solo.Namespace, Name: desired.KafkaName(solo)}, k); err != nil {
			t.Fatal(err)
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(k.Object, "spec", "cruiseControl"); found {
			t.Error("the one-broker Kafka keeps Cruise Control, which Strimzi refuses")
		}
		t.Logf("broker pool replicas/node IDs: %v", pools.all())
		checkOneAtATime(t, parsePoolStates(t, pools.all()))
		checkNeverRefused(t, kafka.all())
	})
	h.Alive(t)
}
