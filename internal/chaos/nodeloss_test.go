package chaos

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/upstream"
)

// A node lost with its local volume, on the real controllers: the cloud deletes the Node; the
// controller-manager's pod garbage collector deletes the pods bound to it (podgc's gcOrphaned,
// after its 40 s quarantine); ECK's StatefulSet makes the pod again, which stays Pending, its
// claim bound to a volume whose node affinity names the lost node; Strata's tier reconciler
// (spec.local.nodeLoss.deleteClaims) deletes that claim, and the StatefulSet controller makes it
// again for the Pending pod (kubernetes v1.36.3 pkg/controller/statefulset/stateful_set_control.go,
// processReplica: a Pending pod's missing claims are created); the scheduler binds it to a free
// volume on another node. The lost volume keeps its data (Released, never wiped while its node is
// gone); when the node comes back, Strata wipes it and frees it.

// lostNode is what loseNode took away.
type lostNode struct {
	node, claim, volume string
	uid                 types.UID
}

// withNodeLoss turns on spec.local.nodeLoss.deleteClaims in the local tiers: the pipelines'
// claims on a deleted node are deleted at once (a deleted Node counts without grace).
func withNodeLoss(tiers []client.Object) {
	for _, o := range tiers {
		if t, ok := o.(*v1alpha1.StorageTier); ok && t.Spec.Local != nil {
			t.Spec.Local.NodeLoss = &v1alpha1.NodeLoss{DeleteClaims: true}
		}
	}
}

// loseNode deletes the node that holds the volume of p's first Elasticsearch data claim (in
// name order) once one is bound, as a cloud does when an instance is terminated.
func loseNode(ctx context.Context, t *testing.T, h *upstream.Cluster, p *v1alpha1.AnalyticsPipeline) lostNode {
	t.Helper()
	var lost lostNode
	testutil.Eventually(t, converge, "an Elasticsearch data claim bound to a local volume", func() error {
		var pvs corev1.PersistentVolumeList
		if err := h.Client.List(ctx, &pvs); err != nil {
			return err
		}
		var found []lostNode
		for _, pv := range pvs.Items {
			ref := pv.Spec.ClaimRef
			if ref == nil || ref.Namespace != p.Namespace || pv.Status.Phase != corev1.VolumeBound {
				continue
			}
			if !strings.HasPrefix(ref.Name, "elasticsearch-data-") || pv.Annotations[desired.AnnotationNode] == "" {
				continue
			}
			found = append(found, lostNode{node: pv.Annotations[desired.AnnotationNode], claim: ref.Name, volume: pv.Name, uid: ref.UID})
		}
		if len(found) == 0 {
			return fmt.Errorf("no Elasticsearch data claim of %s/%s is bound to a local volume", p.Namespace, p.Name)
		}
		// The masters' and KRaft controllers' volumes (the cluster's default class) follow
		// their pods within a zone, as a cloud's network volumes do (internal/upstream
		// provisioner.go), so any data claim's node may go.
		sort.Slice(found, func(i, j int) bool { return found[i].claim < found[j].claim })
		lost = found[0]
		return nil
	})
	if err := h.Client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: lost.node}}); err != nil {
		t.Fatal(err)
	}
	t.Logf("deleted node %s, which held volume %s of claim %s/%s", lost.node, lost.volume, p.Namespace, lost.claim)
	return lost
}

// replaced is nil once the lost claim has a successor of the same name bound to a volume on
// another node, no pod of the namespace is on the lost node, every pod of the pipeline is
// scheduled (PodsScheduled, the operator's own account of it), the tiers report no lost claim
// and the lost volume still holds its data (Released, not wiped: its node is gone).
func replaced(ctx context.Context, h *upstream.Cluster, p *v1alpha1.AnalyticsPipeline, lost lostNode) error {
	pvc := &corev1.PersistentVolumeClaim{}
	if err := h.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: lost.claim}, pvc); err != nil {
		return fmt.Errorf("claim %s: %w", lost.claim, err)
	}
	if pvc.UID == lost.uid {
		return fmt.Errorf("claim %s is still the lost one (%s)", lost.claim, pvc.Status.Phase)
	}
	if pvc.Status.Phase != corev1.ClaimBound {
		return fmt.Errorf("the new claim %s is %s", lost.claim, pvc.Status.Phase)
	}
	pv := &corev1.PersistentVolume{}
	if err := h.Client.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv); err != nil {
		return err
	}
	if n := pv.Annotations[desired.AnnotationNode]; n == lost.node {
		return fmt.Errorf("the new claim %s is bound to volume %s on the lost node", lost.claim, pv.Name)
	}
	var pods corev1.PodList
	if err := h.Client.List(ctx, &pods, client.InNamespace(p.Namespace)); err != nil {
		return err
	}
	for _, pod := range pods.Items {
		if pod.Spec.NodeName == lost.node {
			return fmt.Errorf("pod %s is still on the lost node", pod.Name)
		}
	}
	got := &v1alpha1.AnalyticsPipeline{}
	if err := h.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
		return err
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionPodsScheduled); c == nil || c.Status != metav1.ConditionTrue {
		return fmt.Errorf("PodsScheduled is %v", c)
	}
	var tiers v1alpha1.StorageTierList
	if err := h.Client.List(ctx, &tiers); err != nil {
		return err
	}
	for _, t := range tiers.Items {
		if len(t.Status.LostClaims) > 0 {
			return fmt.Errorf("tier %s still reports lost claims %v", t.Name, t.Status.LostClaims)
		}
	}
	old := &corev1.PersistentVolume{}
	if err := h.Client.Get(ctx, client.ObjectKey{Name: lost.volume}, old); err != nil {
		return fmt.Errorf("the lost volume %s: %w", lost.volume, err)
	}
	if old.Status.Phase != corev1.VolumeReleased || old.Spec.ClaimRef == nil || old.Spec.ClaimRef.UID != lost.uid {
		return fmt.Errorf("the lost volume %s is %s (claimRef %v): want Released by the lost claim, its data kept", old.Name, old.Status.Phase, old.Spec.ClaimRef)
	}
	return observed(ctx, h, p)
}

// nodeBack registers the lost node again and waits until its volume, Released by the deleted
// claim, is wiped and Available again (Replay checks that the wipe came first).
func nodeBack(ctx context.Context, t *testing.T, h *upstream.Cluster, lost lostNode) {
	t.Helper()
	n, ok := h.NodeNamed(lost.node)
	if !ok {
		t.Fatalf("node %s is not one of the harness's", lost.node)
	}
	h.AddNodes(ctx, t, n)
	testutil.Eventually(t, converge, "the lost node's volume wiped and Available again", func() error {
		pv := &corev1.PersistentVolume{}
		if err := h.Client.Get(ctx, client.ObjectKey{Name: lost.volume}, pv); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("volume %s is gone", lost.volume)
			}
			return err
		}
		if pv.Status.Phase != corev1.VolumeAvailable {
			return fmt.Errorf("volume %s is %s", pv.Name, pv.Status.Phase)
		}
		return nil
	})
}
