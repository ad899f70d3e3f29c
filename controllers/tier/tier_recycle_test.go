package tier_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	"github.com/strata-dev/strata/internal/desired"
)

// TestTierRecycle follows Released volumes of a local tier: a cleanup pod on the volume's node
// wipes it, a failed cleanup is reported and retried while the volume keeps its claimRef (its
// data is never offered to another claim unwiped), a successful one frees the volume; a volume
// whose claim still exists is not touched; with spec.local.reclaim Retain nothing is wiped.
// There is no kubelet and no PersistentVolume controller: the test plays both, setting the
// pods' and the volumes' phases.
func TestTierRecycle(t *testing.T) {
	const ns = "strata-wipe"
	o := envtestutil.StartOperatorWith(t, []controllers.Option{controllers.WithVolumeRecycling(controllers.VolumeRecycling{
		Namespace: ns, Image: "example.com/wipe:1", Timeout: time.Minute, Backoff: 2 * time.Second})})
	ctx := context.Background()
	c := o.C
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	// The ServiceAccount admission plugin wants the namespace's default account, which the
	// controller-manager (absent here) would create.
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	tierCreateNode(t, c, "worker-1", map[string]string{"example.com/fast": "true", corev1.LabelHostname: "host-1"})
	tier := tierLocal("recycle", "strata-recycle", map[string]string{"example.com/fast": "true"}, "100Gi", "/mnt/a", "/mnt/b", "/mnt/c")
	if err := c.Create(ctx, tier); err != nil {
		t.Fatal(err)
	}
	tierWaitStatus(t, c, tier, 3, "300Gi", metav1.ConditionTrue, v1alpha1.ReasonAvailable)
	if tier.Spec.Local.Reclaim != v1alpha1.LocalReclaimRecycle {
		t.Errorf("spec.local.reclaim defaults to %q, want Recycle", tier.Spec.Local.Reclaim)
	}

	pvA := desired.PersistentVolumeName("recycle", "worker-1", "/mnt/a")
	var claimA types.UID
	t.Run("a Released volume gets a cleanup pod on its node", func(t *testing.T) {
		claimA = tierRelease(t, c, pvA, "kafka-0")
		pod := recycleWaitPod(t, c, ns, desired.CleanupPodName(pvA, claimA), "")
		if pod.Spec.NodeName != "worker-1" {
			t.Errorf("nodeName %q, want worker-1", pod.Spec.NodeName)
		}
		if len(pod.Spec.Volumes) != 1 || pod.Spec.Volumes[0].HostPath == nil || pod.Spec.Volumes[0].HostPath.Path != "/mnt/a" ||
			ptr.Deref(pod.Spec.Volumes[0].HostPath.Type, "") != corev1.HostPathDirectory {
			t.Errorf("volumes %+v, want the host's /mnt/a (type Directory)", pod.Spec.Volumes)
		}
		ctr := pod.Spec.Containers[0]
		sc := ctr.SecurityContext
		if ctr.Image != "example.com/wipe:1" || sc == nil || ptr.Deref(sc.Privileged, true) || ptr.Deref(sc.AllowPrivilegeEscalation, true) ||
			!ptr.Deref(sc.ReadOnlyRootFilesystem, false) || fmt.Sprint(sc.Capabilities.Drop) != "[ALL]" ||
			fmt.Sprint(sc.Capabilities.Add) != "[DAC_OVERRIDE FOWNER]" {
			t.Errorf("container %s: image %s, security context %+v", ctr.Name, ctr.Image, sc)
		}
		if pod.Spec.SecurityContext == nil || pod.Spec.SecurityContext.SeccompProfile == nil ||
			pod.Spec.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault || ptr.Deref(pod.Spec.AutomountServiceAccountToken, true) {
			t.Errorf("pod security context %+v, automount token %v", pod.Spec.SecurityContext, pod.Spec.AutomountServiceAccountToken)
		}
		if ptr.Deref(pod.Spec.ActiveDeadlineSeconds, 0) != 60 || pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("activeDeadlineSeconds %v, restartPolicy %s", pod.Spec.ActiveDeadlineSeconds, pod.Spec.RestartPolicy)
		}
		if ref := metav1.GetControllerOf(pod); ref == nil || ref.Kind != "StorageTier" || ref.UID != tier.UID {
			t.Errorf("owner references %+v, want the tier", pod.OwnerReferences)
		}
		recycleWaitCounts(t, c, tier, 1, 1)
		tierWaitEvent(t, c, "recycle", "PersistentVolumeCleanupStarted", pvA)
	})

	t.Run("a failed cleanup is reported and retried, the volume kept from claims", func(t *testing.T) {
		name := desired.CleanupPodName(pvA, claimA)
		first := recycleWaitPod(t, c, ns, name, "")
		recycleFinish(t, c, first, corev1.PodFailed, "rm: can't remove 'x': Read-only file system")
		tierWaitEvent(t, c, "recycle", "PersistentVolumeCleanupFailed", "rm: can't remove")
		pv := &corev1.PersistentVolume{}
		if err := c.Get(ctx, client.ObjectKey{Name: pvA}, pv); err != nil {
			t.Fatal(err)
		}
		if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != claimA {
			t.Errorf("claimRef %+v after a failed cleanup, want the old claim's: the data is still there", pv.Spec.ClaimRef)
		}
		if pv.Annotations["strata.dev/cleanup-failures"] != "1" || !strings.Contains(pv.Annotations["strata.dev/cleanup-failure"], "exited 1") {
			t.Errorf("annotations %v, want the failure recorded", pv.Annotations)
		}
		envtestutil.WaitFor(t, c, tier, func() error {
			if msg := tierReady(tier).Message; !strings.Contains(msg, pvA) || !strings.Contains(msg, "failed 1 time(s)") {
				return fmt.Errorf("Ready message does not report the failure: %q", msg)
			}
			return nil
		})
		// After the backoff, a new pod of the same name (a new UID) wipes again.
		recycleWaitPod(t, c, ns, name, first.UID)
		recycleWaitCounts(t, c, tier, 1, 1)
	})

	t.Run("a successful cleanup frees the volume", func(t *testing.T) {
		name := desired.CleanupPodName(pvA, claimA)
		recycleFinish(t, c, recycleWaitPod(t, c, ns, name, ""), corev1.PodSucceeded, "")
		pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pvA}}
		envtestutil.WaitFor(t, c, pv, func() error {
			if pv.Spec.ClaimRef != nil {
				return fmt.Errorf("claimRef %+v", pv.Spec.ClaimRef)
			}
			return nil
		})
		if _, ok := pv.Annotations["strata.dev/cleanup-failures"]; ok {
			t.Errorf("annotations %v: the failures should be cleared", pv.Annotations)
		}
		tierWaitEvent(t, c, "recycle", "PersistentVolumeRecycled", pvA)
		envtestutil.WaitGone(t, c, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})
		// The PersistentVolume controller makes a volume without a claimRef Available.
		pv.Status.Phase = corev1.VolumeAvailable
		if err := c.Status().Update(ctx, pv); err != nil {
			t.Fatal(err)
		}
		recycleWaitCounts(t, c, tier, 0, 0)
	})

	t.Run("a volume whose claim still exists is not wiped", func(t *testing.T) {
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "still-here", Namespace: "default"},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		}
		if err := c.Create(ctx, pvc); err != nil {
			t.Fatal(err)
		}
		pvB := desired.PersistentVolumeName("recycle", "worker-1", "/mnt/b")
		tierReleaseAs(t, c, pvB, pvc.Name, pvc.UID)
		recycleWaitCounts(t, c, tier, 1, 0)
		if msg := tierReady(tier).Message; !strings.Contains(msg, "claim default/still-here still exists: not wiped") {
			t.Errorf("Ready message: %q", msg)
		}
		if pods := recyclePods(t, c, ns); len(pods) != 0 {
			t.Errorf("cleanup pods %v, want none", pods)
		}
		// Set back to Available for the next step's counts.
		pv := &corev1.PersistentVolume{}
		if err := c.Get(ctx, client.ObjectKey{Name: pvB}, pv); err != nil {
			t.Fatal(err)
		}
		pv.Spec.ClaimRef = nil
		if err := c.Update(ctx, pv); err != nil {
			t.Fatal(err)
		}
		pv.Status.Phase = corev1.VolumeAvailable
		if err := c.Status().Update(ctx, pv); err != nil {
			t.Fatal(err)
		}
		recycleWaitCounts(t, c, tier, 0, 0)
	})

	t.Run("reclaim Retain leaves a Released volume with its data", func(t *testing.T) {
		patched := tier.DeepCopy()
		patched.Spec.Local.Reclaim = v1alpha1.LocalReclaimRetain
		if err := c.Patch(ctx, patched, client.MergeFrom(tier)); err != nil {
			t.Fatal(err)
		}
		tierWaitStatus(t, c, tier, 3, "300Gi", metav1.ConditionTrue, v1alpha1.ReasonAvailable)
		pvC := desired.PersistentVolumeName("recycle", "worker-1", "/mnt/c")
		tierRelease(t, c, pvC, "es-data-0")
		recycleWaitCounts(t, c, tier, 1, 0)
		if msg := tierReady(tier).Message; !strings.Contains(msg, "spec.local.reclaim is Retain") || !strings.Contains(msg, pvC) {
			t.Errorf("Ready message: %q", msg)
		}
		if pods := recyclePods(t, c, ns); len(pods) != 0 {
			t.Errorf("cleanup pods %v, want none", pods)
		}
		pv := &corev1.PersistentVolume{}
		if err := c.Get(ctx, client.ObjectKey{Name: pvC}, pv); err != nil || pv.Spec.ClaimRef == nil {
			t.Errorf("%s: %v, claimRef %v: want it kept", pvC, err, pv.Spec.ClaimRef)
		}
	})
}

