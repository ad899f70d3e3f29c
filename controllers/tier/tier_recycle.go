package tier

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// A local tier with spec.local.reclaim Recycle gives its Released volumes back: the claim that
// used a volume is gone (a Spark driver's on-demand claims go with every spec change, ECK deletes
// claims on scale-down), the volume keeps that claim's data and its claimRef, and Kubernetes never
// binds it again. The controller runs a cleanup pod on the volume's node that deletes the data
// (desired.CleanupPod), and once the pod succeeded for that very claim it removes the volume's
// claimRef: the PersistentVolume controller then makes the volume Available
// (kubernetes pkg/controller/volume/persistentvolume/pv_controller.go, syncVolume: a volume with
// no claimRef is "unused" and set Available). sig-storage-local-static-provisioner does the same
// with reclaim policy Delete, deleting and re-creating the volume after its cleanup
// (pkg/deleter/deleter.go); Strata keeps the policy Retain, which the PersistentVolume controller
// leaves alone, so that nothing but a successful wipe ever frees a volume.

// Event reasons of recycling.
const (
	eventCleanupStarted = "PersistentVolumeCleanupStarted"
	eventCleanupFailed  = "PersistentVolumeCleanupFailed"
	eventRecycled       = "PersistentVolumeRecycled"
)

// Annotations the controller keeps on a volume whose cleanup failed: how many times in a row,
// when last, and why. A successful cleanup removes them.
const (
	annotationCleanupFailures = "strata.dev/cleanup-failures"
	annotationCleanupFailedAt = "strata.dev/cleanup-failed-at"
	annotationCleanupFailure  = "strata.dev/cleanup-failure"
)

// DefaultCleanupImage is the image of cleanup pods unless the manager is told another: it needs
// /bin/sh, rm and ls (desired.CleanupScript).
const DefaultCleanupImage = "busybox:1.37.0"

// VolumeRecycling says how Released local volumes are wiped.
type VolumeRecycling struct {
	// Namespace the cleanup pods run in; it must admit hostPath volumes (Pod Security level
	// privileged). Empty: the operator's own namespace, else "default".
	Namespace string
	// Image of the cleanup pods; empty: DefaultCleanupImage.
	Image string
	// Timeout of one cleanup (the pod's activeDeadlineSeconds); a pod not finished a minute after
	// it is failed by the controller too (a pod that never starts has no deadline). 0: 15 minutes.
	Timeout time.Duration
	// Backoff is the wait before the first retry of a failed cleanup; it doubles with each
	// failure, up to 10 minutes. 0: 30 seconds.
	Backoff time.Duration
}

// withDefaults fills in what was left empty.
func (v VolumeRecycling) withDefaults() VolumeRecycling {
	if v.Namespace == "" {
		v.Namespace = "default"
		if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil && strings.TrimSpace(string(b)) != "" {
			v.Namespace = strings.TrimSpace(string(b))
		}
	}
	if v.Image == "" {
		v.Image = DefaultCleanupImage
	}
	if v.Timeout <= 0 {
		v.Timeout = 15 * time.Minute
	}
	if v.Backoff <= 0 {
		v.Backoff = 30 * time.Second
	}
	return v
}

// cleanupGrace is how long after its deadline an unfinished cleanup pod is failed by the controller.
const cleanupGrace = time.Minute

// recycled is what recycling found: counts for the status, notes for the Ready message, and when
// to look again without an event (a cleanup's deadline, a retry's backoff).
type recycled struct {
	released, recycling int32
	notes               []string
	after               time.Duration
}

func (rc *recycled) wakeIn(d time.Duration) {
	if d < time.Second {
		d = time.Second
	}
	if rc.after == 0 || d < rc.after {
		rc.after = d
	}
}

// recycle wipes and frees the tier's Released volumes (spec.local.reclaim Recycle) and removes
// the cleanup pods no volume needs any more.
func (r *Reconciler) recycle(ctx context.Context, t *v1alpha1.StorageTier, vols []*corev1.PersistentVolume) (recycled, error) {
	var rc recycled
	pods, err := r.cleanupPods(ctx, t)
	if err != nil {
		return rc, err
	}
	wanted := map[string]bool{}
	var kept []string
	for _, pv := range vols {
		if pv.Status.Phase != corev1.VolumeReleased {
			continue
		}
		rc.released++
		if t.Spec.Local.Reclaim == v1alpha1.LocalReclaimRetain {
			kept = append(kept, pv.Name)
			continue
		}
		ref := pv.Spec.ClaimRef
		if ref == nil || !pv.DeletionTimestamp.IsZero() {
			continue // freed already: the PersistentVolume controller makes it Available
		}
		if gone, err := r.claimGone(ctx, ref); err != nil {
			return rc, err
		} else if !gone {
			rc.notes = append(rc.notes, fmt.Sprintf("%s is Released but claim %s/%s still exists: not wiped", pv.Name, ref.Namespace, ref.Name))
			continue
		}
		name := desired.CleanupPodName(pv.Name, ref.UID)
		wanted[name] = true
		rc.recycling++
		if err := r.recycleOne(ctx, t, pv, pods[name], &rc); err != nil {
			return rc, err
		}
	}
	for name, pod := range pods {
		if !wanted[name] && pod.DeletionTimestamp.IsZero() {
			if err := r.deletePod(ctx, pod); err != nil {
				return rc, err
			}
		}
	}
	if len(kept) > 0 {
		rc.notes = append(rc.notes, fmt.Sprintf("released by their claim, with their data (spec.local.reclaim is Retain: "+
			"delete them to have them created afresh): %s", strings.Join(kept, ", ")))
	}
	return rc, nil
}

