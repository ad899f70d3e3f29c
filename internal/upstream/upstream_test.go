package upstream

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil"
)

// upstreamWait is how long a real controller may take to act: generous, since a loaded two-core
// machine runs a dozen processes here; the waits end as soon as the state is reached.
const upstreamWait = 5 * time.Minute

// TestSampleRunsOnRealControllers applies config/samples and checks what the real controllers
// made of it: ECK's StatefulSets and their pods Running on nodes the real scheduler chose, the
// data claims bound to Strata's local volumes on those nodes, the masters on three nodes; the
// driver pod created by the real spark-submit with its security context and ServiceAccount; and
// every object each pod names existing; and `strata render`'s output for the sample the same as
// what the operator applied.
func TestSampleRunsOnRealControllers(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the upstream harness starts a control plane and six controllers")
	}
	tiers, p := Samples(t)
	h := Start(t, Options{Fixtures: tiers})
	ctx := context.Background()
	if err := h.Client.Create(ctx, p); err != nil {
		t.Fatalf("applying the sample pipeline: %v", err)
	}
	t.Run("Elasticsearch", func(t *testing.T) { checkElasticsearch(ctx, t, h, p.Namespace, desired.ElasticsearchName(p)) })
	t.Run("SparkDriver", func(t *testing.T) { checkDriver(ctx, t, h, p.Namespace, desired.SparkApplicationName(p)) })
	t.Run("References", func(t *testing.T) { checkReferences(ctx, t, h, p.Namespace, desired.KafkaUserName(p)) })
	t.Run("Conditions", func(t *testing.T) { checkConditions(ctx, t, h, p) })
	t.Run("RenderIsWhatTheOperatorApplied", func(t *testing.T) { checkRendered(ctx, t, h, p) })
	h.Alive(t)
}

// checkElasticsearch waits for ECK's StatefulSets and their pods, then checks placement.
func checkElasticsearch(ctx context.Context, t *testing.T, h *Cluster, ns, es string) {
	sel := client.MatchingLabels{"elasticsearch.k8s.elastic.co/cluster-name": es}
	var pods corev1.PodList
	testutil.Eventually(t, upstreamWait, "ECK's pods Running", func() error {
		var sets appsv1.StatefulSetList
		if err := h.Client.List(ctx, &sets, client.InNamespace(ns), sel); err != nil {
			return err
		}
		if len(sets.Items) < 2 {
			return fmt.Errorf("%d StatefulSets", len(sets.Items))
		}
		if err := h.Client.List(ctx, &pods, client.InNamespace(ns), sel); err != nil {
			return err
		}
		want := int32(0)
		for _, s := range sets.Items {
			want += *s.Spec.Replicas
		}
		running := 0
		var pending []string
		for _, pod := range pods.Items {
			if pod.Status.Phase == corev1.PodRunning {
				running++
			} else {
				pending = append(pending, pod.Name+" "+scheduling(&pod))
			}
		}
		if running < int(want) || len(pods.Items) < int(want) {
			return fmt.Errorf("%d of %d pods Running; not: %s", running, want, strings.Join(pending, "; "))
		}
		return nil
	})
	masters := map[string]int{}
	for _, pod := range pods.Items {
		if pod.Labels["elasticsearch.k8s.elastic.co/statefulset-name"] == es+"-es-master" {
			masters[pod.Spec.NodeName]++
		}
	}
	t.Logf("masters per node: %v", masters)
	for node, n := range masters {
		if n > 1 {
			t.Errorf("%d masters on node %s: losing it loses the quorum", n, node)
		}
	}
	checkClaims(ctx, t, h, ns, pods.Items)
}

// checkClaims checks that every claim of pods is bound to a volume on the pod's node.
func checkClaims(ctx context.Context, t *testing.T, h *Cluster, ns string, pods []corev1.Pod) {
	for _, pod := range pods {
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim == nil {
				continue
			}
			var pvc corev1.PersistentVolumeClaim
			if err := h.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: v.PersistentVolumeClaim.ClaimName}, &pvc); err != nil {
				t.Fatal(err)
			}
			if pvc.Status.Phase != corev1.ClaimBound {
				t.Errorf("claim %s of %s: %s", pvc.Name, pod.Name, pvc.Status.Phase)
				continue
			}
			var pv corev1.PersistentVolume
			if err := h.Client.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, &pv); err != nil {
				t.Fatal(err)
			}
			if zone := volumeZone(&pv); zone != "" {
				var n corev1.Node
				if err := h.Client.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, &n); err != nil {
					t.Fatal(err)
				}
				if n.Labels[ZoneLabel] != zone {
					t.Errorf("claim %s of pod %s on node %s (zone %q) is bound to %s, a volume of zone %q", pvc.Name, pod.Name, pod.Spec.NodeName, n.Labels[ZoneLabel], pv.Name, zone)
				}
			} else if node := volumeNode(&pv); node != pod.Spec.NodeName {
				t.Errorf("claim %s of pod %s on node %s is bound to %s, a volume of node %q", pvc.Name, pod.Name, pod.Spec.NodeName, pv.Name, node)
			}
		}
	}
}

