package plan

import (
	"math/big"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Storage placement and its cost.
//
// Each kind of data a pipeline keeps has its own access pattern (docs/studies.md §1.3, §1.5): Kafka
// logs and spill files are read and written many times, final shuffle data files are twice as
// large as everything else Spark writes but read a few times, Elasticsearch data is indexed and
// searched. The spec places each on a tier; the plan sizes and prices each placement and also
// prices the same data all on the pipeline's fastest tier, so the saving of a split — about half
// the cost at the same speed, in the study — is visible.

// tierRef is one place the spec names a tier.
type tierRef struct {
	field, name string
}

// tierSet is the tiers a pipeline names, resolved and validated, with their parsed prices.
type tierSet map[string]*v1alpha1.StorageTier

// prices parses each tier's validated price once.
func (ts tierSet) prices() map[string]*big.Rat {
	out := make(map[string]*big.Rat, len(ts))
	for name, t := range ts {
		out[name], _ = parsePrice(t.Spec.MonthlyPricePerGiB)
	}
	return out
}

// resolveTiers finds every tier the spec names. A missing tier is a MissingTierError (wait for
// it); a tier whose own spec is unusable is a FieldError on that tier.
func resolveTiers(s *v1alpha1.AnalyticsPipelineSpec, tiers []v1alpha1.StorageTier) (tierSet, error) {
	refs := []tierRef{
		{"spec.kafka.storage.tier", s.Kafka.Storage.Tier},
		{"spec.spark.shuffle.spillTier", s.Spark.Shuffle.SpillTier},
		{"spec.spark.shuffle.dataTier", s.Spark.Shuffle.DataTier},
		{"spec.elasticsearch.storage.tier", s.Elasticsearch.Storage.Tier},
	}
	// Metadata volumes name a tier only when they leave the cluster's default StorageClass.
	if c := s.Kafka.Controllers; c != nil && c.Storage.Tier != "" {
		refs = append(refs, tierRef{"spec.kafka.controllers.storage.tier", c.Storage.Tier})
	}
	if m := s.Elasticsearch.Masters; m != nil && m.Storage.Tier != "" {
		refs = append(refs, tierRef{"spec.elasticsearch.masters.storage.tier", m.Storage.Tier})
	}
	set := tierSet{}
	for _, r := range refs {
		if _, ok := set[r.name]; ok {
			continue
		}
		t := findTier(tiers, r.name)
		if t == nil {
			return nil, &MissingTierError{Field: r.field, Tier: r.name}
		}
		if err := validateTier(t); err != nil {
			return nil, err
		}
		set[r.name] = t
	}
	return set, nil
}

// findTier returns the first tier with the name; tier names are unique in a cluster.
func findTier(tiers []v1alpha1.StorageTier, name string) *v1alpha1.StorageTier {
	for i := range tiers {
		if tiers[i].Name == name {
			return &tiers[i]
		}
	}
	return nil
}

func mediumRank(m v1alpha1.Medium) int {
	switch m {
	case v1alpha1.MediumNVMe:
		return 3
	case v1alpha1.MediumSSD:
		return 2
	}
	return 1
}

// fastest ranks tiers by medium (NVMe, SSD, HDD), then read bandwidth — shuffle reads are what
// the study found slow on HDD — then write bandwidth, then name, so the choice is deterministic.
func (ts tierSet) fastest() *v1alpha1.StorageTier {
	var best *v1alpha1.StorageTier
	for _, t := range ts {
		if best == nil || faster(t, best) {
			best = t
		}
	}
	return best
}

func faster(a, b *v1alpha1.StorageTier) bool {
	if ra, rb := mediumRank(a.Spec.Medium), mediumRank(b.Spec.Medium); ra != rb {
		return ra > rb
	}
	if c := a.Spec.ReadBytesPerSecond.Cmp(b.Spec.ReadBytesPerSecond); c != 0 {
		return c > 0
	}
	if c := a.Spec.WriteBytesPerSecond.Cmp(b.Spec.WriteBytesPerSecond); c != 0 {
		return c > 0
	}
	return a.Name < b.Name
}

// placement is one role's data before pricing.
type placement struct {
	role, field string
	tier        string
	size        resource.Quantity
	replicas    int32
	// write is what one replica writes to its volume per second; retention is how long its
	// data is kept (see retention.go).
	write     *big.Rat
	retention int64
	// sustained is this role's share of the write bandwidth its volume sustains; nil: the
	// whole bandwidth of a volume of its own (shuffledisk.go sets it for the executors' roles).
	sustained *big.Rat
}

func placements(s *v1alpha1.AnalyticsPipelineSpec, brokers, executors, dataNodes int32) []placement {
	return []placement{
		{role: v1alpha1.RoleKafkaLog, field: "spec.kafka.storage.size", tier: s.Kafka.Storage.Tier,
			size: s.Kafka.Storage.Size, replicas: brokers},
		{role: v1alpha1.RoleSparkSpill, field: "spec.spark.shuffle.spillSize", tier: s.Spark.Shuffle.SpillTier,
			size: s.Spark.Shuffle.SpillSize, replicas: executors},
		// Spill and data get a row each even on the same tier: they are separate volumes.
		{role: v1alpha1.RoleSparkShuffleData, field: "spec.spark.shuffle.dataSize", tier: s.Spark.Shuffle.DataTier,
			size: *s.Spark.Shuffle.DataSize, replicas: executors},
		{role: v1alpha1.RoleElasticsearchData, field: "spec.elasticsearch.storage.size", tier: s.Elasticsearch.Storage.Tier,
			size: s.Elasticsearch.Storage.Size, replicas: dataNodes},
	}
}

// realVolume is the volume a placement's claim really gets on its tier.
func realVolume(t *v1alpha1.StorageTier, size resource.Quantity) resource.Quantity {
	return volumeSize(t, claimSize(t, size))
}

// storagePlan prices the placements, and the same placements on the fastest tier.
type storagePlan struct {
	rows              []v1alpha1.StoragePlacement
	total, singleTier cents
}

// planStorage prices what each claim really binds: the claim rounded up to the tier's
// minVolumeSize, a whole disk on a local tier.
func planStorage(ps []placement, tiers tierSet) storagePlan {
	prices := tiers.prices()
	fast := tiers.fastest()
	fastPrice := prices[fast.Name]
	out := storagePlan{total: zeroCents(), singleTier: zeroCents()}
	for _, p := range ps {
		t := tiers[p.tier]
		claim := claimSize(t, p.size)
		vol := volumeSize(t, claim)
		cost := monthlyCost(ratOf(vol), p.replicas, prices[p.tier])
		row := v1alpha1.StoragePlacement{
			Role:             p.role,
			Tier:             t.Name,
			StorageClassName: t.Spec.StorageClassName,
			SizePerReplica:   claim,
			Replicas:         p.replicas,
			RetentionSeconds: p.retention,
			MonthlyCost:      cost.String(),
		}
		row.VolumeSize = &vol
		if p.write != nil {
			row.WriteBytesPerSecond = floor64(p.write)
		}
		sustained := p.sustained
		if sustained == nil {
			sustained = volumeBandwidth(t, vol, true)
		}
		row.SustainedWriteBytesPerSecond = floor64(sustained)
		out.rows = append(out.rows, row)
		out.total = out.total.plus(cost)
		out.singleTier = out.singleTier.plus(monthlyCost(ratOf(realVolume(fast, p.size)), p.replicas, fastPrice))
	}
	return out
}

// Money.
//
// Prices are decimal strings ("0.216" per GiB-month) and costs are reported as decimal strings
// with two places, because a float cannot represent 0.216 and a bill that is off by a cent in a
// status field invites distrust of every other figure. Costs are computed exactly as rationals
// and rounded once per storage role, half up; totals are sums of the rounded role costs, so the
// figures a user adds up by hand match the total.

// parsePrice parses a validated monthlyPricePerGiB.
func parsePrice(s string) (*big.Rat, bool) {
	return new(big.Rat).SetString(s)
}

// cents is an amount of money in hundredths of a currency unit.
type cents struct{ n *big.Int }

func zeroCents() cents { return cents{new(big.Int)} }

func (c cents) plus(o cents) cents { return cents{new(big.Int).Add(c.n, o.n)} }

// String prints the amount with two places: "8.64", "0.05", "-1.20".
func (c cents) String() string {
	abs := new(big.Int).Abs(c.n)
	units, rest := new(big.Int).QuoRem(abs, big.NewInt(100), new(big.Int))
	s := units.String() + "." + string('0'+byte(rest.Int64()/10)) + string('0'+byte(rest.Int64()%10))
	if c.n.Sign() < 0 {
		return "-" + s
	}
	return s
}

// monthlyCost is size/GiB × replicas × price per GiB-month, rounded to cents. It stays in
// integers until the one rounding division: normalising intermediate rationals (a GCD each
// time) was most of Compute's running time.
func monthlyCost(size *big.Rat, replicas int32, pricePerGiB *big.Rat) cents {
	num := new(big.Int).Mul(size.Num(), pricePerGiB.Num())
	num.Mul(num, big.NewInt(int64(replicas)*100))
	den := new(big.Int).Mul(size.Denom(), pricePerGiB.Denom())
	den.Mul(den, big.NewInt(gib))
	// half up: ⌊(2·num + den) / (2·den)⌋
	num.Lsh(num, 1).Add(num, den)
	den.Lsh(den, 1)
	return cents{num.Div(num, den)}
}
