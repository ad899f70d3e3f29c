package desired

import (
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// metadataVolume is the size and StorageClass of a role's small metadata volumes (KRaft
// controllers, Elasticsearch masters) as the plan placed them (internal/plan/metadata.go).
// A plan without the role's entry, or an entry without a class, means the cluster's default
// StorageClass: the claim names none, so it never takes a whole disk of a local data tier.
func metadataVolume(plan v1alpha1.Plan, role string, size resource.Quantity) (resource.Quantity, string) {
	for _, v := range plan.MetadataVolumes {
		if v.Role == role {
			if !v.Size.IsZero() {
				size = v.Size
			}
			return size, v.StorageClassName
		}
	}
	return size, ""
}
