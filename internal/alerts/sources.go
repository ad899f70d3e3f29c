package alerts

import (
	"fmt"
	"strings"
)

// Source is one upstream component whose series the alerts, dashboards and autoscaler read. Key
// is the label, derived from the series, that strata_pipeline_info carries for the pipeline
// (broker_podset, kafka_cluster, spark_application, elasticsearch_cluster): joining on it and on
// namespace finds a pipeline's series.
type Source struct {
	Name, Key string
	// Series selects the source's series, with Key added.
	Series string
}

// Sources lists the upstream components of a pipeline, one series each that is always there
// while the component is scraped.
func Sources() []Source {
	return []Source{
		{"broker network (cAdvisor)", "broker_podset",
			`label_replace(container_network_transmit_bytes_total{` + brokerPods + `}, "broker_podset", "$1", "pod", "(.+)-[0-9]+")`},
		{"Kafka exporter", "kafka_cluster",
			exporter(`kafka_topic_partition_current_offset`)},
		{"executor (cAdvisor)", "spark_application",
			fmt.Sprintf(`label_replace(container_memory_cache{%s}, "spark_application", "$1", "pod", %q)`, executorPods, executorPodRegex)},
		{"Spark executor", "spark_application",
			`label_replace(metrics_executor_totalShuffleWrite_bytes_total, "spark_application", "$1", "application_name", "(.+)")`},
		{"Elasticsearch exporter", "elasticsearch_cluster",
			`label_replace(elasticsearch_thread_pool_rejected_count, "elasticsearch_cluster", "$1", "cluster", "(.+)")`},
	}
}

// Probe counts the source's series of one pipeline: what to run when
// StrataPipelineMetricsUnavailable names the source.
func (s Source) Probe(namespace, pipeline string) string {
	return fmt.Sprintf(`count((%s) and on (namespace, %s) %s)`, s.Series, s.Key, pipelineInfo(namespace, pipeline))
}

// ForPipeline limits an alert's expression to one pipeline: it returns what the alert fires
// with for that pipeline (once its for: has passed).
func ForPipeline(expr, namespace, pipeline string) string {
	return fmt.Sprintf(`(%s) and on (namespace, pipeline) %s`, expr, pipelineInfo(namespace, pipeline))
}

func pipelineInfo(namespace, pipeline string) string {
	return fmt.Sprintf(`strata_pipeline_info{namespace=%q, pipeline=%q}`, namespace, pipeline)
}

// missingSources is one series per (Ready-to-be) pipeline and upstream source without series.
func missingSources() string {
	var parts []string
	for _, src := range Sources() {
		parts = append(parts, fmt.Sprintf(`(label_replace(strata_pipeline_info, "source", %q, "", "") unless on (namespace, %s) %s)`,
			src.Name, src.Key, src.Series))
	}
	return strings.Join(parts, " or ")
}
