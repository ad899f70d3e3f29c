package tier_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	tierctl "github.com/strata-dev/strata/controllers/tier"
	"github.com/strata-dev/strata/internal/controlplane"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// TestTierLocal follows a local tier through its life on one control plane: volumes per node and
// path, nodes joining and leaving, a Bound volume kept, a capacity change, idempotence, and the
// tier's deletion; then a StorageClass conflict and a selector no node matches.
func TestTierLocal(t *testing.T) {
	o := envtestutil.StartOperator(t)
	ctx := context.Background()
	c := o.C

	tierCreateNode(t, c, "worker-1", map[string]string{"example.com/fast": "true", corev1.LabelHostname: "host-1"})
	tierCreateNode(t, c, "worker-2", map[string]string{"example.com/fast": "true"}) // no hostname label
	tierCreateNode(t, c, "worker-slow", map[string]string{"example.com/slow": "true"})

	tier := tierLocal("fast", "strata-fast", map[string]string{"example.com/fast": "true"}, "100Gi", "/mnt/a", "/mnt/b")
	if err := c.Create(ctx, tier); err != nil {
		t.Fatal(err)
	}

	t.Run("StorageClass and a volume per node and path", func(t *testing.T) {
		tierWaitStatus(t, c, tier, 4, "400Gi", metav1.ConditionTrue, v1alpha1.ReasonAvailable)
		if !strings.Contains(tierReady(tier).Message, "2 node(s) × 2 path(s)") {
			t.Errorf("Ready message: %q", tierReady(tier).Message)
		}
		if !envtestutil.SliceHas(tier.Finalizers, tierctl.TierFinalizer) {
			t.Errorf("finalizers %v, want %s", tier.Finalizers, tierctl.TierFinalizer)
		}

		sc := &storagev1.StorageClass{}
		if err := c.Get(ctx, client.ObjectKey{Name: "strata-fast"}, sc); err != nil {
			t.Fatal(err)
		}
		if sc.Provisioner != "kubernetes.io/no-provisioner" || *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer ||
			*sc.ReclaimPolicy != corev1.PersistentVolumeReclaimRetain {
			t.Errorf("StorageClass: provisioner %s, binding %s, reclaim %s", sc.Provisioner, *sc.VolumeBindingMode, *sc.ReclaimPolicy)
		}
		if ref := metav1.GetControllerOf(sc); ref == nil || ref.Kind != "StorageTier" || ref.UID != tier.UID || !ptr.Deref(ref.BlockOwnerDeletion, false) {
			t.Errorf("StorageClass owner references %+v, want the tier as controller", sc.OwnerReferences)
		}
		if !tierManagedBy(sc.ManagedFields, controllers.FieldOwner) {
			t.Errorf("StorageClass not applied by %s: %+v", controllers.FieldOwner, sc.ManagedFields)
		}

		type row struct{ node, path, hostname string }
		var got []row
		for _, pv := range tierVolumes(t, c, "fast") {
			req := pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0]
			got = append(got, row{pv.Annotations[desired.AnnotationNode], pv.Spec.Local.Path, req.Key + "=" + strings.Join(req.Values, ",")})
			capacity := pv.Spec.Capacity[corev1.ResourceStorage]
			if capacity.Cmp(resource.MustParse("100Gi")) != 0 || pv.Spec.StorageClassName != "strata-fast" ||
				pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || len(pv.OwnerReferences) != 0 {
				t.Errorf("%s: capacity %s, class %s, reclaim %s, owners %v", pv.Name, capacity.String(), pv.Spec.StorageClassName,
					pv.Spec.PersistentVolumeReclaimPolicy, pv.OwnerReferences)
			}
			if pv.Name != desired.PersistentVolumeName("fast", pv.Annotations[desired.AnnotationNode], pv.Spec.Local.Path) {
				t.Errorf("%s: not the name for its node and path", pv.Name)
			}
			if !tierManagedBy(pv.ManagedFields, controllers.FieldOwner) {
				t.Errorf("%s: not applied by %s", pv.Name, controllers.FieldOwner)
			}
		}
		sort.Slice(got, func(i, j int) bool { return got[i].node+got[i].path < got[j].node+got[j].path })
		want := []row{
			{"worker-1", "/mnt/a", "kubernetes.io/hostname=host-1"},
			{"worker-1", "/mnt/b", "kubernetes.io/hostname=host-1"},
			{"worker-2", "/mnt/a", "kubernetes.io/hostname=worker-2"},
			{"worker-2", "/mnt/b", "kubernetes.io/hostname=worker-2"},
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("volumes:\n got %v\nwant %v", got, want)
		}
	})

	t.Run("a node labelled gets its volumes", func(t *testing.T) {
		tierCreateNode(t, c, "worker-3", nil)
		tierLabelNode(t, c, "worker-3", "example.com/fast", "true")
		tierWaitStatus(t, c, tier, 6, "600Gi", metav1.ConditionTrue, v1alpha1.ReasonAvailable)
		if n := len(tierVolumes(t, c, "fast")); n != 6 {
			t.Errorf("%d volumes, want 6", n)
		}
	})

	t.Run("a resync with nothing changed writes nothing", func(t *testing.T) {
		rv := tier.ResourceVersion
		// Both reach the controller (a node's labels changed; an annotation is an event on the
		// tier, filtered out by the generation predicate): neither may make it write.
		node := tierLabelNode(t, c, "worker-slow", "example.com/touched", "1")
		annotated := tier.DeepCopy()
		annotated.Annotations = map[string]string{"example.com/note": "touched"}
		if err := c.Patch(ctx, annotated, client.MergeFrom(tier)); err != nil {
			t.Fatal(err)
		}
		// Proven on the reconcile that read the relabelled node.
		r := o.History.Finished(t, "storagetier", client.ObjectKeyFromObject(tier), envtestutil.Saw("Node", node, node.ResourceVersion))
		if r.Writes != 0 || r.Err != nil {
			t.Errorf("the reconcile after a node's unrelated label changed made %d writes (err %v), want 0", r.Writes, r.Err)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(tier), tier); err != nil {
			t.Fatal(err)
		}
		if tier.ResourceVersion != annotated.ResourceVersion {
			t.Errorf("the tier changed after the annotation (resourceVersion %s, then %s, now %s)", rv, annotated.ResourceVersion, tier.ResourceVersion)
		}
	})

	t.Run("a node unlabelled loses its unused volumes", func(t *testing.T) {
		tierLabelNode(t, c, "worker-3", "example.com/fast", "")
		tierWaitStatus(t, c, tier, 4, "400Gi", metav1.ConditionTrue, v1alpha1.ReasonAvailable)
		for _, pv := range tierVolumes(t, c, "fast") {
			if pv.Annotations[desired.AnnotationNode] == "worker-3" {
				t.Errorf("%s on worker-3 still exists", pv.Name)
			}
		}
	})

	bound := desired.PersistentVolumeName("fast", "worker-2", "/mnt/a")
	t.Run("a Bound volume whose node leaves is kept and reported", func(t *testing.T) {
		tierBind(t, c, bound, "claim-0")
		if err := c.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-2"}}); err != nil {
			t.Fatal(err)
		}
		tierWaitStatus(t, c, tier, 2, "200Gi", metav1.ConditionTrue, v1alpha1.ReasonAvailable)
		if fmt.Sprint(tier.Status.RetainedPersistentVolumes) != fmt.Sprint([]string{bound}) {
			t.Errorf("retainedPersistentVolumes %v, want [%s]", tier.Status.RetainedPersistentVolumes, bound)
		}
		if !strings.Contains(tierReady(tier).Message, "status.retainedPersistentVolumes") {
			t.Errorf("Ready message does not mention the retained volume: %q", tierReady(tier).Message)
		}
		pv := &corev1.PersistentVolume{}
		if err := c.Get(ctx, client.ObjectKey{Name: bound}, pv); err != nil || !pv.DeletionTimestamp.IsZero() {
			t.Fatalf("the Bound volume: %v, deletion %v", err, pv.DeletionTimestamp)
		}
		if pv2 := desired.PersistentVolumeName("fast", "worker-2", "/mnt/b"); tierExists(t, c, pv2) {
			t.Errorf("the unused volume %s of the node that left still exists", pv2)
		}
		tierWaitEvent(t, c, "fast", "PersistentVolumeRetained", bound)
	})

	t.Run("a capacity change leaves volumes in use alone", func(t *testing.T) {
		inUse := desired.PersistentVolumeName("fast", "worker-1", "/mnt/a")
		tierBind(t, c, inUse, "claim-1")
		tierWaitStatus(t, c, tier, 2, "200Gi", metav1.ConditionTrue, v1alpha1.ReasonAvailable)
		patched := tier.DeepCopy()
		patched.Spec.Local.CapacityPerPath = resource.MustParse("150Gi")
		if err := c.Patch(ctx, patched, client.MergeFrom(tier)); err != nil {
			t.Fatal(err)
		}
		tierWaitStatus(t, c, tier, 2, "250Gi", metav1.ConditionTrue, v1alpha1.ReasonAvailable)
		if msg := tierReady(tier).Message; !strings.Contains(msg, inUse+" (capacity 100Gi, want 150Gi)") {
			t.Errorf("Ready message does not report the volume left alone: %q", msg)
		}
		for name, want := range map[string]string{inUse: "100Gi", desired.PersistentVolumeName("fast", "worker-1", "/mnt/b"): "150Gi"} {
			pv := &corev1.PersistentVolume{}
			if err := c.Get(ctx, client.ObjectKey{Name: name}, pv); err != nil {
				t.Fatal(err)
			}
			if got := pv.Spec.Capacity[corev1.ResourceStorage]; got.Cmp(resource.MustParse(want)) != 0 {
				t.Errorf("%s: capacity %s, want %s", name, got.String(), want)
			}
		}
	})

	t.Run("deleting the tier deletes only unused volumes", func(t *testing.T) {
		if err := c.Delete(ctx, tier); err != nil {
			t.Fatal(err)
		}
		envtestutil.WaitGone(t, c, tier)
		var left []string
		for _, pv := range tierVolumes(t, c, "fast") {
			left = append(left, pv.Name)
			if pv.Spec.ClaimRef == nil || !pv.DeletionTimestamp.IsZero() {
				t.Errorf("%s: claim %v, deletion %v: only Bound volumes should be left, untouched", pv.Name, pv.Spec.ClaimRef, pv.DeletionTimestamp)
			}
		}
		sort.Strings(left)
		if want := []string{bound, desired.PersistentVolumeName("fast", "worker-1", "/mnt/a")}; fmt.Sprint(left) != fmt.Sprint(sortedCopy(want)) {
			t.Errorf("volumes left %v, want the two Bound ones %v", left, want)
		}
	})

	t.Run("a StorageClass Strata cannot own", func(t *testing.T) {
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "taken"}, Provisioner: "ebs.csi.aws.com",
			Parameters: map[string]string{"type": "gp3"}}
		if err := c.Create(ctx, sc); err != nil {
			t.Fatal(err)
		}
		other := tierLocal("other", "taken", map[string]string{"example.com/fast": "true"}, "1Ti", "/mnt/c")
		if err := c.Create(ctx, other); err != nil {
			t.Fatal(err)
		}
		tierWaitStatus(t, c, other, 0, "", metav1.ConditionFalse, v1alpha1.ReasonStorageClassConflict)
		msg := tierReady(other).Message
		for _, s := range []string{"provisioner ebs.csi.aws.com", "parameters type", "reclaimPolicy Delete", "volumeBindingMode Immediate"} {
			if !strings.Contains(msg, s) {
				t.Errorf("conflict message does not say %q: %q", s, msg)
			}
		}
		if n := len(tierVolumes(t, c, "other")); n != 0 {
			t.Errorf("%d volumes in a class Strata does not own", n)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(sc), sc); err != nil || sc.Provisioner != "ebs.csi.aws.com" || len(sc.OwnerReferences) != 0 {
			t.Errorf("the existing class was changed: %+v (%v)", sc, err)
		}

		// The class gone, the tier recovers.
		if err := c.Delete(ctx, sc); err != nil {
			t.Fatal(err)
		}
		tierWaitStatus(t, c, other, 1, "1Ti", metav1.ConditionTrue, v1alpha1.ReasonAvailable)
	})

	t.Run("no node matches", func(t *testing.T) {
		none := tierLocal("none", "strata-none", map[string]string{"example.com/absent": "true"}, "1Gi", "/mnt/a")
		if err := c.Create(ctx, none); err != nil {
			t.Fatal(err)
		}
		tierWaitStatus(t, c, none, 0, "", metav1.ConditionFalse, v1alpha1.ReasonNoMatchingNodes)
		if msg := tierReady(none).Message; !strings.Contains(msg, "example.com/absent=true") {
			t.Errorf("message does not name the selector: %q", msg)
		}
		tierLabelNode(t, c, "worker-slow", "example.com/absent", "true")
		tierWaitStatus(t, c, none, 1, "1Gi", metav1.ConditionTrue, v1alpha1.ReasonAvailable)
	})

	t.Run("a tier made dynamic removes its unused volumes and its finalizer", func(t *testing.T) {
		none := &v1alpha1.StorageTier{ObjectMeta: metav1.ObjectMeta{Name: "none"}}
		if err := c.Get(ctx, client.ObjectKeyFromObject(none), none); err != nil {
			t.Fatal(err)
		}
		patched := none.DeepCopy()
		patched.Spec.Local = nil
		if err := c.Patch(ctx, patched, client.MergeFrom(none)); err != nil {
			t.Fatal(err)
		}
		// Its class stays (owned by the tier), so the dynamic tier is Ready.
		tierWaitStatus(t, c, none, 0, "", metav1.ConditionTrue, v1alpha1.ReasonAvailable)
		if len(none.Finalizers) != 0 {
			t.Errorf("finalizers %v", none.Finalizers)
		}
		if n := len(tierVolumes(t, c, "none")); n != 0 {
			t.Errorf("%d volumes left", n)
		}
	})
}

