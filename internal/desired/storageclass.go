package desired

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// What a local StorageTier's StorageClass and volumes carry.
const (
	// NoProvisioner is the provisioner of a StorageClass whose volumes are created beforehand
	// (local volumes): Kubernetes binds claims to them and provisions nothing.
	NoProvisioner = "kubernetes.io/no-provisioner"

	// LabelTier names the tier of a StorageClass or PersistentVolume (see LabelValue: a name too
	// long for a label value is shortened and hashed); AnnotationTier holds the name in full.
	LabelTier      = "strata.dev/tier"
	AnnotationTier = "strata.dev/tier"
	// LabelNode names the node of a local PersistentVolume (see LabelValue); AnnotationNode and
	// AnnotationPath hold the node's name and the volume's path in full.
	LabelNode      = "strata.dev/node"
	AnnotationNode = "strata.dev/node"
	AnnotationPath = "strata.dev/path"

	// HostnameLabel is the node label a local volume's node affinity selects.
	HostnameLabel = corev1.LabelHostname
)

// StorageClassGVK and PersistentVolumeGVK are the kinds the tier builders return.
var (
	StorageClassGVK     = storagev1.SchemeGroupVersion.WithKind("StorageClass")
	PersistentVolumeGVK = corev1.SchemeGroupVersion.WithKind("PersistentVolume")
)

// StorageClass returns the StorageClass of a local tier: spec.storageClassName, no provisioner
// (its volumes are the PersistentVolumes below), WaitForFirstConsumer (a claim binds once its pod
// is scheduled, so the scheduler picks the node and then the volume on it) and reclaim policy
// Retain. The tier is its controlling owner: a class without its tier has no use, and deleting
// a class leaves the volumes of that class alone.
func StorageClass(t *v1alpha1.StorageTier) *storagev1.StorageClass {
	return &storagev1.StorageClass{
		TypeMeta: metav1.TypeMeta{APIVersion: StorageClassGVK.GroupVersion().String(), Kind: StorageClassGVK.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Name:            t.Spec.StorageClassName,
			Labels:          TierLabels(t),
			Annotations:     map[string]string{AnnotationTier: t.Name},
			OwnerReferences: []metav1.OwnerReference{TierOwnerReference(t)},
		},
		Provisioner:       NoProvisioner,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimRetain),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
}

// TierLabels are the labels of every object built for t; TierSelectorLabels select them.
func TierLabels(t *v1alpha1.StorageTier) map[string]string {
	return map[string]string{
		LabelManagedBy: ManagedBy,
		LabelPartOf:    PartOf,
		LabelTier:      LabelValue(t.Name),
	}
}

// TierSelectorLabels select the objects built for t.
func TierSelectorLabels(t *v1alpha1.StorageTier) map[string]string {
	return map[string]string{LabelManagedBy: ManagedBy, LabelTier: LabelValue(t.Name)}
}

// TierOwnerReference makes t the controller of its StorageClass.
func TierOwnerReference(t *v1alpha1.StorageTier) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         v1alpha1.GroupVersion.String(),
		Kind:               "StorageTier",
		Name:               t.Name,
		UID:                t.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

// LabelValue returns s when it is a valid label value, else a valid one made of the start of s
// and a hash of all of it: object names (up to 253 characters) exceed the 63 a label value
// holds. Equal inputs give equal values; the full name is in an annotation.
func LabelValue(s string) string {
	if len(validation.IsValidLabelValue(s)) == 0 {
		return s
	}
	const hashLen = 12
	keep := validation.LabelValueMaxLength - hashLen - 1
	var b strings.Builder
	for _, r := range s {
		if b.Len() == keep {
			break
		}
		if r < 0x80 && (tierIsAlnum(byte(r)) || r == '-' || r == '_' || r == '.') {
			b.WriteRune(r)
		}
	}
	prefix := strings.TrimLeft(strings.TrimRight(b.String(), "-_."), "-_.")
	if prefix == "" {
		return tierHash(hashLen, s)
	}
	return prefix + "-" + tierHash(hashLen, s)
}

// tierHash returns the first n hex digits of the SHA-256 of parts, separated by a byte that names
// and paths do not hold.
func tierHash(n int, parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:])[:n]
}

func tierIsAlnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}
