package alerts

import (
	"fmt"
	"time"
)

// RunbookBase is where the runbooks live; runbook_url is RunbookBase + Name + ".md".
const RunbookBase = "https://github.com/strata-dev/strata/blob/main/docs/runbooks/"

// Placeholders the Helm chart replaces when it renders files/prometheus-rules.yaml: the metrics
// Service's name (the job label Prometheus Operator gives the operator's series) and the
// release's namespace. The config/ files carry DefaultJob and DefaultNamespace in their place.
const (
	JobPlaceholder       = "__STRATA_JOB__"
	NamespacePlaceholder = "__STRATA_NAMESPACE__"
	DefaultJob           = "strata-metrics"
	DefaultNamespace     = "strata-system"
)

// Alert is one alerting rule.
type Alert struct {
	Name     string
	Severity string
	Expr     string
	For      time.Duration
	Summary  string
	// Description may use Prometheus' templates: {{ $labels.x }}, {{ $value }}.
	Description string
}

// RunbookURL is the alert's runbook.
func (a Alert) RunbookURL() string { return RunbookBase + a.Name + ".md" }

// Group is a rule group: evaluated together at the Prometheus' evaluation interval.
type Group struct {
	Name   string
	Alerts []Alert
}

// Thresholds the alerts use; each is explained in its alert's runbook.
const (
	// lagSeconds: a consumer group is this many seconds of ingest behind.
	lagSeconds = 60
	// processingShare: the job consumes less than this share of what producers append.
	processingShare = 0.9
	// pageCacheShare: an executor's page cache is below this share of its planned reserve.
	pageCacheShare = 0.5
	// refaultPages: file pages refaulted per second (4 KiB each: 1 MiB/s), the sign of a page
	// cache too small for the files read again.
	refaultPages = 256
	// diskReadBytes: an executor reads this many bytes per second from disk.
	diskReadBytes = 10 << 20
	// spillBytesPerExecutor: an executor writes this many bytes per second of spill.
	spillBytesPerExecutor = 20 << 20
	// esWriteQueue: write requests waiting on one Elasticsearch node.
	esWriteQueue = 100
	// tierWarning, tierCritical: share of a tier's volume capacity holding data.
	tierWarning  = 0.85
	tierCritical = 0.95
	// reconcileErrorShare: share of reconciles that fail.
	reconcileErrorShare = 0.1
)

// Groups returns every rule group, in a stable order.
func Groups() []Group {
	return []Group{
		{Name: "strata-pipelines", Alerts: pipelineAlerts()},
		{Name: "strata-storage", Alerts: storageAlerts()},
		{Name: "strata-operator", Alerts: operatorAlerts()},
	}
}

// PipelineAlerts returns the alerts about a pipeline's own components (every series they fire
// with carries namespace and pipeline).
func PipelineAlerts() []Alert { return pipelineAlerts() }

// All returns every alert of every group.
func All() []Alert {
	var out []Alert
	for _, g := range Groups() {
		out = append(out, g.Alerts...)
	}
	return out
}

const pipelineRef = "{{ $labels.namespace }}/{{ $labels.pipeline }}"