// tierLocal is the samples' nvme-local tier under another name, made local.
func tierLocal(name, class string, selector map[string]string, capacity string, paths ...string) *v1alpha1.StorageTier {
	t := gen.NVMeTier(gen.SetTierName(name), gen.SetStorageClass(class), gen.SetLocal(selector, capacity, paths...))
	return &t
}

func tierCreateNode(t *testing.T, c client.Client, name string, labels map[string]string) {
	t.Helper()
	if err := c.Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}); err != nil {
		t.Fatal(err)
	}
}

// tierLabelNode sets a node's label, or removes it when value is "".
func tierLabelNode(t *testing.T, c client.Client, node, key, value string) *corev1.Node {
	t.Helper()
	v := "null"
	if value != "" {
		v = fmt.Sprintf("%q", value)
	}
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%s}}}`, key, v)
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}
	if err := c.Patch(context.Background(), n, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	return n
}

// tierBind makes a volume look Bound to a claim, as the PersistentVolume controller would.
func tierBind(t *testing.T, c client.Client, name, claim string) {
	t.Helper()
	ctx := context.Background()
	pv := &corev1.PersistentVolume{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, pv); err != nil {
		t.Fatal(err)
	}
	pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: "default", Name: claim,
		UID: types.UID("00000000-0000-4000-8000-" + fmt.Sprintf("%012d", len(claim)))}
	if err := c.Update(ctx, pv); err != nil {
		t.Fatal(err)
	}
	pv.Status.Phase = corev1.VolumeBound
	if err := c.Status().Update(ctx, pv); err != nil {
		t.Fatal(err)
	}
}

// tierVolumes lists the volumes labelled with a tier that are not being deleted, sorted by
// name. The API server gives every volume the kubernetes.io/pv-protection finalizer, which the
// controller-manager removes from unused volumes; there is none here, so a deleted volume stays,
// being deleted.
func tierVolumes(t *testing.T, c client.Client, tier string) []corev1.PersistentVolume {
	t.Helper()
	list := &corev1.PersistentVolumeList{}
	if err := c.List(context.Background(), list, client.MatchingLabels{desired.LabelTier: tier}); err != nil {
		t.Fatal(err)
	}
	var out []corev1.PersistentVolume
	for _, pv := range list.Items {
		if pv.DeletionTimestamp.IsZero() {
			out = append(out, pv)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// tierExists says whether a volume exists and is not being deleted (see tierVolumes).
func tierExists(t *testing.T, c client.Client, name string) bool {
	t.Helper()
	pv := &corev1.PersistentVolume{}
	err := c.Get(context.Background(), client.ObjectKey{Name: name}, pv)
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	return err == nil && pv.DeletionTimestamp.IsZero()
}

// tierWaitStatus waits until the tier's status describes its current generation with the given
// volume count, capacity ("" for none) and Ready condition.
func tierWaitStatus(t *testing.T, c client.Client, tier *v1alpha1.StorageTier, volumes int32, capacity string,
	ready metav1.ConditionStatus, reason string) {
	t.Helper()
	envtestutil.WaitFor(t, c, tier, func() error {
		s := tier.Status
		if s.ObservedGeneration != tier.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", s.ObservedGeneration, tier.Generation)
		}
		if err := envtestutil.Condition(s.Conditions, v1alpha1.ConditionReady, ready, reason); err != nil {
			return err
		}
		if s.PersistentVolumes != volumes {
			return fmt.Errorf("persistentVolumes %d, want %d", s.PersistentVolumes, volumes)
		}
		switch {
		case capacity == "" && s.Capacity != nil:
			return fmt.Errorf("capacity %s, want none", s.Capacity.String())
		case capacity != "" && (s.Capacity == nil || s.Capacity.Cmp(resource.MustParse(capacity)) != 0):
			return fmt.Errorf("capacity %v, want %s", s.Capacity, capacity)
		}
		return nil
	})
}

func tierReady(tier *v1alpha1.StorageTier) *metav1.Condition {
	for i := range tier.Status.Conditions {
		if tier.Status.Conditions[i].Type == v1alpha1.ConditionReady {
			return &tier.Status.Conditions[i]
		}
	}
	return &metav1.Condition{}
}

// tierWaitEvent waits for an event about the tier with the given reason whose note names what.
func tierWaitEvent(t *testing.T, c client.Client, tier, reason, what string) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, fmt.Sprintf("a %s event naming %s", reason, what), func() error {
		list := &eventsv1.EventList{}
		if err := c.List(context.Background(), list); err != nil {
			return err
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "StorageTier" && e.Regarding.Name == tier {
				seen = append(seen, e.Reason+": "+e.Note)
				if e.Reason == reason && strings.Contains(e.Note, what) {
					return nil
				}
			}
		}
		return fmt.Errorf("the tier's events: %v", seen)
	})
}

func tierManagedBy(fields []metav1.ManagedFieldsEntry, manager string) bool {
	for _, f := range fields {
		if f.Manager == manager && f.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// TestTierRBAC runs the StorageTier controller as a user holding only the generated role
// (config/rbac): a local tier gets its class and volumes, is deleted with a volume in use, and
// nothing is forbidden on the way.
func TestTierRBAC(t *testing.T) {
	o := tierControlPlane(t)
	ctx := context.Background()
	c := o.C

	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := controlplane.ReadObjects(filepath.Join(root, "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const user = "strata-tier-test"
	for _, obj := range objs {
		if ns := obj.GetNamespace(); ns != "" {
			_ = c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		}
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
		ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: obj.GetKind(), Name: obj.GetName()}
		var binding client.Object = &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: obj.GetName()}, Subjects: subjects, RoleRef: ref}
		if obj.GetKind() == "Role" {
			binding = &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: obj.GetName(), Namespace: obj.GetNamespace()}, Subjects: subjects, RoleRef: ref}
		}
		if err := c.Create(ctx, binding); err != nil {
			t.Fatal(err)
		}
	}

	cfg := rest.CopyConfig(o.Env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	mgrCtx, cancel := context.WithCancel(ctx)
	mgr, err := ctrl.NewManager(cfg, controllers.ManagerOptions(ctrl.Options{
		Scheme:     envtestutil.NewScheme(),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}))
	if err != nil {
		t.Fatal(err)
	}
	r := &tierctl.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("strata-tier"),
		// The generated Role's namespace, where cleanup pods may be made.
		Recycling: controllers.VolumeRecycling{Namespace: "strata-system", Backoff: time.Second}}
	if err := r.SetupWithManager(mgrCtx, mgr); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mgrCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	tierCreateNode(t, c, "worker-1", map[string]string{"example.com/fast": "true"})
	tier := tierLocal("rbac", "strata-rbac", map[string]string{"example.com/fast": "true"}, "10Gi", "/mnt/a", "/mnt/b")
	if err := c.Create(ctx, tier); err != nil {
		t.Fatal(err)
	}
	tierWaitStatus(t, c, tier, 2, "20Gi", metav1.ConditionTrue, v1alpha1.ReasonAvailable)
	tierWaitEvent(t, c, "rbac", "Available", "StorageClass")

	// A Released volume is wiped and freed under the same role (pods, claims, volumes).
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "strata-system"}}); err != nil {
		t.Fatal(err)
	}
	released := desired.PersistentVolumeName("rbac", "worker-1", "/mnt/b")
	claim := tierRelease(t, c, released, "gone")
	recycleFinish(t, c, recycleWaitPod(t, c, "strata-system", desired.CleanupPodName(released, claim), ""), corev1.PodSucceeded, "")
	freed := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: released}}
	envtestutil.WaitFor(t, c, freed, func() error {
		if freed.Spec.ClaimRef != nil {
			return fmt.Errorf("claimRef %+v", freed.Spec.ClaimRef)
		}
		return nil
	})
	freed.Status.Phase = corev1.VolumeAvailable // the PersistentVolume controller's part
	if err := c.Status().Update(ctx, freed); err != nil {
		t.Fatal(err)
	}
	tierBind(t, c, desired.PersistentVolumeName("rbac", "worker-1", "/mnt/a"), "claim-0")
	if err := c.Delete(ctx, tier); err != nil {
		t.Fatal(err)
	}
	envtestutil.WaitGone(t, c, tier)
	if left := tierVolumes(t, c, "rbac"); len(left) != 1 || left[0].Spec.ClaimRef == nil {
		t.Errorf("volumes left: %d, want the Bound one", len(left))
	}
}

// tierControlPlane starts a control plane without a manager: the test runs its own.
func tierControlPlane(t *testing.T) *envtestutil.Operator {
	t.Helper()
	envtestutil.SkipUnderShort(t)
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(envtestutil.TestWriter{T: t})))
	env, c := testutil.ControlPlane(t)
	return &envtestutil.Operator{Env: env, C: c}
}
