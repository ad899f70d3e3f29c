package gen

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// TierOption changes one thing of a StorageTier.
type TierOption func(*v1alpha1.StorageTier)

// Tier is a provisioned tier: its StorageClass is "strata-" + name.
func Tier(name string, medium v1alpha1.Medium, read, write, monthlyPricePerGiB string, opts ...TierOption) v1alpha1.StorageTier {
	t := v1alpha1.StorageTier{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.StorageTierSpec{
			Medium:              medium,
			StorageClassName:    "strata-" + name,
			ReadBytesPerSecond:  Q(read),
			WriteBytesPerSecond: Q(write),
			MonthlyPricePerGiB:  monthlyPricePerGiB,
		},
	}
	for _, o := range opts {
		o(&t)
	}
	return t
}

// NVMeTier is the samples' nvme-local tier (800M read, 700M write, $0.216 per GiB-month),
// provisioned unless an option makes it local.
func NVMeTier(opts ...TierOption) v1alpha1.StorageTier {
	return Tier("nvme-local", v1alpha1.MediumNVMe, "800M", "700M", "0.216", opts...)
}

// HDDTier is the samples' hdd-st1 tier (500M, $0.054 per GiB-month), without AWS's size rules
// unless options add them.
func HDDTier(opts ...TierOption) v1alpha1.StorageTier {
	return Tier("hdd-st1", v1alpha1.MediumHDD, "500M", "500M", "0.054", opts...)
}

// APITiers are the two tiers docs/api.md's example pipeline names.
func APITiers() []v1alpha1.StorageTier { return []v1alpha1.StorageTier{NVMeTier(), HDDTier()} }

// SetTierName renames the tier (its StorageClass stays).
func SetTierName(name string) TierOption { return func(t *v1alpha1.StorageTier) { t.Name = name } }

// SetTierUID gives the tier the UID owner references carry.
func SetTierUID(uid string) TierOption {
	return func(t *v1alpha1.StorageTier) { t.UID = types.UID(uid) }
}

// SetStorageClass names the tier's StorageClass.
func SetStorageClass(name string) TierOption {
	return func(t *v1alpha1.StorageTier) { t.Spec.StorageClassName = name }
}

// SetLocal makes the tier local: a volume per selected node and path, of capacity each.
func SetLocal(selector map[string]string, capacity string, paths ...string) TierOption {
	return func(t *v1alpha1.StorageTier) {
		t.Spec.Local = &v1alpha1.LocalStorage{Paths: paths, CapacityPerPath: Q(capacity)}
		if selector != nil {
			t.Spec.Local.NodeSelector = metav1.LabelSelector{MatchLabels: selector}
		}
	}
}

// SetMinVolumeSize sets the smallest volume the tier's provisioner makes.
func SetMinVolumeSize(size string) TierOption {
	return func(t *v1alpha1.StorageTier) { q := Q(size); t.Spec.MinVolumeSize = &q }
}

// SetThroughputPerTiB makes the tier's throughput grow with the volume's size.
func SetThroughputPerTiB(read, write string) TierOption {
	return func(t *v1alpha1.StorageTier) {
		t.Spec.ThroughputPerTiB = &v1alpha1.ThroughputPerTiB{ReadBytesPerSecond: Q(read), WriteBytesPerSecond: Q(write)}
	}
}

// SetVolumes sets the status the tier controller writes: the local volumes it made.
func SetVolumes(n int32) TierOption {
	return func(t *v1alpha1.StorageTier) {
		t.Status.ObservedGeneration = t.Generation
		t.Status.PersistentVolumes = n
	}
}