func pipelineAlerts() []Alert {
	var s Scope // every pipeline
	return []Alert{
		{
			Name:     "StrataPipelineBottleneck",
			Severity: "warning",
			Expr: `strata_pipeline_stage_capacity_messages_per_second * on (namespace, pipeline, stage) group_left () ` +
				`(strata_pipeline_bottleneck_info{stage!="None"} == 1)`,
			For:     10 * time.Minute,
			Summary: "A stage of the pipeline cannot carry its workload within the target utilization.",
			Description: "Pipeline " + pipelineRef + ": {{ $labels.stage }} is the bottleneck; it carries at most " +
				"{{ $value | humanize }} messages/s at full use, too little for the workload within the target utilization.",
		},
		{
			Name:     "StrataKafkaBrokerLinkSaturated",
			Severity: "warning",
			Expr: fmt.Sprintf(`(%s) > on (namespace, pipeline) group_left () strata_pipeline_target_utilization_ratio`,
				s.BrokerLinkUtilization()),
			For:     15 * time.Minute,
			Summary: "A Kafka broker's network link is above the target utilization.",
			Description: "Broker {{ $labels.pod }} of pipeline " + pipelineRef + " uses {{ $value | humanizePercentage }} " +
				"of its usable link, above the pipeline's target utilization: replication and consumers fall behind.",
		},
		{
			Name:     "StrataKafkaUnderReplicatedPartitions",
			Severity: "warning",
			Expr:     fmt.Sprintf(`(%s) > 0`, s.BrokerGauge("kafka_server_replicamanager_underreplicatedpartitions")),
			// A rolling restart leaves partitions under-replicated for the minutes a broker takes
			// to catch up (Strimzi rolls one broker at a time and waits for it); longer is a
			// broker down or a link too slow for replication.
			For:     10 * time.Minute,
			Summary: "Partitions of the pipeline's Kafka have fewer in-sync replicas than replicas.",
			Description: "Pipeline " + pipelineRef + " has {{ $value }} under-replicated partitions: a broker is down or " +
				"its followers cannot keep up. One more broker failure can make them unavailable or lose acknowledged records.",
		},
		{
			Name:     "StrataConsumerLagGrowing",
			Severity: "warning",
			Expr: fmt.Sprintf(`((%s) / on (namespace, pipeline) group_left () strata_pipeline_workload_messages_per_second > %d) `+
				`and on (namespace, pipeline, consumergroup, topic) ((%s) > 0)`,
				s.ConsumerLag(), lagSeconds, s.ConsumerLagDelta("15m")),
			For:     15 * time.Minute,
			Summary: "A consumer group of the pipeline's topic falls further behind.",
			Description: "Consumer group {{ $labels.consumergroup }} of pipeline " + pipelineRef + " is " +
				"{{ $value | humanizeDuration }} of ingest behind on topic {{ $labels.topic }}, and the lag has grown for 15 minutes.",
		},
		{
			Name:     "StrataSparkProcessingBelowIngest",
			Severity: "warning",
			Expr: fmt.Sprintf(`(%s) / on (namespace, pipeline, topic) group_left () (%s) < %g`,
				s.ProcessingRate(), s.IngestRate(), processingShare),
			For:     15 * time.Minute,
			Summary: "The Spark job consumes less than the producers append.",
			Description: "Consumer group {{ $labels.consumergroup }} of pipeline " + pipelineRef + " consumes " +
				"{{ $value | humanizePercentage }} of what producers append to topic {{ $labels.topic }}.",
		},
		{
			Name:     "StrataElasticsearchIndexingSaturated",
			Severity: "warning",
			Expr: fmt.Sprintf(`(%s) > 0 or (%s) > %d`,
				s.ElasticsearchWriteRejections(), s.ElasticsearchWriteQueue(), esWriteQueue),
			For:     10 * time.Minute,
			Summary: "Elasticsearch rejects or queues the pipeline's writes.",
			Description: "The Elasticsearch cluster of pipeline " + pipelineRef + " is saturated: its write thread pool " +
				"rejects requests or queues more than " + fmt.Sprint(esWriteQueue) + " of them (current value {{ $value | humanize }}).",
		},
		{
			Name:     "StrataExecutorPageCacheStarved",
			Severity: "warning",
			Expr: fmt.Sprintf(`(%s) and on (namespace, pipeline, pod) ((%s) < %g or (%s) > %d) and on (namespace, pipeline, pod) (%s) > %d`,
				s.ExecutorPageCacheRatio(), s.ExecutorPageCacheRatio(), pageCacheShare,
				s.ExecutorRate("container_memory_workingset_refault_file_total"), refaultPages,
				s.ExecutorRate("container_fs_reads_bytes_total"), diskReadBytes),
			For:     15 * time.Minute,
			Summary: "A Spark executor's page cache is too small while it reads heavily from disk.",
			Description: "Executor {{ $labels.pod }} of pipeline " + pipelineRef + " reads more than 10 MiB/s from disk " +
				"while its page cache is starved: it holds {{ $value | humanizePercentage }} of the planned reserve, " +
				"or the kernel refaults more than 256 file pages per second.",
		},
		{
			Name:     "StrataExecutorHeavySpill",
			Severity: "warning",
			Expr: fmt.Sprintf(`((%s) / on (namespace, pipeline) group_left () strata_pipeline_replicas{resource="Executors"} > %d) `+
				`and on (namespace, pipeline) ((%s) > on (namespace, pipeline) (%s))`,
				s.SpillRate(), spillBytesPerExecutor, s.SpillRate(), s.SparkShuffleWriteRate()),
			For:     15 * time.Minute,
			Summary: "The pipeline's Spark executors spill heavily to disk.",
			Description: "The executors of pipeline " + pipelineRef + " write {{ $value | humanize1024 }}B/s each of spill " +
				"and temporary files, more than their shuffle output: execution memory is short.",
		},
		{
			Name:     "StrataAutoscalerAtMaximum",
			Severity: "warning",
			Expr: fmt.Sprintf(`(strata_pipeline_replicas >= on (namespace, pipeline, resource) strata_pipeline_replicas_max) `+
				`and on (namespace, pipeline, resource) (%s) and on (namespace, pipeline) (strata_pipeline_autoscaling_enabled == 1)`,
				s.saturatedResources()),
			For:     15 * time.Minute,
			Summary: "The autoscaler is at its maximum and the pipeline is still saturated.",
			Description: "Pipeline " + pipelineRef + " runs {{ $value }} {{ $labels.resource }}, the spec's maximum, " +
				"and that resource is still saturated: the autoscaler can do no more.",
		},
		{
			Name:     "StrataPipelineMetricsUnavailable",
			Severity: "warning",
			Expr:     fmt.Sprintf(`(%s) and on (namespace, pipeline) (strata_pipeline_condition{type="Ready"} == 1)`, missingSources()),
			For:      15 * time.Minute,
			Summary:  "Prometheus has no metrics of a running pipeline's component.",
			Description: "Pipeline " + pipelineRef + " is Ready but Prometheus has had no {{ $labels.source }} metrics " +
				"for it for 15 minutes: its dashboards, alerts and autoscaler are blind there.",
		},
		{
			Name:     "StrataPipelinePlanInvalid",
			Severity: "warning",
			Expr:     `strata_pipeline_condition{type="PlanValid"} == 0`,
			For:      10 * time.Minute,
			Summary:  "The pipeline's spec cannot be planned, or no plan within its bounds carries the workload.",
			Description: "Pipeline " + pipelineRef + " has PlanValid=False with reason {{ $labels.reason }}: " +
				"see kubectl describe analyticspipeline for the field or the limit.",
		},
	}
}