// recycleOne moves one Released volume a step on: start its cleanup, wait for it, free the
// volume when it succeeded, or record the failure and retry after a backoff.
func (r *Reconciler) recycleOne(ctx context.Context, t *v1alpha1.StorageTier, pv *corev1.PersistentVolume, pod *corev1.Pod, rc *recycled) error {
	rec := r.Recycling
	now := time.Now()
	switch {
	case pod == nil:
		failures, at, why := cleanupFailures(pv)
		if failures > 0 {
			if wait := at.Add(retryDelay(rec.Backoff, failures)).Sub(now); wait > 0 {
				rc.notes = append(rc.notes, fmt.Sprintf("cleanup of %s failed %d time(s) (%s): retrying in %s",
					pv.Name, failures, why, wait.Round(time.Second)))
				rc.wakeIn(wait)
				return nil
			}
		}
		want := desired.CleanupPod(t, pv, rec.Namespace, rec.Image, rec.Timeout)
		err := r.Client.Create(ctx, want)
		switch {
		case apierrors.IsAlreadyExists(err):
			return nil // the cache has not seen it yet; its event brings the tier back
		case err != nil:
			// Refused (a namespace whose Pod Security forbids hostPath, a quota): a failure
			// like any other, reported and retried.
			return r.cleanupFailed(ctx, t, pv, failures, fmt.Sprintf("creating cleanup pod %s/%s: %v", want.Namespace, want.Name, err), rc)
		}
		log.FromContext(ctx).Info("wiping a Released PersistentVolume", "persistentVolume", pv.Name, "pod", want.Name,
			"node", want.Spec.NodeName, "path", pv.Spec.Local.Path)
		r.event(t, pv, corev1.EventTypeNormal, eventCleanupStarted, "Recycle",
			"wiping PersistentVolume %s (node %s, path %s), released by claim %s/%s: pod %s/%s", pv.Name, want.Spec.NodeName,
			pv.Spec.Local.Path, pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name, want.Namespace, want.Name)
		rc.wakeIn(rec.Timeout + cleanupGrace)
	case !pod.DeletionTimestamp.IsZero():
		// A pod being deleted: its deletion event brings the tier back.
	case pod.Status.Phase == corev1.PodSucceeded:
		if err := r.freeVolume(ctx, pv); err != nil {
			return err
		}
		r.event(t, pv, corev1.EventTypeNormal, eventRecycled, "Recycle",
			"PersistentVolume %s wiped by pod %s/%s and freed: it becomes Available", pv.Name, pod.Namespace, pod.Name)
		rc.recycling--
		return r.deletePod(ctx, pod)
	case pod.Status.Phase == corev1.PodFailed:
		failures, _, _ := cleanupFailures(pv)
		if err := r.cleanupFailed(ctx, t, pv, failures, fmt.Sprintf("pod %s/%s failed: %s", pod.Namespace, pod.Name, podFailure(pod)), rc); err != nil {
			return err
		}
		return r.deletePod(ctx, pod)
	default:
		deadline := pod.CreationTimestamp.Add(rec.Timeout + cleanupGrace)
		if left := deadline.Sub(now); left > 0 {
			phase := pod.Status.Phase
			if phase == "" {
				phase = corev1.PodPending
			}
			note := fmt.Sprintf("%s is being wiped by pod %s/%s (%s)", pv.Name, pod.Namespace, pod.Name, phase)
			if failures, _, why := cleanupFailures(pv); failures > 0 {
				note += fmt.Sprintf(" after its cleanup failed %d time(s) (last: %s)", failures, why)
			}
			rc.notes = append(rc.notes, note)
			rc.wakeIn(left)
			return nil
		}
		failures, _, _ := cleanupFailures(pv)
		if err := r.cleanupFailed(ctx, t, pv, failures, fmt.Sprintf("pod %s/%s did not finish within %s (phase %s)",
			pod.Namespace, pod.Name, rec.Timeout+cleanupGrace, pod.Status.Phase), rc); err != nil {
			return err
		}
		return r.deletePod(ctx, pod)
	}
	return nil
}

