package plan

import (
	"math/big"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Storage placement and its cost.
//
// Each kind of data a pipeline keeps has its own access pattern (DESIGN.md §1.3, §1.5): Kafka
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
	role     string
	tier     string
	size     resource.Quantity
	replicas int32
}

func placements(s *v1alpha1.AnalyticsPipelineSpec, brokers, executors, dataNodes int32) []placement {
	return []placement{
		{v1alpha1.RoleKafkaLog, s.Kafka.Storage.Tier, s.Kafka.Storage.Size, brokers},
		{v1alpha1.RoleSparkSpill, s.Spark.Shuffle.SpillTier, s.Spark.Shuffle.SpillSize, executors},
		// Spill and data get a row each even on the same tier: they are separate volumes.
		{v1alpha1.RoleSparkShuffleData, s.Spark.Shuffle.DataTier, *s.Spark.Shuffle.DataSize, executors},
		{v1alpha1.RoleElasticsearchData, s.Elasticsearch.Storage.Tier, s.Elasticsearch.Storage.Size, dataNodes},
	}
}

// storagePlan prices the placements, and the same placements on the fastest tier.
type storagePlan struct {
	rows              []v1alpha1.StoragePlacement
	total, singleTier cents
}

func planStorage(ps []placement, tiers tierSet) storagePlan {
	prices := tiers.prices()
	fastPrice := prices[tiers.fastest().Name]
	out := storagePlan{total: zeroCents(), singleTier: zeroCents()}
	for _, p := range ps {
		t := tiers[p.tier]
		size := ratOf(p.size)
		cost := monthlyCost(size, p.replicas, prices[p.tier])
		out.rows = append(out.rows, v1alpha1.StoragePlacement{
			Role:             p.role,
			Tier:             t.Name,
			StorageClassName: t.Spec.StorageClassName,
			SizePerReplica:   p.size.DeepCopy(),
			Replicas:         p.replicas,
			MonthlyCost:      cost.String(),
		})
		out.total = out.total.plus(cost)
		out.singleTier = out.singleTier.plus(monthlyCost(size, p.replicas, fastPrice))
	}
	return out
}
