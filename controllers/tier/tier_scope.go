package tier

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/status"
	"github.com/strata-dev/strata/internal/ssa"
)

// scope is what one reconcile of a tier knows, filled in step by step as the pipeline
// reconciler's scope is: the tier as read, a copy of it as read (the base of the status
// patch and of the condition transitions), its volumes and what bringing them in step found.
type scope struct {
	tier, before *v1alpha1.StorageTier
	conds        status.Conditions

	have map[string]*corev1.PersistentVolume // the tier's volumes, by name (observeVolumes)
	res  tierResult                          // what syncStep found
}

// applyScope is the ssa scope of a tier's StorageClass and volumes: forgotten when it is deleted.
func applyScope(name string) string { return ssa.Scope("StorageTier", client.ObjectKey{Name: name}) }

// load reads the tier and returns its scope; nil when there is nothing more to do: the tier is
// gone (what the operator applied for it is forgotten) or being deleted (finalize lets its
// volumes go, then the tier). A local tier gets its finalizer here, before any volume exists,
// so that none outlives a deleted tier unnoticed.
func (r *Reconciler) load(ctx context.Context, req reconcile.Request) (*scope, error) {
	t := &v1alpha1.StorageTier{}
	if err := r.Client.Get(ctx, req.NamespacedName, t); err != nil {
		if apierrors.IsNotFound(err) {
			r.Applier.ForgetScope(applyScope(req.Name))
		}
		return nil, client.IgnoreNotFound(err)
	}
	if !t.DeletionTimestamp.IsZero() {
		r.Applier.ForgetScope(applyScope(t.Name))
		return nil, r.finalize(ctx, t)
	}
	if t.Spec.Local != nil && !controllerutil.ContainsFinalizer(t, TierFinalizer) {
		if err := r.setFinalizer(ctx, t, true); err != nil {
			return nil, err
		}
	}
	// Copied after the finalizer's patch: the status patch must not carry its metadata.
	return &scope{tier: t, before: t.DeepCopy(),
		conds: status.Conditions{List: &t.Status.Conditions, Generation: t.Generation}}, nil
}

// observeVolumes reads the tier's volumes.
func (r *Reconciler) observeVolumes(ctx context.Context, s *scope) (err error) {
	s.have, err = r.volumesOf(ctx, s.tier)
	return err
}

// syncStep brings a local tier's StorageClass and volumes in step with it, or checks a dynamic
// tier's class.
func (r *Reconciler) syncStep(ctx context.Context, s *scope) (err error) {
	if s.tier.Spec.Local != nil {
		s.res, err = r.syncLocal(ctx, s.tier, s.have)
	} else {
		s.res, err = r.syncDynamic(ctx, s.tier, s.have)
	}
	return err
}

// reportStatus sets the conditions and the volume counts from what the sync found, and
// announces the volumes newly kept because a claim still uses them.
func (r *Reconciler) reportStatus(ctx context.Context, s *scope) error {
	t, res := s.tier, &s.res
	s.conds.Set(v1alpha1.ConditionReady, res.status, res.reason, res.message())
	switch {
	case t.Spec.Local == nil || res.reason == v1alpha1.ReasonInvalidSpec:
		meta.RemoveStatusCondition(&t.Status.Conditions, v1alpha1.ConditionVolumesLost)
	case len(res.lost.claims) > 0:
		s.conds.Set(v1alpha1.ConditionVolumesLost, metav1.ConditionTrue, v1alpha1.ReasonNodeLost,
			"claims bound to volumes on a lost node: "+strings.Join(res.lost.detail, "; ")+lostAdvice(t))
	default:
		s.conds.Set(v1alpha1.ConditionVolumesLost, metav1.ConditionFalse, v1alpha1.ReasonNoneLost, "no volume in use is on a lost node")
	}
	t.Status.LostClaims = res.lost.claims
	t.Status.ObservedGeneration = t.Generation
	t.Status.PersistentVolumes, t.Status.Capacity = volumeTotals(res.volumes)
	t.Status.RetainedPersistentVolumes = res.retainedNames()
	t.Status.ReleasedPersistentVolumes, t.Status.RecyclingPersistentVolumes = res.recycled.released, res.recycled.recycling

	if !s.conds.IsTrue(v1alpha1.ConditionReady) {
		log.FromContext(ctx).V(1).Info("tier not ready", "reason", res.reason, "message", res.message())
	}
	r.announceRetained(ctx, t, s.before.Status.RetainedPersistentVolumes, res.retained)
	return nil
}

// writeStatus ends every reconcile: it announces the conditions that changed and writes the
// status if it changed (after a failed step it did not, and nothing is written).
func (r *Reconciler) writeStatus(ctx context.Context, s *scope) error {
	t := s.tier
	status.AnnounceTransitions(r.Recorder, t, s.before.Status.Conditions, t.Status.Conditions)
	// The patch's base is the tier as it is now with the old status: a finalizer written
	// during this reconcile changed its metadata, which the status patch must not carry.
	base := t.DeepCopy()
	base.Status = s.before.Status
	return status.Patch(ctx, r.Client, t, base, s.before.Status, t.Status)
}

// result says when to look again: when a cleanup pod or a lost node's grace ends first.
func (s *scope) result() ctrl.Result {
	after := s.res.recycled.after
	if a := s.res.lost.after; a > 0 && (after == 0 || a < after) {
		after = a
	}
	return ctrl.Result{RequeueAfter: after}
}

// tierResult is what a reconcile found: the Ready condition and the volumes to report.
type tierResult struct {
	status  metav1.ConditionStatus
	reason  string
	summary string
	// notes are appended to the condition's message (volumes kept as they are, retained ...).
	notes []string
	// volumes are the tier's wanted volumes that exist; retained its volumes no longer wanted
	// that a claim uses, which the controller keeps.
	volumes  []*corev1.PersistentVolume
	retained []retainedVolume
	// recycled is what recycling the Released volumes found; lost the volumes in use on lost nodes.
	recycled recycled
	lost     lostVolumes
}

// lostAdvice ends the VolumesLost message with what happens next.
func lostAdvice(t *v1alpha1.StorageTier) string {
	if nl := t.Spec.Local.NodeLoss; nl != nil && nl.DeleteClaims {
		return "; their claims are deleted (spec.local.nodeLoss.deleteClaims), so that their pods start on other nodes' volumes"
	}
	return "; their pods cannot start elsewhere: bring the node back, or delete the claims (spec.local.nodeLoss.deleteClaims does it)"
}

type retainedVolume struct {
	pv  *corev1.PersistentVolume
	why string
}

func (r *tierResult) set(status metav1.ConditionStatus, reason, format string, args ...any) {
	r.status, r.reason, r.summary = status, reason, fmt.Sprintf(format, args...)
}

func (r *tierResult) message() string {
	msg := r.summary
	for _, n := range r.notes {
		msg += "; " + n
	}
	if n := len(r.retained); n > 0 {
		msg += fmt.Sprintf("; %d PersistentVolume(s) no longer wanted are in use and kept: see status.retainedPersistentVolumes", n)
	}
	return msg
}

func (r *tierResult) retainedNames() []string {
	var names []string
	for _, v := range r.retained {
		names = append(names, v.pv.Name)
	}
	return names
}