// cleanupFailed records a failed cleanup on the volume (the count, when, why), reports it, and
// schedules the retry.
func (r *Reconciler) cleanupFailed(ctx context.Context, t *v1alpha1.StorageTier, pv *corev1.PersistentVolume, before int, why string, rc *recycled) error {
	rec := r.Recycling
	failures := before + 1
	patch := client.MergeFromWithOptions(pv.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if pv.Annotations == nil {
		pv.Annotations = map[string]string{}
	}
	pv.Annotations[annotationCleanupFailures] = strconv.Itoa(failures)
	pv.Annotations[annotationCleanupFailedAt] = time.Now().UTC().Format(time.RFC3339)
	pv.Annotations[annotationCleanupFailure] = why
	if err := r.Client.Patch(ctx, pv, patch); err != nil {
		return fmt.Errorf("recording the failed cleanup of PersistentVolume %s: %w", pv.Name, err)
	}
	wait := retryDelay(rec.Backoff, failures)
	log.FromContext(ctx).Info("cleanup of a Released PersistentVolume failed", "persistentVolume", pv.Name, "failures", failures, "why", why, "retryIn", wait)
	r.event(t, pv, corev1.EventTypeWarning, eventCleanupFailed, "Recycle",
		"cleanup of PersistentVolume %s failed (%d time(s)): %s; it stays Released with its data and is retried in %s", pv.Name, failures, why, wait)
	rc.notes = append(rc.notes, fmt.Sprintf("cleanup of %s failed %d time(s) (%s): retrying in %s", pv.Name, failures, why, wait))
	rc.wakeIn(wait)
	return nil
}

// freeVolume removes a wiped volume's claimRef (and the failures recorded on it). The patch is
// conditional on the volume's resourceVersion: a volume changed since it was read is left for
// the next reconcile.
func (r *Reconciler) freeVolume(ctx context.Context, pv *corev1.PersistentVolume) error {
	patch := client.MergeFromWithOptions(pv.DeepCopy(), client.MergeFromWithOptimisticLock{})
	pv.Spec.ClaimRef = nil
	for _, k := range []string{annotationCleanupFailures, annotationCleanupFailedAt, annotationCleanupFailure} {
		delete(pv.Annotations, k)
	}
	if err := r.Client.Patch(ctx, pv, patch); err != nil {
		return fmt.Errorf("freeing the wiped PersistentVolume %s: %w", pv.Name, err)
	}
	log.FromContext(ctx).Info("freed a wiped PersistentVolume", "persistentVolume", pv.Name)
	return nil
}

// claimGone says whether the claim a volume's claimRef names no longer exists (or is another
// claim of that name, made since). Read from the API server: the operator caches no claims.
func (r *Reconciler) claimGone(ctx context.Context, ref *corev1.ObjectReference) (bool, error) {
	pvc := &corev1.PersistentVolumeClaim{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, pvc)
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, err
	}
	return pvc.UID != ref.UID, nil
}

// cleanupPods returns the tier's cleanup pods, by name.
func (r *Reconciler) cleanupPods(ctx context.Context, t *v1alpha1.StorageTier) (map[string]*corev1.Pod, error) {
	list := &corev1.PodList{}
	sel := desired.TierSelectorLabels(t)
	sel[desired.LabelComponent] = desired.ComponentVolumeCleanup
	if err := r.pods.List(ctx, list, client.InNamespace(r.Recycling.Namespace), client.MatchingLabels(sel)); err != nil {
		return nil, err
	}
	out := map[string]*corev1.Pod{}
	for i := range list.Items {
		if p := &list.Items[i]; p.Annotations[desired.AnnotationTier] == t.Name {
			out[p.Name] = p
		}
	}
	return out, nil
}

func (r *Reconciler) deletePod(ctx context.Context, pod *corev1.Pod) error {
	err := r.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID}, client.PropagationPolicy("Background"))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting cleanup pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

func (r *Reconciler) event(t *v1alpha1.StorageTier, pv *corev1.PersistentVolume, kind, reason, action, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(t, pv, kind, reason, action, format, args...)
	}
}

// cleanupFailures reads what the volume's annotations say of its failed cleanups.
func cleanupFailures(pv *corev1.PersistentVolume) (n int, at time.Time, why string) {
	n, _ = strconv.Atoi(pv.Annotations[annotationCleanupFailures])
	at, _ = time.Parse(time.RFC3339, pv.Annotations[annotationCleanupFailedAt])
	return n, at, pv.Annotations[annotationCleanupFailure]
}

// retryDelay is the wait after the n-th failure in a row: backoff, doubled each time, at most
// 10 minutes (or backoff, when that is longer).
func retryDelay(backoff time.Duration, n int) time.Duration {
	limit := max(10*time.Minute, backoff)
	d := backoff
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// podFailure says why a pod failed, from its status and its container's termination message.
func podFailure(pod *corev1.Pod) string {
	var parts []string
	if pod.Status.Reason != "" {
		parts = append(parts, pod.Status.Reason)
	}
	if pod.Status.Message != "" {
		parts = append(parts, pod.Status.Message)
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if term := cs.State.Terminated; term != nil {
			s := fmt.Sprintf("container %s exited %d", cs.Name, term.ExitCode)
			if msg := strings.TrimSpace(term.Message); msg != "" {
				s += ": " + msg
			}
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "no reason given"
	}
	return strings.Join(parts, "; ")
}
