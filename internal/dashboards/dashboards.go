package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/internal/alerts"
)

// Builders lists every dashboard by its file name (without .json), which is also its uid.
func Builders() map[string]*dashboard.DashboardBuilder {
	return map[string]*dashboard.DashboardBuilder{
		"strata-pipeline": Pipeline(),
		"strata-operator": Operator(),
	}
}

// All builds every dashboard and returns its JSON, indented, by file name.
func All() (map[string][]byte, error) {
	out := map[string][]byte{}
	for name, b := range Builders() {
		d, err := b.Build()
		if err != nil {
			return nil, fmt.Errorf("dashboard %s: %w", name, err)
		}
		j, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("dashboard %s: %w", name, err)
		}
		out[name] = append(j, '\n')
	}
	return out, nil
}

// ds is the dashboard's Prometheus data source, chosen with the datasource variable.
var ds = common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}

// scope restricts the operator's series to the chosen pipeline.
const scope = alerts.Scope(`namespace="$namespace", pipeline="$pipeline"`)

// q is one PromQL target with its legend.
func q(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Expr(expr).LegendFormat(legend).Datasource(ds)
}

func series(title, description, unit string, targets ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().Title(title).Description(description).Unit(unit).Datasource(ds).
		Height(8).Span(12).FillOpacity(10).LineWidth(1).
		Legend(common.NewVizLegendOptionsBuilder().ShowLegend(true).DisplayMode(common.LegendDisplayModeTable).
			Placement(common.LegendPlacementBottom).Calcs([]string{"lastNotNull", "max"}))
	for _, t := range targets {
		p.WithTarget(t)
	}
	return p
}

func single(title, description, unit string, target *prometheus.DataqueryBuilder, mode common.BigValueTextMode) *stat.PanelBuilder {
	return stat.NewPanelBuilder().Title(title).Description(description).Unit(unit).Datasource(ds).
		Height(4).Span(4).TextMode(mode).ColorMode(common.BigValueColorModeNone).GraphMode(common.BigValueGraphModeNone).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}).Values(false)).
		WithTarget(target.Instant())
}

func variables(b *dashboard.DashboardBuilder, pipeline bool) *dashboard.DashboardBuilder {
	b.WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").Type("prometheus"))
	b.WithVariable(dashboard.NewQueryVariableBuilder("namespace").Label("Namespace").Datasource(ds).
		Query(dashboard.StringOrMap{String: cog.ToPtr("label_values(strata_pipeline_info, namespace)")}).
		Definition("label_values(strata_pipeline_info, namespace)").
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).Sort(dashboard.VariableSortAlphabeticalAsc))
	if pipeline {
		b.WithVariable(dashboard.NewQueryVariableBuilder("pipeline").Label("Pipeline").Datasource(ds).
			Query(dashboard.StringOrMap{String: cog.ToPtr(`label_values(strata_pipeline_info{namespace="$namespace"}, pipeline)`)}).
			Definition(`label_values(strata_pipeline_info{namespace="$namespace"}, pipeline)`).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).Sort(dashboard.VariableSortAlphabeticalAsc))
	}
	return b
}

func base(uid, title, description string) *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder(title).Uid(uid).Description(description).
		Tags([]string{"strata"}).Refresh("30s").Time("now-3h", "now").Timezone(common.TimeZoneBrowser).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).Readonly()
}

