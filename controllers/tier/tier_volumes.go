package tier

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// Event reasons of a tier's volumes (conditions have their own, in api/v1alpha1).
const (
	eventVolumeDeleted  = "PersistentVolumeDeleted"
	eventVolumeRetained = "PersistentVolumeRetained"
)

// syncLocal brings a local tier's StorageClass and volumes in step with the spec and the nodes:
// it reads the class and the nodes, lets the pure localVolumes.diff decide each volume
// (tier_diff.go), carries the decisions out (create the missing volumes, update those no claim
// uses, delete those no longer wanted that no claim uses) and reports the others.
func (r *Reconciler) syncLocal(ctx context.Context, t *v1alpha1.StorageTier, have map[string]*corev1.PersistentVolume) (tierResult, error) {
	var res tierResult
	sel, err := desired.NodeSelector(t)
	if err != nil {
		// Which volumes are wanted is unknown: leave every volume as it is.
		res.set(metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec, "%v", err)
		res.volumes = sortedVolumes(have)
		return res, nil
	}
	conflict, err := r.ensureStorageClass(ctx, t)
	if err != nil {
		return res, err
	}
	nodes, err := r.nodes(ctx)
	if err != nil {
		return res, err
	}
	matched, err := desired.SelectNodes(t, nodes)
	if err != nil {
		return res, err
	}

	paths := map[string]bool{}
	for _, p := range t.Spec.Local.Paths {
		paths[p] = true
	}
	byName := map[string]corev1.Node{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	decide := localVolumes{want: desired.PersistentVolumes(t, matched), have: have, classConflict: conflict != "",
		nodes: byName, selector: sel, paths: paths}
	out := localOutcome{conflict: conflict, matched: len(matched), paths: len(paths)}
	var heldBack []string
	for _, a := range decide.diff() {
		switch a.act {
		case volumeCreate:
			if taken, err := r.volumeExists(ctx, a.want.Name); err != nil {
				return res, err
			} else if taken {
				out.problems = append(out.problems, fmt.Sprintf("PersistentVolume %s exists but is not this tier's (no %s=%s label or %s annotation)",
					a.want.Name, desired.LabelTier, a.want.Labels[desired.LabelTier], desired.AnnotationTier))
				continue
			}
			if err := r.Applier.ApplyTyped(ctx, applyScope(t.Name), a.want, nil); err != nil {
				return res, fmt.Errorf("creating PersistentVolume %s: %w", a.want.Name, err)
			}
			res.volumes = append(res.volumes, a.want)
		case volumeKeep:
			res.volumes = append(res.volumes, a.cur)
		case volumeHoldBack:
			res.volumes = append(res.volumes, a.cur)
			heldBack = append(heldBack, fmt.Sprintf("%s (%s)", a.cur.Name, a.why))
		case volumeRecreate:
			if err := r.deleteVolume(ctx, t, a.cur, a.why); err != nil {
				return res, err
			}
			out.recreating++
		case volumeUpdate:
			if err := r.Applier.ApplyTyped(ctx, applyScope(t.Name), a.want, a.cur); err != nil {
				return res, fmt.Errorf("updating PersistentVolume %s: %w", a.want.Name, err)
			}
			res.volumes = append(res.volumes, a.want)
		case volumeRetain:
			res.retained = append(res.retained, retainedVolume{pv: a.cur, why: a.why})
		case volumeDelete:
			if err := r.deleteVolume(ctx, t, a.cur, a.why); err != nil {
				return res, err
			}
		}
	}
	out.volumes = len(res.volumes)
	out.condition(&res, t, sel)
	if len(heldBack) > 0 {
		res.notes = append(res.notes, "in use, so left as they are: "+strings.Join(heldBack, "; "))
	}
	if conflict == "" {
		res.recycled, err = r.recycle(ctx, t, res.volumes)
		if err != nil {
			return res, err
		}
		res.notes = append(res.notes, res.recycled.notes...)
	}
	if res.lost, err = r.checkNodeLoss(ctx, t, have, nodes); err != nil {
		return res, err
	}
	return res, nil
}

// volumeDrift lists how a volume differs from the one wanted: in what can change in place and
// in what cannot (the API server refuses to change a volume's source, mode or node affinity).
func volumeDrift(cur, want *corev1.PersistentVolume) (mutable, immutable []string) {
	if !labelsInclude(want.Labels, cur.Labels) {
		mutable = append(mutable, "labels")
	}
	if !labelsInclude(want.Annotations, cur.Annotations) {
		mutable = append(mutable, "annotations")
	}
	c, w := cur.Spec.Capacity[corev1.ResourceStorage], want.Spec.Capacity[corev1.ResourceStorage]
	if c.Cmp(w) != 0 {
		mutable = append(mutable, fmt.Sprintf("capacity %s, want %s", c.String(), w.String()))
	}
	if cur.Spec.StorageClassName != want.Spec.StorageClassName {
		mutable = append(mutable, fmt.Sprintf("storageClassName %s, want %s", cur.Spec.StorageClassName, want.Spec.StorageClassName))
	}
	if cur.Spec.PersistentVolumeReclaimPolicy != want.Spec.PersistentVolumeReclaimPolicy {
		mutable = append(mutable, fmt.Sprintf("reclaim policy %s", cur.Spec.PersistentVolumeReclaimPolicy))
	}
	if !equality.Semantic.DeepEqual(cur.Spec.AccessModes, want.Spec.AccessModes) {
		mutable = append(mutable, "access modes")
	}
	if cur.Spec.Local == nil || cur.Spec.Local.Path != want.Spec.Local.Path || cur.Spec.Local.FSType != nil {
		immutable = append(immutable, "path")
	}
	if ptr.Deref(cur.Spec.VolumeMode, corev1.PersistentVolumeFilesystem) != *want.Spec.VolumeMode {
		immutable = append(immutable, "volume mode")
	}
	if !equality.Semantic.DeepEqual(cur.Spec.NodeAffinity, want.Spec.NodeAffinity) {
		immutable = append(immutable, "node affinity")
	}
	return mutable, immutable
}

// volumeUse says what uses a volume — "" when nothing does and the operator may delete it:
// a claim bound or binding to it (spec.claimRef), or a phase other than Pending and Available.
// A Released volume's claim is gone, but with reclaim policy Retain its data is still there.
func volumeUse(pv *corev1.PersistentVolume) string {
	if ref := pv.Spec.ClaimRef; ref != nil {
		return fmt.Sprintf("%s, claim %s/%s", volumePhaseOr(pv, "claimed"), ref.Namespace, ref.Name)
	}
	switch pv.Status.Phase {
	case "", corev1.VolumePending, corev1.VolumeAvailable:
		return ""
	}
	return string(pv.Status.Phase)
}

func volumePhaseOr(pv *corev1.PersistentVolume, def string) string {
	if pv.Status.Phase == "" {
		return def
	}
	return string(pv.Status.Phase)
}

// prune deletes the tier's volumes that are not wanted and that nothing uses; it returns those
// something uses, which stay, with why each is no longer wanted.
func (r *Reconciler) prune(ctx context.Context, t *v1alpha1.StorageTier, have map[string]*corev1.PersistentVolume,
	wanted map[string]bool, why func(*corev1.PersistentVolume) string) ([]retainedVolume, error) {
	var retained []retainedVolume
	for _, pv := range sortedVolumes(have) {
		switch {
		case wanted[pv.Name]:
		case volumeUse(pv) != "":
			retained = append(retained, retainedVolume{pv: pv, why: why(pv)})
		case pv.DeletionTimestamp.IsZero():
			if err := r.deleteVolume(ctx, t, pv, why(pv)); err != nil {
				return nil, err
			}
		}
	}
	return retained, nil
}

// deleteVolume deletes a volume the operator saw unused. The deletion is conditional on the
// volume's resourceVersion: a volume a claim was bound to since (or that the cache had not caught
// up with) is not deleted — the API server answers Conflict and the next reconcile sees it bound.
func (r *Reconciler) deleteVolume(ctx context.Context, t *v1alpha1.StorageTier, pv *corev1.PersistentVolume, why string) error {
	err := r.Client.Delete(ctx, pv, client.Preconditions{UID: &pv.UID, ResourceVersion: &pv.ResourceVersion})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting unused PersistentVolume %s: %w", pv.Name, err)
	}
	log.FromContext(ctx).Info("deleted an unused PersistentVolume", "persistentVolume", pv.Name,
		"node", pv.Annotations[desired.AnnotationNode], "path", pv.Annotations[desired.AnnotationPath], "why", why)
	if r.Recorder != nil {
		r.Recorder.Eventf(t, pv, corev1.EventTypeNormal, eventVolumeDeleted, "Delete",
			"deleted unused PersistentVolume %s (node %s, path %s): %s", pv.Name,
			pv.Annotations[desired.AnnotationNode], pv.Annotations[desired.AnnotationPath], why)
	}
	return nil
}

