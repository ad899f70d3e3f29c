package tier

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// A local volume lives and dies with its node: a claim bound to a volume on a node that is gone
// keeps its pod Pending for ever (the volume's node affinity names that node only). The
// controller names those claims (the tier's VolumesLost condition and status.lostClaims; the
// pipelines in their namespace say so in StorageReady) and, when the tier opts in
// (spec.local.nodeLoss.deleteClaims), deletes them, so that Strimzi or ECK create the claim
// again, the pod is scheduled on another node with a free volume, and the replica is rebuilt
// from the others. This is what sig-storage-local-static-provisioner's node cleanup controller
// does for deleted nodes (docs/node-cleanup-controller.md, pkg/node-cleanup/controller: it
// waits --pvc-deletion-delay after the Node is deleted, then deletes the claim bound to the local
// volume); Strata also counts a node NotReady for longer than the grace period, and deletes
// nothing unless asked.

const eventClaimDeleted = "PersistentVolumeClaimDeleted"

// defaultNodeLossGrace is spec.local.nodeLoss.gracePeriod's default (the CRD default says the same).
const defaultNodeLossGrace = 10 * time.Minute

// lostVolumes is what the node-loss check found.
type lostVolumes struct {
	claims []string // namespace/name, sorted
	detail []string // claim: why, for the condition's message
	// after is when to look again: a NotReady node's grace ends, or the next check of the nodes
	// (node status is not watched: only node metadata is cached).
	after time.Duration
}

// checkNodeLoss finds the tier's volumes in use whose node is gone and, when the tier asks for
// it, deletes their claims. nodes are the cluster's nodes (metadata only).
func (r *Reconciler) checkNodeLoss(ctx context.Context, t *v1alpha1.StorageTier, have map[string]*corev1.PersistentVolume, nodes []corev1.Node) (lostVolumes, error) {
	var out lostVolumes
	grace, deleteClaims := defaultNodeLossGrace, false
	if nl := t.Spec.Local.NodeLoss; nl != nil {
		if nl.GracePeriod != nil {
			grace = nl.GracePeriod.Duration
		}
		deleteClaims = nl.DeleteClaims
	}
	exists := map[string]bool{}
	for _, n := range nodes {
		exists[n.Name] = true
	}
	ready := map[string]nodeReadiness{}
	now := time.Now()
	inUse := false
	for _, pv := range sortedVolumes(have) {
		ref := pv.Spec.ClaimRef
		if ref == nil || pv.Status.Phase != corev1.VolumeBound {
			continue
		}
		node := pv.Annotations[desired.AnnotationNode]
		var why string
		if !exists[node] {
			why = fmt.Sprintf("node %s is deleted", node)
		} else {
			inUse = true
			st, ok := ready[node]
			if !ok {
				var err error
				if st, err = r.readiness(ctx, node); err != nil {
					return out, err
				}
				ready[node] = st
			}
			if st.ready || st.since.IsZero() {
				continue
			}
			if left := st.since.Add(grace).Sub(now); left > 0 {
				out.wakeIn(left)
				continue
			}
			why = fmt.Sprintf("node %s is NotReady since %s", node, st.since.UTC().Format(time.RFC3339))
		}
		claim := ref.Namespace + "/" + ref.Name
		out.claims = append(out.claims, claim)
		out.detail = append(out.detail, fmt.Sprintf("%s (volume %s: %s)", claim, pv.Name, why))
		if deleteClaims {
			if err := r.deleteLostClaim(ctx, t, pv, why); err != nil {
				return out, err
			}
		}
	}
	if inUse {
		// A node going NotReady changes its status only, which the operator does not watch.
		out.wakeIn(min(max(grace/2, time.Second), 5*time.Minute))
	}
	sort.Strings(out.claims)
	return out, nil
}

func (l *lostVolumes) wakeIn(d time.Duration) {
	d = max(d, time.Second)
	if l.after == 0 || d < l.after {
		l.after = d
	}
}

// nodeReadiness is a node's Ready condition: since is when it last stopped being True (zero
// when it is True, or the kubelet has not reported yet).
type nodeReadiness struct {
	ready bool
	since time.Time
}

// readiness reads a node's Ready condition from the API server (the cache holds node metadata only).
func (r *Reconciler) readiness(ctx context.Context, name string) (nodeReadiness, error) {
	n := &corev1.Node{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
		if apierrors.IsNotFound(err) {
			return nodeReadiness{}, nil // deleted meanwhile: the next reconcile sees it gone
		}
		return nodeReadiness{}, err
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return nodeReadiness{ready: true}, nil
			}
			return nodeReadiness{since: c.LastTransitionTime.Time}, nil
		}
	}
	return nodeReadiness{}, nil
}

// deleteLostClaim deletes the claim a lost volume is bound to: that claim only (its UID is a
// precondition), once.
func (r *Reconciler) deleteLostClaim(ctx context.Context, t *v1alpha1.StorageTier, pv *corev1.PersistentVolume, why string) error {
	ref := pv.Spec.ClaimRef
	pvc := &corev1.PersistentVolumeClaim{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, pvc)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	case pvc.UID != ref.UID || !pvc.DeletionTimestamp.IsZero():
		return nil // another claim of that name, or deleted already (its pod may still hold it)
	}
	err = r.Client.Delete(ctx, pvc, client.Preconditions{UID: &ref.UID})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting claim %s/%s of lost PersistentVolume %s: %w", ref.Namespace, ref.Name, pv.Name, err)
	}
	log.FromContext(ctx).Info("deleted the claim of a volume on a lost node", "claim", ref.Namespace+"/"+ref.Name, "persistentVolume", pv.Name, "why", why)
	r.event(t, pv, corev1.EventTypeWarning, eventClaimDeleted, "Delete",
		"deleted claim %s/%s bound to PersistentVolume %s (%s; spec.local.nodeLoss.deleteClaims): its pod can start on another node's volume",
		ref.Namespace, ref.Name, pv.Name, why)
	return nil
}