// Pipeline is the dashboard of one pipeline.
func Pipeline() *dashboard.DashboardBuilder {
	s := scope
	b := base("strata-pipeline", "Strata / Pipeline",
		"One Strata pipeline: each stage's capacity against the workload, the bottleneck, Kafka's links and lag, "+
			"Spark's page cache, disk reads and spill, Elasticsearch indexing, storage and its monthly cost.")
	variables(b, true)

	b.WithRow(dashboard.NewRowBuilder("Plan"))
	b.WithPanel(single("Bottleneck", "The stage the plan names as the bottleneck; None when every stage carries the workload within the target utilization.",
		"", q(s.M("strata_pipeline_bottleneck_info"), "{{stage}}"), common.BigValueTextModeName))
	b.WithPanel(single("Workload", "spec.workload.messagesPerSecond: the ingest the pipeline must carry.",
		"msg/s", q(s.M("strata_pipeline_workload_messages_per_second"), "workload"), common.BigValueTextModeValue))
	b.WithPanel(single("Capacity", "What the pipeline carries: its smallest stage capacity.",
		"msg/s", q(s.M("strata_pipeline_max_messages_per_second"), "capacity"), common.BigValueTextModeValue))
	b.WithPanel(single("Monthly storage cost", "What the planned storage costs a month, in the tiers' currency.",
		"none", q(fmt.Sprintf("sum(%s)", s.M("strata_pipeline_storage_monthly_cost")), "cost"), common.BigValueTextModeValue).Decimals(2))
	b.WithPanel(single("Saving vs. one tier", "What the placement saves a month against every role on the fastest tier.",
		"none", q(fmt.Sprintf("%s - on (namespace, pipeline) sum by (namespace, pipeline) (%s)",
			s.M("strata_pipeline_storage_single_tier_monthly_cost"), s.M("strata_pipeline_storage_monthly_cost")), "saving"), common.BigValueTextModeValue).Decimals(2))
	b.WithPanel(single("Ready", "The pipeline's Ready condition and its reason.",
		"", q(s.M("strata_pipeline_condition", `type="Ready"`), "{{reason}}"), common.BigValueTextModeName))

	b.WithRow(dashboard.NewRowBuilder("Throughput"))
	b.WithPanel(series("Stage capacity against workload",
		"Each stage's planned capacity at 100% of its usable resources, the workload, and what producers append and the job consumes.",
		"msg/s",
		q(s.M("strata_pipeline_stage_capacity_messages_per_second"), "{{stage}} capacity"),
		q(s.M("strata_pipeline_workload_messages_per_second"), "workload"),
		q(s.IngestRate(), "ingest (topic {{topic}})"),
		q(s.ProcessingRate(), "consumed by {{consumergroup}}")).Span(24))

	b.WithRow(dashboard.NewRowBuilder("Kafka"))
	b.WithPanel(series("Link utilization per broker",
		"Each broker's busier direction (cAdvisor's pod network counters) over the usable link rate; the line is the target utilization.",
		"percentunit",
		q(s.BrokerLinkUtilization(), "{{pod}}"),
		q(s.M("strata_pipeline_target_utilization_ratio"), "target")))
	b.WithPanel(series("Broker traffic (Kafka's counters)",
		"Client and replication bytes each broker takes in and sends, as Kafka counts them, against what the plan expects of one broker.",
		"Bps",
		q(s.KafkaBrokerJMXBytes("kafka_server_brokertopicmetrics_bytesin_total"), "{{pod}} in"),
		q(s.KafkaBrokerJMXBytes("kafka_server_brokertopicmetrics_replicationbytesin_total"), "{{pod}} replication in"),
		q(s.KafkaBrokerJMXBytes("kafka_server_brokertopicmetrics_bytesout_total"), "{{pod}} out"),
		q(s.KafkaBrokerJMXBytes("kafka_server_brokertopicmetrics_replicationbytesout_total"), "{{pod}} replication out"),
		q(s.M("strata_pipeline_broker_planned_bytes_per_second"), "planned {{direction}}")))
	b.WithPanel(series("Consumer lag", "Records each consumer group is behind on the pipeline's topic (Kafka exporter).",
		"short", q(s.ConsumerLag(), "{{consumergroup}}")))
	b.WithPanel(series("Consumer lag in seconds of ingest", "The lag over the workload: how long the job would need to catch up at the ingest rate.",
		"s", q(fmt.Sprintf("%s / on (namespace, pipeline) group_left () %s", s.ConsumerLag(), s.M("strata_pipeline_workload_messages_per_second")), "{{consumergroup}}")))

	b.WithRow(dashboard.NewRowBuilder("Spark executors"))
	b.WithPanel(series("Page cache per executor", "Each executor pod's page cache (cAdvisor) against the planned page-cache reserve.",
		"bytes",
		q(s.ExecutorGauge("container_memory_cache"), "{{pod}}"),
		q(s.M("strata_pipeline_executor_memory_bytes", `part="pageCache"`), "planned reserve")))
	b.WithPanel(series("Disk reads per executor", "Bytes each executor pod reads from disk: shuffle and spill files the page cache did not hold.",
		"Bps", q(s.ExecutorRate("container_fs_reads_bytes_total"), "{{pod}}")))
	b.WithPanel(series("File refaults per executor", "File pages per second read again soon after the kernel evicted them (cgroup v2): a page cache too small.",
		"short", q(s.ExecutorRate("container_memory_workingset_refault_file_total"), "{{pod}}")))
	b.WithPanel(series("Spill", "Spill and temporary files (estimated: executors' disk writes beyond their shuffle writes) against shuffle writes.",
		"Bps",
		q(s.SpillRate(), "spill (estimated)"),
		q(s.SparkShuffleWriteRate(), "shuffle writes")))

	b.WithRow(dashboard.NewRowBuilder("Elasticsearch"))
	b.WithPanel(series("Indexing rate against capacity", "Documents indexed per second over every shard copy, against the planned indexing capacity.",
		"short",
		q(s.ElasticsearchIndexingRate(), "indexed"),
		q(s.M("strata_pipeline_stage_capacity_messages_per_second", `stage="ElasticsearchIndexing"`), "planned capacity")))
	b.WithPanel(series("Write rejections and queue", "Write requests rejected per second, and the longest write queue among the nodes.",
		"short",
		q(s.ElasticsearchWriteRejections(), "rejected/s"),
		q(s.ElasticsearchWriteQueue(), "queued")))

	b.WithRow(dashboard.NewRowBuilder("Storage and cost"))
	b.WithPanel(series("Storage per tier", "Planned storage on each tier, all roles together.",
		"bytes", q(fmt.Sprintf("sum by (tier) (%s)", s.M("strata_pipeline_storage_bytes")), "{{tier}}")))
	b.WithPanel(series("Monthly cost per role and tier", "Monthly cost of each role's storage on its tier, in the tiers' currency.",
		"none", q(s.M("strata_pipeline_storage_monthly_cost"), "{{role}} on {{tier}}")).Decimals(2))
	b.WithPanel(series("Tier volumes used", "Share of the capacity of each tier's volumes (every claim of its StorageClass) that holds data.",
		"percentunit", q(s.TierUsedRatio(), "{{tier}}")).Max(1))

	b.WithRow(dashboard.NewRowBuilder("Autoscaling"))
	b.WithPanel(series("Replicas and bounds", "Planned replicas of each scaled resource with the spec's maximum.",
		"short",
		q(s.M("strata_pipeline_replicas"), "{{resource}}"),
		q(s.M("strata_pipeline_replicas_max"), "{{resource}} max")))
	b.WithPanel(series("Autoscaler decisions", "The autoscaler's decisions per hour, by resource, action and reason.",
		"short", q(fmt.Sprintf("sum by (resource, action, reason) (increase(%s[1h]))", s.M("strata_autoscaler_decisions_total")),
			"{{resource}} {{action}} ({{reason}})")))
	return b
}