// announceRetained logs and records an event for each volume that is newly retained; a volume
// retained already (listed in the status) is not announced again.
func (r *Reconciler) announceRetained(ctx context.Context, t *v1alpha1.StorageTier, before []string, now []retainedVolume) {
	known := map[string]bool{}
	for _, n := range before {
		known[n] = true
	}
	for _, v := range now {
		if known[v.pv.Name] {
			continue
		}
		r.retainedVolume(ctx, t, v.pv, v.why)
	}
}

func (r *Reconciler) retainedVolume(ctx context.Context, t *v1alpha1.StorageTier, pv *corev1.PersistentVolume, why string) {
	use := volumeUse(pv)
	log.FromContext(ctx).Info("keeping a PersistentVolume in use that the tier no longer wants", "persistentVolume", pv.Name,
		"use", use, "why", why)
	if r.Recorder != nil {
		r.Recorder.Eventf(t, pv, corev1.EventTypeWarning, eventVolumeRetained, "Retain",
			"kept PersistentVolume %s (%s): %s; delete it once its data is no longer needed", pv.Name, use, why)
	}
}

// finalize runs when a tier with TierFinalizer is deleted: its volumes nothing uses are deleted,
// the others stay (with their labels, reported in events), and then the tier may go.
func (r *Reconciler) finalize(ctx context.Context, t *v1alpha1.StorageTier) error {
	if !controllerutil.ContainsFinalizer(t, TierFinalizer) {
		return nil
	}
	have, err := r.volumesOf(ctx, t)
	if err != nil {
		return err
	}
	for _, pv := range sortedVolumes(have) {
		switch {
		case volumeUse(pv) != "":
			r.retainedVolume(ctx, t, pv, "the tier is being deleted")
		case pv.DeletionTimestamp.IsZero():
			if err := r.deleteVolume(ctx, t, pv, "the tier is being deleted"); err != nil {
				return err
			}
		}
	}
	return client.IgnoreNotFound(r.setFinalizer(ctx, t, false))
}

