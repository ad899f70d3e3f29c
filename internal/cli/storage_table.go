package cli

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
)

// The STORAGE section: where each role's data lives, at what cost, how fast its volumes write,
// how long the data is kept, and why a claim is larger than the spec asks.

func writeStorage(t *tableWriter, s v1alpha1.AnalyticsPipelineSpec, tiers []v1alpha1.StorageTier, pl v1alpha1.Plan) {
	medium := map[string]string{}
	for _, tr := range tiers {
		medium[tr.Name] = string(tr.Spec.Medium)
	}
	t.printf("\nSTORAGE: monthly cost per role\n")
	rows := []string{"ROLE\tTIER\tMEDIUM\tCLASS\tCLAIM\tVOLUME\tREPLICAS\tTOTAL SIZE\tWRITE/REPLICA\tSUSTAINED\tKEPT (h)\tMONTHLY"}
	for _, r := range pl.Storage {
		vol := r.SizePerReplica.DeepCopy()
		if r.VolumeSize != nil {
			vol = r.VolumeSize.DeepCopy()
		}
		volString := vol.String()
		totalString := "-"
		if vol.Mul(int64(r.Replicas)) {
			totalString = vol.String()
		}
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%.1f\t%s",
			r.Role, r.Tier, medium[r.Tier], r.StorageClassName, r.SizePerReplica.String(), volString, r.Replicas,
			totalString, rate(r.WriteBytesPerSecond), sustained(r), float64(r.RetentionSeconds)/3600, r.MonthlyCost))
	}
	rows = append(rows, fmt.Sprintf("Total\t\t\t\t\t\t\t\t\t\t\t%s", pl.MonthlyStorageCost))
	t.columns(rows...)
	writeSizedForBandwidth(t, s, tiers, pl)
	writeRetention(t, pl)

	total, ok1 := new(big.Rat).SetString(pl.MonthlyStorageCost)
	single, ok2 := new(big.Rat).SetString(pl.SingleTierMonthlyStorageCost)
	if !ok1 || !ok2 {
		return
	}
	saving := new(big.Rat).Sub(single, total)
	t.printf("Everything on the fastest tier would cost %s a month", pl.SingleTierMonthlyStorageCost)
	switch saving.Sign() {
	case 1:
		share, _ := new(big.Rat).Quo(saving, single).Float64()
		t.printf("; this placement saves %s (%.1f%%).\n", saving.FloatString(2), share*100)
	case 0:
		t.printf(": the same as this placement.\n")
	default:
		t.printf(".\n")
	}
}

// writeRetention prints the retention settings, the local volume counts and why the data does
// not fit, if it does not.
func writeRetention(t *tableWriter, pl v1alpha1.Plan) {
	r := pl.Retention
	t.printf("Kafka topic: retention.bytes %d per partition, segment.bytes %d", r.KafkaRetentionBytes, r.KafkaSegmentBytes)
	if r.KafkaRetentionMs > 0 {
		t.printf(", retention.ms %d", r.KafkaRetentionMs)
	}
	t.printf(".\nElasticsearch: %d replica(s); indices roll over at %d bytes per primary shard or %.1f h, deleted %.1f h after rollover.\n",
		r.ElasticsearchReplicas, r.ElasticsearchRolloverBytes, float64(r.ElasticsearchRolloverSeconds)/3600,
		float64(r.ElasticsearchDeleteAfterSeconds)/3600)
	for _, m := range pl.MetadataVolumes {
		class := "the cluster's default StorageClass"
		if m.StorageClassName != "" {
			class = "StorageClass " + m.StorageClassName + " (tier " + m.Tier + ")"
		}
		t.printf("%s volumes: %d x %s on %s.\n", m.Role, m.Replicas, m.Size.String(), class)
	}
	for _, l := range pl.LocalVolumes {
		if l.Available == nil {
			t.printf("Local tier %s: %d claims, each a whole volume; could not check them against the tier's volumes (the tier file has no status).\n", l.Tier, l.Claims)
			continue
		}
		t.printf("Local tier %s: %d claims, each a whole volume, of %d volumes.\n", l.Tier, l.Claims, *l.Available)
	}
	if pl.StorageUnsatisfied != "" {
		t.printf("The data does not fit:\n")
		for _, reason := range strings.Split(pl.StorageUnsatisfied, plan.ReasonSeparator) {
			t.wrapped("  ", "- ", reason)
		}
	}
}

