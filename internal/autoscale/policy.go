package autoscale

import (
	"time"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
)

// The spec's defaults, for pipelines that were not defaulted by the API server (`strata
// simulate` reads files; tests build specs).
const (
	// DefaultCooldown is spec.autoscaling.cooldownSeconds when unset.
	DefaultCooldown = 120 * time.Second
	// DefaultScaleDownDelay is spec.autoscaling.scaleDownDelayAfterScaleUpSeconds when unset.
	DefaultScaleDownDelay = 30 * time.Minute
	// DefaultBrokerStabilization is spec.autoscaling.brokerScaleDownStabilizationSeconds when
	// unset: the reversal window (reversal.go).
	DefaultBrokerStabilization = ReversalWindow
	// DefaultCatchUp is spec.autoscaling.catchUpSeconds when unset.
	DefaultCatchUp = 600 * time.Second
	// DefaultSaturatedScaleUpPercent is spec.autoscaling.saturatedScaleUpPercent when unset.
	DefaultSaturatedScaleUpPercent = 200
)

// NewPolicy is what Recommend decides with for a pipeline: the bandwidth model's link, the
// bounds (the floor is base, the plan of what the declared workload needs: see Base), the
// windows and cool-downs of the spec, and what the upstream operators report — whether brokers
// may leave now (StrimziSafety) and whether the Spark job runs. The operator and `strata
// simulate` build it the same way, so a simulation decides as the operator would.
func NewPolicy(p *v1alpha1.AnalyticsPipeline, base v1alpha1.Plan, safety BrokerSafety, sparkRunning bool) Policy {
	spec := p.Spec.Autoscaling
	d := plan.Defaults(p)
	cooldown := DefaultCooldown
	var stabilization time.Duration
	catchUp, saturated, delay := DefaultCatchUp, int32(DefaultSaturatedScaleUpPercent), DefaultScaleDownDelay
	brokerStabilization := DefaultBrokerStabilization
	if spec != nil {
		if spec.BrokerScaleDownStabilizationSeconds != nil {
			brokerStabilization = time.Duration(*spec.BrokerScaleDownStabilizationSeconds) * time.Second
		}
		if spec.ScaleDownDelayAfterScaleUpSeconds != nil {
			delay = time.Duration(*spec.ScaleDownDelayAfterScaleUpSeconds) * time.Second
		}
		if spec.CatchUpSeconds > 0 {
			catchUp = time.Duration(spec.CatchUpSeconds) * time.Second
		}
		if spec.SaturatedScaleUpPercent > 100 {
			saturated = spec.SaturatedScaleUpPercent
		}
		if spec.CooldownSeconds != nil {
			cooldown = time.Duration(*spec.CooldownSeconds) * time.Second
		}
		stabilization = time.Duration(spec.ScaleDownStabilizationSeconds) * time.Second
	}
	return Policy{
		Interval:                 Interval(spec),
		Range:                    intakeRange(spec),
		Stabilization:            stabilization,
		BrokerStabilization:      brokerStabilization,
		Cooldown:                 cooldown,
		ScaleDownDelay:           delay,
		CatchUp:                  catchUp,
		SaturatedFactor:          float64(saturated) / 100,
		LinkUsableBytesPerSecond: base.LinkUsableBytesPerSecond,
		TargetUtilizationPercent: d.Spec.Network.TargetUtilizationPercent,
		Brokers:                  Bounds{Floor: base.Brokers, Max: p.Spec.Kafka.Brokers.Max},
		Executors:                Bounds{Floor: base.Executors, Max: p.Spec.Spark.Executors.Max},
		DataNodes:                Bounds{Floor: base.ElasticsearchDataNodes, Max: p.Spec.Elasticsearch.DataNodes.Max},
		SpecPerExecutor:          p.Spec.Spark.MessagesPerSecondPerExecutor,
		PerDataNode:              plan.IndexingPerDataNode(&d.Spec),
		IndexCopies:              plan.IndexCopies(d.Spec.Elasticsearch),
		Memory:                   d.Spec.Spark.Memory,
		Safety:                   safety,
		SparkRunning:             sparkRunning,
	}
}

// NewState is what runs now: the applied plan's counts, and the memory split and processing
// rate it was planned with (the spec's, or the autoscaler's where st has them).
func NewState(p *v1alpha1.AnalyticsPipeline, applied v1alpha1.Plan, st *v1alpha1.AutoscalingStatus) State {
	eff := Base(p, st).Spec.Spark
	return State{
		Brokers:          applied.Brokers,
		Executors:        applied.Executors,
		DataNodes:        applied.ElasticsearchDataNodes,
		Placement:        plan.PartitionPlacement{Partitions: applied.Partitions, ReplicationFactor: applied.ReplicationFactor},
		PageCachePercent: eff.Memory.PageCachePercent,
		OffHeapPercent:   eff.Memory.OffHeapPercent,
		PerExecutor:      eff.MessagesPerSecondPerExecutor,
		Status:           st,
	}
}

// intakeRange is the range the default queries read the ingest and the brokers' received bytes
// over: $range, four times the longer of the reading and scrape intervals (prometheus.Range,
// which imports this package; a test there holds the two equal). 0 when any of those queries is
// overridden: an override's range is not known.
func intakeRange(spec *v1alpha1.AutoscalingSpec) time.Duration {
	if spec != nil && spec.Queries != nil {
		q := spec.Queries
		if q.IngestRate != "" || q.BrokerReceiveBytes != "" || q.KafkaBytesIn != "" {
			return 0
		}
	}
	return 4 * max(Interval(spec), ScrapeInterval(spec))
}