// volumesOf returns the volumes the operator made for t, by name.
func (r *Reconciler) volumesOf(ctx context.Context, t *v1alpha1.StorageTier) (map[string]*corev1.PersistentVolume, error) {
	list := &corev1.PersistentVolumeList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels(desired.TierSelectorLabels(t))); err != nil {
		return nil, err
	}
	out := map[string]*corev1.PersistentVolume{}
	for i := range list.Items {
		if pv := &list.Items[i]; pv.Annotations[desired.AnnotationTier] == t.Name {
			out[pv.Name] = pv
		}
	}
	return out, nil
}

// volumeExists says whether a volume of that name exists (whoever made it).
func (r *Reconciler) volumeExists(ctx context.Context, name string) (bool, error) {
	err := r.Client.Get(ctx, client.ObjectKey{Name: name}, &corev1.PersistentVolume{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// nodes returns every node, with its metadata only (what selecting nodes needs; the cache keeps
// no node status).
func (r *Reconciler) nodes(ctx context.Context) ([]corev1.Node, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NodeList"))
	if err := r.Client.List(ctx, list); err != nil {
		return nil, err
	}
	nodes := make([]corev1.Node, 0, len(list.Items))
	for _, m := range list.Items {
		nodes = append(nodes, corev1.Node{ObjectMeta: m.ObjectMeta})
	}
	return nodes, nil
}

// volumeTotals are the status' count and capacity of a tier's volumes (no capacity for none).
func volumeTotals(vols []*corev1.PersistentVolume) (int32, *resource.Quantity) {
	if len(vols) == 0 {
		return 0, nil
	}
	total := resource.NewQuantity(0, resource.BinarySI)
	for _, pv := range vols {
		total.Add(pv.Spec.Capacity[corev1.ResourceStorage])
	}
	return int32(len(vols)), total
}

func sortedVolumes(m map[string]*corev1.PersistentVolume) []*corev1.PersistentVolume {
	out := make([]*corev1.PersistentVolume, 0, len(m))
	for _, pv := range m {
		out = append(out, pv)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// selectorText shows a node selector in a message.
func selectorText(sel labels.Selector) string {
	if sel.Empty() {
		return "any node; there are none"
	}
	return sel.String()
}