// controllers selects Strata's two controllers among every controller-runtime operator's series.
const controllers = `controller=~"analyticspipeline|storagetier"`

// Operator is the dashboard of the operator itself.
func Operator() *dashboard.DashboardBuilder {
	b := base("strata-operator", "Strata / Operator",
		"The Strata operator: reconcile rate, errors and latency, work-queue depth, and the autoscaler's decisions.")
	variables(b, true)
	b.WithRow(dashboard.NewRowBuilder("Reconciles"))
	b.WithPanel(series("Reconciles per second", "Reconciles by controller and result.", "ops",
		q(fmt.Sprintf("sum by (controller, result) (rate(controller_runtime_reconcile_total{%s}[%s]))", controllers, alerts.Window), "{{controller}} {{result}}")))
	b.WithPanel(series("Reconcile errors per second", "Reconciles that returned an error, by controller.", "ops",
		q(fmt.Sprintf("sum by (controller) (rate(controller_runtime_reconcile_errors_total{%s}[%s]))", controllers, alerts.Window), "{{controller}}")))
	for _, quantile := range []string{"0.5", "0.99"} {
		b.WithPanel(series("Reconcile latency p"+quantile[2:], "How long a reconcile takes, by controller.", "s",
			q(fmt.Sprintf("histogram_quantile(%s, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket{%s}[%s])))",
				quantile, controllers, alerts.Window), "{{controller}}")))
	}
	b.WithPanel(series("Work-queue depth", "Objects waiting to be reconciled, by controller.", "short",
		q(`sum by (name) (workqueue_depth{name=~"analyticspipeline|storagetier"})`, "{{name}}")))
	b.WithPanel(series("Time in the work queue p99", "How long an object waits before its reconcile starts.", "s",
		q(fmt.Sprintf(`histogram_quantile(0.99, sum by (name, le) (rate(workqueue_queue_duration_seconds_bucket{name=~"analyticspipeline|storagetier"}[%s])))`,
			alerts.Window), "{{name}}")))
	b.WithRow(dashboard.NewRowBuilder("Autoscaler"))
	b.WithPanel(series("Autoscaler decisions by action and reason", "Decisions per hour over the chosen namespace's pipelines.", "short",
		q(`sum by (action, reason) (increase(strata_autoscaler_decisions_total{namespace="$namespace", pipeline=~"$pipeline"}[1h]))`,
			"{{action}} ({{reason}})")).Span(24))
	b.WithPanel(series("Pipelines not Ready", "Pipelines whose Ready condition is not True, by reason.", "short",
		q(`count by (reason) (strata_pipeline_condition{type="Ready"} == 0)`, "{{reason}}")))
	b.WithPanel(series("Pipelines by bottleneck", "How many pipelines each stage limits.", "short",
		q(`count by (stage) (strata_pipeline_bottleneck_info)`, "{{stage}}")))
	return b
}

// ConfigMaps renders every dashboard as a ConfigMap labelled grafana_dashboard: "1", which
// Grafana's dashboard sidecar (kube-prometheus-stack's) loads from any namespace it watches:
// what the chart's dashboards.enabled creates, for installations without the chart.
func ConfigMaps() ([]byte, error) {
	boards, err := All()
	if err != nil {
		return nil, err
	}
	names := slices.Sorted(maps.Keys(boards))
	var out bytes.Buffer
	out.WriteString("# Generated by `make observability` (hack/gen-observability) from internal/dashboards: do not edit.\n" +
		"# kubectl apply -n <the namespace Grafana's sidecar watches> -f config/grafana/dashboard-configmaps.yaml\n")
	for _, n := range names {
		cm := map[string]any{
			"apiVersion": "v1",
			"kind":       "ConfigMap",
			"metadata": map[string]any{
				"name":   n + "-dashboard",
				"labels": map[string]string{"grafana_dashboard": "1", "app.kubernetes.io/name": "strata"},
			},
			"data": map[string]string{n + ".json": string(boards[n])},
		}
		y, err := yaml.Marshal(cm)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(y)
	}
	return out.Bytes(), nil
}