// sustained prints what one volume of a role sustains; a plan from before the figure existed
// has none.
func sustained(r v1alpha1.StoragePlacement) string {
	if r.SustainedWriteBytesPerSecond <= 0 {
		return "-"
	}
	return rate(r.SustainedWriteBytesPerSecond)
}

// writeSizedForBandwidth says why an executor's claim is larger than the spec asks (and than
// its tier's minVolumeSize): on a tier whose bandwidth grows with size, the plan claims the
// smallest volume that sustains what the executor writes at its processing rate and, within the
// target, at the planned rate (internal/plan, shuffledisk.go).
func writeSizedForBandwidth(t *tableWriter, s v1alpha1.AnalyticsPipelineSpec, tiers []v1alpha1.StorageTier, pl v1alpha1.Plan) {
	sh := s.Spark.Shuffle
	target := int64(s.Network.TargetUtilizationPercent)
	for _, r := range pl.Storage {
		spec, field := sh.SpillSize, "spec.spark.shuffle.spillSize"
		switch r.Role {
		case v1alpha1.RoleSparkSpill:
		case v1alpha1.RoleSparkShuffleData:
			if sh.DataSize == nil {
				continue
			}
			spec, field = *sh.DataSize, "spec.spark.shuffle.dataSize"
		default:
			continue
		}
		tier := findTier(tiers, r.Tier)
		if tier == nil || tier.Spec.ThroughputPerTiB == nil || r.SizePerReplica.Cmp(spec) <= 0 ||
			(tier.Spec.MinVolumeSize != nil && r.SizePerReplica.Cmp(*tier.Spec.MinVolumeSize) <= 0) {
			continue
		}
		// What an executor writes at its processing rate: it reads C/I bytes per ingested byte,
		// at most what its link carries.
		atCapacity := min(int64(float64(s.Spark.MessagesPerSecondPerExecutor)*float64(s.Workload.MessageBytes)*
			float64(s.Workload.ConsumerMessagesPerSecond)/float64(s.Workload.MessagesPerSecond)), pl.LinkUsableBytesPerSecond)
		this, twice := "This", ""
		if sh.DataTier == sh.SpillTier || sh.DataTier == "" {
			this, twice = "With the spill claim on the same volume, this", "twice "
		}
		head := fmt.Sprintf("%s claims %s, not the %s of %s: a volume of %s sustains %s per TiB of its size, up to %s. ",
			r.Role, r.SizePerReplica.String(), spec.String(), field, r.Tier,
			rate(tier.Spec.ThroughputPerTiB.WriteBytesPerSecond.Value()), rate(tier.Spec.WriteBytesPerSecond.Value()))
		planned := fmt.Sprintf("%sthe %s an executor writes at the planned rate within %d%%", twice, rate(r.WriteBytesPerSecond), target)
		processing := fmt.Sprintf("%sthe %s it writes at its processing rate (spec.spark.messagesPerSecondPerExecutor %d)",
			twice, rate(atCapacity), s.Spark.MessagesPerSecondPerExecutor)
		if atCapacity == pl.LinkUsableBytesPerSecond {
			processing = fmt.Sprintf("%sthe %s it writes at its processing rate, all its link carries", twice, rate(atCapacity))
		}
		var why string
		switch {
		case r.WriteBytesPerSecond*100 > r.SustainedWriteBytesPerSecond*target:
			why = fmt.Sprintf("%s reaches that ceiling, and cannot keep %s: see Why above.", this, planned)
		case atCapacity > r.SustainedWriteBytesPerSecond+1:
			why = fmt.Sprintf("%s reaches that ceiling: it keeps %s, but not %s.", this, planned, processing)
		default:
			why = fmt.Sprintf("%s is the smallest that keeps %s and sustains %s: the volume keeps up with its "+
				"executor, also when the autoscaler adds executors.", this, planned, processing)
		}
		t.wrapped("", "", head+why)
	}
}

func findTier(tiers []v1alpha1.StorageTier, name string) *v1alpha1.StorageTier {
	for i := range tiers {
		if tiers[i].Name == name {
			return &tiers[i]
		}
	}
	return nil
}