// tierRelease makes a volume look Released by a claim that no longer exists; it returns the
// claim's UID.
func tierRelease(t *testing.T, c client.Client, name, claim string) types.UID {
	t.Helper()
	uid := types.UID("00000000-0000-4000-8000-" + fmt.Sprintf("%012x", time.Now().UnixNano()&0xffffffffffff))
	tierReleaseAs(t, c, name, claim, uid)
	return uid
}

// tierReleaseAs sets a volume's claimRef to the claim default/claim with that UID and its
// phase to Released, as the PersistentVolume controller does when a bound claim is deleted.
func tierReleaseAs(t *testing.T, c client.Client, name, claim string, uid types.UID) {
	t.Helper()
	ctx := context.Background()
	pv := &corev1.PersistentVolume{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, pv); err != nil {
		t.Fatal(err)
	}
	pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: "default", Name: claim, UID: uid}
	if err := c.Update(ctx, pv); err != nil {
		t.Fatal(err)
	}
	pv.Status.Phase = corev1.VolumeReleased
	if err := c.Status().Update(ctx, pv); err != nil {
		t.Fatal(err)
	}
}

// recycleWaitPod waits for the cleanup pod of that name, with another UID than not.
func recycleWaitPod(t *testing.T, c client.Client, ns, name string, not types.UID) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	envtestutil.WaitFor(t, c, pod, func() error {
		if pod.UID == not || !pod.DeletionTimestamp.IsZero() {
			return fmt.Errorf("pod %s not (re)created yet", name)
		}
		return nil
	})
	return pod
}

// recycleFinish sets a cleanup pod's phase as the kubelet would when it ends.
func recycleFinish(t *testing.T, c client.Client, pod *corev1.Pod, phase corev1.PodPhase, message string) {
	t.Helper()
	code := int32(0)
	if phase == corev1.PodFailed {
		code = 1
	}
	pod.Status.Phase = phase
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "wipe", Image: pod.Spec.Containers[0].Image,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: message}}}}
	if err := c.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
}

// recycleWaitCounts waits until the tier's status counts that many Released and recycling volumes.
func recycleWaitCounts(t *testing.T, c client.Client, tier *v1alpha1.StorageTier, released, recycling int32) {
	t.Helper()
	envtestutil.WaitFor(t, c, tier, func() error {
		if s := tier.Status; s.ReleasedPersistentVolumes != released || s.RecyclingPersistentVolumes != recycling {
			return fmt.Errorf("released %d, recycling %d; want %d, %d", s.ReleasedPersistentVolumes, s.RecyclingPersistentVolumes, released, recycling)
		}
		return nil
	})
}

func recyclePods(t *testing.T, c client.Client, ns string) []string {
	t.Helper()
	list := &corev1.PodList{}
	if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range list.Items {
		names = append(names, p.Name)
	}
	return names
}
