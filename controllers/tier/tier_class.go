package tier

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// A local tier's StorageClass: Strata owns it (no provisioner, WaitForFirstConsumer) unless a
// class of that name is someone else's or differs where a class cannot change.

// ensureStorageClass creates or updates a local tier's StorageClass. A class of that name that
// Strata cannot own — other immutable fields, or another tier's — is left alone: it returns a
// message saying what differs.
func (r *Reconciler) ensureStorageClass(ctx context.Context, t *v1alpha1.StorageTier) (conflict string, err error) {
	want := desired.StorageClass(t)
	cur := &storagev1.StorageClass{}
	err = r.Client.Get(ctx, client.ObjectKey{Name: want.Name}, cur)
	switch {
	case apierrors.IsNotFound(err):
		return "", r.Applier.ApplyTyped(ctx, applyScope(t.Name), want, nil)
	case err != nil:
		return "", err
	}
	if c := classConflict(cur, t); c != "" {
		return c, nil
	}
	if labelsInclude(want.Labels, cur.Labels) && labelsInclude(want.Annotations, cur.Annotations) && classOwnedBy(cur, want.OwnerReferences[0]) {
		return "", nil
	}
	// Compatible (a class made by hand the same way is adopted): labels and owner reference.
	return "", r.Applier.ApplyTyped(ctx, applyScope(t.Name), want, cur)
}

// classConflict says how an existing class differs from what a local tier needs, in the fields
// the API server does not let change, or whose another tier's it is; "" when it does not.
func classConflict(sc *storagev1.StorageClass, t *v1alpha1.StorageTier) string {
	var diffs []string
	if sc.Provisioner != desired.NoProvisioner {
		diffs = append(diffs, fmt.Sprintf("provisioner %s (want %s)", sc.Provisioner, desired.NoProvisioner))
	}
	if len(sc.Parameters) > 0 {
		keys := make([]string, 0, len(sc.Parameters))
		for k := range sc.Parameters {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		diffs = append(diffs, fmt.Sprintf("parameters %s (want none)", strings.Join(keys, ", ")))
	}
	// The API server defaults these two when they are not given.
	if p := ptr.Deref(sc.ReclaimPolicy, corev1.PersistentVolumeReclaimDelete); p != corev1.PersistentVolumeReclaimRetain {
		diffs = append(diffs, fmt.Sprintf("reclaimPolicy %s (want Retain)", p))
	}
	if m := ptr.Deref(sc.VolumeBindingMode, storagev1.VolumeBindingImmediate); m != storagev1.VolumeBindingWaitForFirstConsumer {
		diffs = append(diffs, fmt.Sprintf("volumeBindingMode %s (want WaitForFirstConsumer)", m))
	}
	if owner := metav1.GetControllerOf(sc); owner != nil && !isTierRef(*owner, t.Name) {
		diffs = append(diffs, fmt.Sprintf("controller %s %s (want StorageTier %s)", owner.Kind, owner.Name, t.Name))
	}
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprintf("StorageClass %s exists with %s: Strata does not change it (these fields cannot change); "+
		"delete it, or set spec.storageClassName to a class name that is free", sc.Name, strings.Join(diffs, ", "))
}

// isTierRef says whether ref names the StorageTier name: this tier, or (another UID) an earlier
// tier of that name, whose class it takes over.
func isTierRef(ref metav1.OwnerReference, name string) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == v1alpha1.GroupVersion.Group && ref.Kind == "StorageTier" && ref.Name == name
}

// classOwnedBy says whether obj carries ref, as its only controller reference.
func classOwnedBy(obj metav1.Object, ref metav1.OwnerReference) bool {
	found := false
	for _, r := range obj.GetOwnerReferences() {
		switch {
		case r.UID == ref.UID:
			found = r.APIVersion == ref.APIVersion && r.Kind == ref.Kind && r.Name == ref.Name &&
				ptr.Deref(r.Controller, false) == ptr.Deref(ref.Controller, false) &&
				ptr.Deref(r.BlockOwnerDeletion, false) == ptr.Deref(ref.BlockOwnerDeletion, false)
		case ptr.Deref(r.Controller, false):
			return false
		}
	}
	return found
}

// labelsInclude says whether every key of want has its value in have.
func labelsInclude(want, have map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}
