package plan

import (
	"math/big"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Volumes as the storage really provides them.
//
// A claim is not always the volume it gets:
//   - a dynamic tier may have a smallest volume (AWS st1 and sc1: 125 GiB); a smaller claim fails
//     to provision, so the plan claims the minimum and prices it;
//   - on a local tier every claim binds a whole disk (capacityPerPath), whatever it asks for, so
//     the plan prices whole disks and refuses a claim no disk can hold;
//   - a volume's bandwidth may scale with its size (st1: 40 MB/s per TiB up to 500 MB/s), so a
//     small volume is much slower than the tier's ceiling.
// AWS's figures: https://docs.aws.amazon.com/ebs/latest/userguide/hdd-vols.html (see
// docs/storage.md).

// tebibyte is one TiB in bytes.
const tebibyte = 1 << 40

// claimSize is what a claim of the given size must ask the tier for: the size, rounded up to the
// tier's minVolumeSize.
func claimSize(t *v1alpha1.StorageTier, size resource.Quantity) resource.Quantity {
	if m := t.Spec.MinVolumeSize; m != nil && size.Cmp(*m) < 0 {
		return m.DeepCopy()
	}
	return size.DeepCopy()
}

// volumeSize is the size of the volume a claim gets and is billed for: a whole disk on a local
// tier, else the claim.
func volumeSize(t *v1alpha1.StorageTier, claim resource.Quantity) resource.Quantity {
	if t.Spec.Local != nil {
		return t.Spec.Local.CapacityPerPath.DeepCopy()
	}
	return claim.DeepCopy()
}

// volumeBandwidth is the sustained bandwidth of one volume of the given size: the per-TiB
// baseline times the size, at most the tier's figure (its ceiling); the tier's figure when its
// throughput does not scale.
func volumeBandwidth(t *v1alpha1.StorageTier, size resource.Quantity, write bool) *big.Rat {
	return bandwidthOf(t, ratOf(size), write)
}

// bandwidthOf is volumeBandwidth for a size in bytes.
func bandwidthOf(t *v1alpha1.StorageTier, size *big.Rat, write bool) *big.Rat {
	ceiling := ratOf(t.Spec.ReadBytesPerSecond)
	if write {
		ceiling = ratOf(t.Spec.WriteBytesPerSecond)
	}
	per := t.Spec.ThroughputPerTiB
	if per == nil {
		return ceiling
	}
	rate := per.ReadBytesPerSecond
	if write {
		rate = per.WriteBytesPerSecond
	}
	scaled := quo(mul(ratOf(rate), size), ratInt(tebibyte))
	if scaled.Cmp(ceiling) < 0 {
		return scaled
	}
	return ceiling
}

// checkLocalClaims refuses a claim larger than a local tier's disks: it would never bind.
func checkLocalClaims(ps []placement, ts tierSet) error {
	for _, p := range ps {
		t := ts[p.tier]
		if t.Spec.Local == nil {
			continue
		}
		if claim := claimSize(t, p.size); claim.Cmp(t.Spec.Local.CapacityPerPath) > 0 {
			return fieldErr(p.field, "%s is larger than StorageTier %q's local disks (spec.local.capacityPerPath %s): "+
				"the claim would never bind", claim.String(), t.Name, t.Spec.Local.CapacityPerPath.String())
		}
	}
	return nil
}

// localVolumes counts the claims on each local tier and, when the tier's status reports its
// volumes, adds a reason when there are fewer volumes than claims.
func localVolumes(ps []placement, ts tierSet, why *reasons) []v1alpha1.LocalVolumeUse {
	claims := map[string]int32{}
	var order []string
	for _, p := range ps {
		if ts[p.tier].Spec.Local == nil {
			continue
		}
		if _, ok := claims[p.tier]; !ok {
			order = append(order, p.tier)
		}
		claims[p.tier] += p.replicas
	}
	var out []v1alpha1.LocalVolumeUse
	for _, name := range order {
		t := ts[name]
		use := v1alpha1.LocalVolumeUse{Tier: name, Claims: claims[name]}
		// A tier whose status was never written has no count: unknown, not zero.
		if t.Status.ObservedGeneration > 0 || t.Status.PersistentVolumes > 0 {
			n := t.Status.PersistentVolumes
			use.Available = &n
			if n < use.Claims {
				why.add("StorageTier %q has %d local volumes and the plan claims %d (each claim takes a whole disk): "+
					"add nodes or paths to the tier, or move a role off it", name, n, use.Claims)
			}
		}
		out = append(out, use)
	}
	return out
}