func storageAlerts() []Alert {
	var s Scope
	tier := func(severity string, share float64, forTime time.Duration) Alert {
		return Alert{
			Name:        "StrataStorageTierNearlyFull",
			Severity:    severity,
			Expr:        fmt.Sprintf(`%s > %g`, s.TierUsedRatio(), share),
			For:         forTime,
			Summary:     "A storage tier's volumes are nearly full.",
			Description: "The volumes of StorageTier {{ $labels.tier }} hold {{ $value | humanizePercentage }} of their capacity.",
		}
	}
	return []Alert{tier("warning", tierWarning, 30*time.Minute), tier("critical", tierCritical, 5*time.Minute)}
}

func operatorAlerts() []Alert {
	job := fmt.Sprintf(`job=%q, namespace=%q`, JobPlaceholder, NamespacePlaceholder)
	return []Alert{
		{
			Name:     "StrataOperatorDown",
			Severity: "critical",
			Expr:     fmt.Sprintf(`absent(up{%s} == 1)`, job),
			For:      5 * time.Minute,
			Summary:  "The Strata operator is down.",
			Description: "No Strata operator in namespace " + NamespacePlaceholder + " has been scraped successfully for " +
				"5 minutes: pipelines and storage tiers are not being reconciled.",
		},
		{
			Name:     "StrataOperatorReconcileErrors",
			Severity: "warning",
			Expr: fmt.Sprintf(`sum by (controller) (rate(controller_runtime_reconcile_errors_total{%s}[%s])) / `+
				`sum by (controller) (rate(controller_runtime_reconcile_total{%s}[%s])) > %g`, job, Window, job, Window, reconcileErrorShare),
			For:     15 * time.Minute,
			Summary: "The Strata operator fails many reconciles.",
			Description: "{{ $value | humanizePercentage }} of the reconciles of controller {{ $labels.controller }} " +
				"fail: see the operator's log and the objects' conditions.",
		},
	}
}