// checkDriver waits for the driver pod spark-submit creates and checks what a kubelet would
// need of it.
func checkDriver(ctx context.Context, t *testing.T, h *Cluster, ns, app string) {
	var driver corev1.Pod
	testutil.Eventually(t, upstreamWait, "the Spark driver pod Running", func() error {
		if err := h.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: app + "-driver"}, &driver); err != nil {
			return err
		}
		if driver.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("driver %s", scheduling(&driver))
		}
		return nil
	})
	if sc := driver.Spec.SecurityContext; sc == nil || sc.FSGroup == nil {
		t.Errorf("driver pod has no fsGroup: the image's uid 185 cannot write its volumes")
	}
	if driver.Spec.ServiceAccountName == "" || driver.Spec.ServiceAccountName == "default" {
		t.Errorf("driver pod runs as ServiceAccount %q, not the pipeline's", driver.Spec.ServiceAccountName)
	}
}

// volumeNode is the node a local volume's node affinity names.
func volumeNode(pv *corev1.PersistentVolume) string {
	return affinityValue(pv, corev1.LabelHostname, metav1.ObjectNameField)
}

// volumeZone is the zone a network volume's node affinity names ("" for a volume of one node).
func volumeZone(pv *corev1.PersistentVolume) string { return affinityValue(pv, ZoneLabel) }

// affinityValue is the one value a volume's node affinity requires of the first of keys it
// names, in its expressions or fields ("" when none).
func affinityValue(pv *corev1.PersistentVolume, keys ...string) string {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return ""
	}
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, e := range append(term.MatchExpressions, term.MatchFields...) {
			if slices.Contains(keys, e.Key) && len(e.Values) == 1 {
				return e.Values[0]
			}
		}
	}
	return ""
}

// scheduling is why a pod is not running: the scheduler's message when it could not place it.
func scheduling(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue {
			return c.Reason + ": " + c.Message
		}
	}
	return string(pod.Status.Phase)
}

// checkReferences fails for every object a pod in ns names that does not exist, but the
// KafkaUser's Secret, which Strimzi's User Operator makes (Strimzi does not run here).
func checkReferences(ctx context.Context, t *testing.T, h *Cluster, ns, kafkaUser string) {
	var missing []string
	// A kubelet retries a missing volume source: spark-submit makes the driver's ConfigMaps
	// just after its pod (they are owned by it), so a moment's absence is no defect.
	_ = testutil.Wait(time.Minute, func() error {
		var err error
		if missing, err = CheckReferences(ctx, h.Client, ns); err != nil {
			return err
		}
		for _, m := range missing {
			if !strings.Contains(m, "Secret "+kafkaUser+" ") {
				return fmt.Errorf("%s", m)
			}
		}
		return nil
	})
	for _, m := range missing {
		if strings.Contains(m, "Secret "+kafkaUser+" ") {
			t.Logf("%s: Strimzi's User Operator makes it, and Strimzi does not run here", m)
			continue
		}
		t.Error(m)
	}
}

// checkConditions checks that the pipeline's conditions follow what the real controllers
// report: Elasticsearch not ready while ECK finds no Elasticsearch behind its pods (health
// unknown), Kafka not reconciled by any operator (no Strimzi here), and Ready false.
func checkConditions(ctx context.Context, t *testing.T, h *Cluster, p *v1alpha1.AnalyticsPipeline) {
	got := &v1alpha1.AnalyticsPipeline{}
	testutil.Eventually(t, upstreamWait, "the pipeline's conditions to name what the controllers report", func() error {
		if err := h.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			return err
		}
		kafka := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionKafkaReady)
		switch {
		case h.Strimzi && (kafka == nil || kafka.Status != metav1.ConditionFalse || kafka.Reason == v1alpha1.ReasonNotReconciled):
			// Strimzi runs but no broker does: its status says the cluster is not ready.
			return fmt.Errorf("KafkaReady %+v, want False from Strimzi's status", kafka)
		case !h.Strimzi && (kafka == nil || kafka.Status != metav1.ConditionFalse || kafka.Reason != v1alpha1.ReasonNotReconciled ||
			!strings.Contains(kafka.Message, "Strimzi")):
			return fmt.Errorf("KafkaReady %+v, want False, NotReconciled, naming Strimzi", kafka)
		}
		es := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionElasticsearchReady)
		if es == nil || es.Status != metav1.ConditionFalse || es.Reason == v1alpha1.ReasonNotReconciled {
			return fmt.Errorf("ElasticsearchReady %+v, want False from ECK's own status", es)
		}
		if r := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady); r == nil || r.Status != metav1.ConditionFalse {
			return fmt.Errorf("Ready %+v, want False", r)
		}
		return nil
	})
	for _, c := range got.Status.Conditions {
		t.Logf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
}
