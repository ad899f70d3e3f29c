package plan

import (
	"fmt"
	"math/big"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// The executors' shuffle disks.
//
// Every executor writes what it reads from Kafka (its share of the consumer traffic, C/E) to its
// spill volume and to its shuffle data volume (planRetention gives both that rate). What a
// volume sustains may be far below its tier's figure: on AWS st1 it is 40 MB/s per TiB of the
// volume's size, so st1's smallest volume (125 GiB) sustains 4.9 MB/s, a fifth of what an
// executor reading 22.57 MB/s writes. Each volume is held to the target utilization of what it
// sustains, as the brokers' log volumes are (planBrokers):
//
//   - where the tier's bandwidth scales with size (spec.throughputPerTiB) and its volumes are
//     not whole local disks, size buys bandwidth: the plan claims the smallest whole number of
//     GiB that sustains the rate, never less than the spec asks for. Growing a claim is cheaper
//     than adding executors, which cost CPU and memory; the claim, its cost and the
//     SparkApplication's on-demand claims (internal/desired, ShuffleVolumes) follow the plan.
//     The claim also sustains what the executor writes at its processing rate
//     (spec.spark.messagesPerSecondPerExecutor, which the autoscaler replaces by the measured
//     one; at most its usable link rate): sized for the planned rate alone, a claim would
//     shrink as executors are added, each writing less of it, and the stage's capacity would
//     stay where it was — the autoscaler, adding executors for a load above the spec's, would
//     never relieve it. So a volume keeps up with its executor, and SparkShuffleDisk carries at
//     least what SparkProcessing does;
//   - where no volume of the tier sustains it (a local disk, a tier that does not scale, the
//     ceiling), more executors do, each writing less: the executor count covers the volumes as
//     the broker count covers the log volumes, and past spec.spark.executors.max the
//     SparkShuffleDisk stage is the bottleneck and Plan.Unsatisfied names the fields.
//
// Spill and shuffle data on one tier are one volume (ShuffleVolumes mounts a single local dir
// holding both claims' sizes), which then takes both writes.

// Indices of the executors' roles in placements.
const (
	spillPlacement = 1
	dataPlacement  = 2
)

// maxPlannedVolume is the largest claim the plan makes by itself: the largest volume admission
// accepts.
var maxPlannedVolume = resource.MustParse(v1alpha1.MaxVolumeSize)

// executorVolume is one volume every executor mounts and the placements whose data it holds.
type executorVolume struct {
	tier  *v1alpha1.StorageTier
	roles []int
	// size is the volume the spec's sizes give: a whole disk on a local tier, else the roles'
	// claims together.
	size *big.Rat
}

// executorVolumes returns the executors' volumes: one per tier the spill and the shuffle data
// are on.
func executorVolumes(sh v1alpha1.ShuffleSpec, ts tierSet) []executorVolume {
	spill := ts[sh.SpillTier]
	claims := func(t *v1alpha1.StorageTier, sizes ...resource.Quantity) *big.Rat {
		if t.Spec.Local != nil {
			return ratOf(t.Spec.Local.CapacityPerPath)
		}
		sum := new(big.Rat)
		for _, s := range sizes {
			sum.Add(sum, ratOf(claimSize(t, s)))
		}
		return sum
	}
	if sh.DataTier == sh.SpillTier {
		return []executorVolume{{spill, []int{spillPlacement, dataPlacement}, claims(spill, sh.SpillSize, *sh.DataSize)}}
	}
	data := ts[sh.DataTier]
	return []executorVolume{
		{spill, []int{spillPlacement}, claims(spill, sh.SpillSize)},
		{data, []int{dataPlacement}, claims(data, *sh.DataSize)},
	}
}

// scales reports whether a larger claim buys the volume more bandwidth.
func (v executorVolume) scales() bool {
	return v.tier.Spec.Local == nil && v.tier.Spec.ThroughputPerTiB != nil
}

// most is the most write bandwidth one such volume sustains: at the spec's size, or, where size
// buys bandwidth, at the largest size the plan claims.
func (v executorVolume) most() *big.Rat {
	size := v.size
	if v.scales() && ratOf(maxPlannedVolume).Cmp(size) > 0 {
		size = ratOf(maxPlannedVolume)
	}
	return bandwidthOf(v.tier, size, true)
}

// needs is the bandwidth the volume needs so that the executor's writes to it (write for each
// role it holds) stay within target % of it.
func (v executorVolume) needs(write *big.Rat, target int32) *big.Rat {
	return quo(mul(write, ratInt(int64(len(v.roles))), ratHundred), ratInt(int64(target)))
}

// shuffleDisks is what the executors' volumes need of the executor count.
type shuffleDisks struct {
	vols []executorVolume
	// need is, per volume, the smallest executor count whose writes it sustains within the
	// target: ⌈roles × C × 100 / (most × target)⌉.
	need []*big.Int
}

func newShuffleDisks(sh v1alpha1.ShuffleSpec, ts tierSet, w workload) shuffleDisks {
	d := shuffleDisks{vols: executorVolumes(sh, ts)}
	for _, v := range d.vols {
		d.need = append(d.need, ceilInt(quo(v.needs(w.consume, w.target), v.most())))
	}
	return d
}

// executors is the executor count every volume needs.
func (d shuffleDisks) executors() *big.Int {
	need := big.NewInt(0)
	for _, n := range d.need {
		if n.Cmp(need) > 0 {
			need = n
		}
	}
	return need
}

// explain adds a reason for every volume whose writes no executor count up to
// spec.spark.executors.max keeps within the target: count executors (the maximum) then write
// more to it than the target share of the most it sustains.
func (d shuffleDisks) explain(w workload, sp v1alpha1.SparkSpec, count int32, why *reasons) {
	limit := big.NewInt(int64(sp.Executors.Max))
	write := quo(w.consume, ratInt(int64(count)))
	for i, v := range d.vols {
		if d.need[i].Cmp(limit) <= 0 {
			continue
		}
		most := v.most()
		how := "at any size"
		switch {
		case v.tier.Spec.Local != nil:
			how = fmt.Sprintf("as a whole local disk (spec.local.capacityPerPath %s)", v.tier.Spec.Local.CapacityPerPath.String())
		case v.scales():
			how = fmt.Sprintf("at any size (from %s up: the plan claims that much)", bytesString(floor64(v.grownTo(most))))
		}
		why.add("no executor count up to spec.spark.executors.max (%d) keeps each executor's writes to %s "+
			"under %d%% of the %s a volume of StorageTier %q sustains %s: %d executors would each write %s to it, "+
			"and %s are needed. Raise spec.spark.executors.max or put %s on a tier with more write bandwidth",
			sp.Executors.Max, v.what(), w.target, rateString(most), v.tier.Name, how,
			count, rateString(mul(write, ratInt(int64(len(v.roles))))), countString(d.need[i]), v.tierField())
	}
}

// what names the volume by the spec's fields.
func (v executorVolume) what() string {
	if len(v.roles) == 2 {
		return "the volume spill and shuffle data share (spec.spark.shuffle.spillTier, " +
			"spec.spark.shuffle.spillSize and spec.spark.shuffle.dataSize)"
	}
	if v.roles[0] == spillPlacement {
		return "the spill volume (spec.spark.shuffle.spillTier, spec.spark.shuffle.spillSize)"
	}
	return "the shuffle data volume (spec.spark.shuffle.dataTier, spec.spark.shuffle.dataSize)"
}

// tierField is the field that moves the volume to another tier.
func (v executorVolume) tierField() string {
	if len(v.roles) == 1 && v.roles[0] == dataPlacement {
		return "spec.spark.shuffle.dataTier"
	}
	return "spec.spark.shuffle.spillTier"
}

// size grows the executors' claims where size buys bandwidth, so that each volume sustains the
// executor's writes at the planned rate (write per role) within the target, and what it writes
// at its processing rate (atCapacity per role), or as much as a volume can. It records each
// role's share of what its volume sustains and returns the smallest share.
func (d shuffleDisks) size(ps []placement, write, atCapacity *big.Rat, target int32) *big.Rat {
	var least *big.Rat
	for _, v := range d.vols {
		size := v.size
		need := v.needs(write, target)
		if c := mul(atCapacity, ratInt(int64(len(v.roles)))); c.Cmp(need) > 0 {
			need = c
		}
		if v.scales() && bandwidthOf(v.tier, size, true).Cmp(need) < 0 {
			size = v.grownTo(minRat(need, v.most()))
			// The last role (the shuffle data, when the two share a volume) takes the growth:
			// final shuffle files are the larger share (docs/studies.md §1.3). Whole bytes, up.
			last := &ps[v.roles[len(v.roles)-1]]
			grown := new(big.Rat).Add(ratOf(claimSize(v.tier, last.size)), new(big.Rat).Sub(size, v.size))
			last.size = *resource.NewQuantity(ceilInt(grown).Int64(), resource.BinarySI)
		}
		share := quo(bandwidthOf(v.tier, size, true), ratInt(int64(len(v.roles))))
		for _, r := range v.roles {
			ps[r].sustained = share
		}
		if least == nil || share.Cmp(least) < 0 {
			least = share
		}
	}
	return least
}

// grownTo is the size a volume whose bandwidth scales with size is claimed at to sustain rate:
// the smallest whole number of GiB that does, at most maxPlannedVolume, and never less than the
// spec's size.
func (v executorVolume) grownTo(rate *big.Rat) *big.Rat {
	per := ratOf(v.tier.Spec.ThroughputPerTiB.WriteBytesPerSecond)
	gibs := ceilInt(quo(mul(rate, ratInt(tebibyte/gib)), per))
	size := minRat(mul(new(big.Rat).SetInt(gibs), ratInt(gib)), ratOf(maxPlannedVolume))
	if size.Cmp(v.size) < 0 {
		return v.size
	}
	return size
}

// executorWriteAtCapacity is what one executor writes to each shuffle volume when it processes
// perExecutor records of ingest per second (it reads C/I bytes of the topic per ingested byte),
// at most what its link carries: it writes what it reads, and it reads over its own link. The
// cap keeps a rate given as "more than enough" (the e2e suite's 1,000,000 per executor) from
// claiming volumes for bandwidth no executor could use.
func executorWriteAtCapacity(w workload, link linkRates, perExecutor int64) *big.Rat {
	return minRat(quo(mul(ratInt(perExecutor), ratInt(w.messageBytes), w.consume), w.ingest), link.usable)
}
