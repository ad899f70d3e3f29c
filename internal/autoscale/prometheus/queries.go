package prometheus

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/autoscale"
	"github.com/strata-dev/strata/internal/desired"
)

// DefaultQueries are the queries for a kube-prometheus-stack installation scraping Strimzi
// (its JMX exporter rules, internal/desired/kafkametrics.go, and its Kafka exporter), the Spark
// job and an Elasticsearch exporter. The Prometheus Operator's PodMonitors and ServiceMonitors
// label every series with the target's namespace and pod; cAdvisor's are labelled the same.
// docs/autoscaling.md lists the source of each and what it needs.
//
//   - Network traffic comes from cAdvisor (the pod's whole link, replication and clients alike,
//     which is what saturates); Kafka's own byte counters stand in when cAdvisor's are missing.
//     Each counter is rated on its own and the rates added: rate() drops __name__, so one
//     rate() over a {__name__=~"a|b"} selector fails with "vector cannot contain metrics with
//     the same labelset". A single broker has no replication traffic: that term may be empty.
//   - The lag, its trend and the rates come from the Kafka exporter, for the job's consumer
//     group: the pipeline's name, which Strata's ingestion job commits its progress under
//     (Spark's Kafka source commits nothing by itself). Strimzi 1.2.0 runs kafka_exporter 1.9.0
//     (docker-images/kafka-based/kafka/Dockerfile, KAFKA_EXPORTER_VERSION), whose series are
//     kafka_consumergroup_lag and kafka_consumergroup_current_offset{consumergroup, topic,
//     partition} and kafka_topic_partition_current_offset{topic, partition} (danielqsj/
//     kafka_exporter v1.9.0, kafka_exporter.go, namespace "kafka"). The module proxy does not
//     serve it, so the lab cannot run it: these names are checked against that source only.
//   - Spark counts spilled bytes only inside each executor (TaskMetrics.diskBytesSpilled), and
//     executors serve no metrics; the drivers' executor endpoint (PrometheusResource) has the
//     shuffle bytes written but no spill. So spill is what the executors' containers write to
//     disk (cAdvisor) beyond the shuffle files Spark counts, the estimate the alerts use too
//     (internal/alerts/promql.go). Without Spark's figures it is all the disk writes.
//   - File refaults exist only from cAdvisor 0.60 (Kubernetes 1.37+, cgroup v2): the memory
//     split does without them (see memory.go).
//   - The Elasticsearch exporter must report every node (--es.all) for the indexing rate to
//     cover the cluster; its cluster label is the Elasticsearch resource's name.
var DefaultQueries = map[autoscale.Signal]string{
	autoscale.BrokerTransmitBytes: `sum(rate(container_network_transmit_bytes_total{namespace="$namespace",pod=~"$brokerPods"}[$range]))`,
	autoscale.BrokerReceiveBytes:  `sum(rate(container_network_receive_bytes_total{namespace="$namespace",pod=~"$brokerPods"}[$range]))`,
	autoscale.KafkaBytesIn: `sum(rate(kafka_server_brokertopicmetrics_bytesin_total{namespace="$namespace",pod=~"$brokerPods",topic=""}[$range]))` +
		` + (sum(rate(kafka_server_brokertopicmetrics_replicationbytesin_total{namespace="$namespace",pod=~"$brokerPods",topic=""}[$range])) or vector(0))`,
	autoscale.KafkaBytesOut: `sum(rate(kafka_server_brokertopicmetrics_bytesout_total{namespace="$namespace",pod=~"$brokerPods",topic=""}[$range]))` +
		` + (sum(rate(kafka_server_brokertopicmetrics_replicationbytesout_total{namespace="$namespace",pod=~"$brokerPods",topic=""}[$range])) or vector(0))`,
	autoscale.UnderReplicatedPartitions: `sum(kafka_server_replicamanager_underreplicatedpartitions{namespace="$namespace",pod=~"$brokerPods"})`,
	autoscale.ConsumerLag:               `sum(kafka_consumergroup_lag{namespace="$namespace",consumergroup="$pipeline",topic="$topic"})`,
	autoscale.ConsumerLagTrend:          `sum(deriv(kafka_consumergroup_lag{namespace="$namespace",consumergroup="$pipeline",topic="$topic"}[$range]))`,
	autoscale.ProcessingRate:            `sum(rate(kafka_consumergroup_current_offset{namespace="$namespace",consumergroup="$pipeline",topic="$topic"}[$range]))`,
	autoscale.IngestRate:                `sum(rate(kafka_topic_partition_current_offset{namespace="$namespace",topic="$topic"}[$range]))`,
	autoscale.ExecutorPageCacheBytes:    `avg(container_memory_cache{namespace="$namespace",pod=~"$executorPods",container!="",container!="POD"})`,
	autoscale.ExecutorFileRefaults:      `sum(rate(container_memory_workingset_refault_file_total{namespace="$namespace",pod=~"$executorPods",container!="",container!="POD"}[$range]))`,
	autoscale.ExecutorDiskReadBytes:     `sum(rate(container_fs_reads_bytes_total{namespace="$namespace",pod=~"$executorPods",container!="",container!="POD"}[$range]))`,
	autoscale.ExecutorSpillBytes: `clamp_min(sum(rate(container_fs_writes_bytes_total{namespace="$namespace",pod=~"$executorPods",container!="",container!="POD"}[$range]))` +
		` - (sum(rate(metrics_executor_totalShuffleWrite_bytes_total{namespace="$namespace",application_name="$sparkApplication",executor_id!="driver"}[$range])) or vector(0)), 0)`,
	autoscale.ElasticsearchIndexingRate: `sum(rate(elasticsearch_indices_indexing_index_total{namespace="$namespace",cluster="$pipeline"}[$range]))`,
}

// overrides returns the spec's query for each signal that has one.
func overrides(q *v1alpha1.AutoscalingQueries) map[autoscale.Signal]string {
	if q == nil {
		return nil
	}
	return map[autoscale.Signal]string{
		autoscale.BrokerTransmitBytes:       q.BrokerTransmitBytes,
		autoscale.BrokerReceiveBytes:        q.BrokerReceiveBytes,
		autoscale.KafkaBytesIn:              q.KafkaBytesIn,
		autoscale.KafkaBytesOut:             q.KafkaBytesOut,
		autoscale.UnderReplicatedPartitions: q.UnderReplicatedPartitions,
		autoscale.ConsumerLag:               q.ConsumerLag,
		autoscale.ConsumerLagTrend:          q.ConsumerLagTrend,
		autoscale.ProcessingRate:            q.ProcessingRate,
		autoscale.IngestRate:                q.IngestRate,
		autoscale.ExecutorPageCacheBytes:    q.ExecutorPageCacheBytes,
		autoscale.ExecutorFileRefaults:      q.ExecutorFileRefaults,
		autoscale.ExecutorDiskReadBytes:     q.ExecutorDiskReadBytes,
		autoscale.ExecutorSpillBytes:        q.ExecutorSpillBytes,
		autoscale.ElasticsearchIndexingRate: q.ElasticsearchIndexingRate,
	}
}

// QueryError is a query that does not parse; Field names it in the spec.
type QueryError struct {
	Signal autoscale.Signal
	Query  string
	Err    error
}

func (e *QueryError) Error() string {
	var ns *namespaceError
	if errors.As(e.Err, &ns) {
		return fmt.Sprintf("%s: %q: %v", e.Signal.Field(), e.Query, e.Err)
	}
	return fmt.Sprintf("%s: %q is not valid PromQL: %v", e.Signal.Field(), e.Query, e.Err)
}

// namespaceError is a query with a selector that may read another namespace's series.
type namespaceError struct {
	selector, namespace string
}

func (e *namespaceError) Error() string {
	return fmt.Sprintf("every selector must carry namespace=%q (the pipeline's namespace), and %s does not", e.namespace, e.selector)
}

// inNamespace checks that every series selector of a query is limited to the pipeline's
// namespace by an equality matcher: a pipeline's queries run with the operator's access to
// Prometheus, which sees every tenant's series.
func inNamespace(expr parser.Expr, namespace string) error {
	var bad error
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok || bad != nil {
			return nil
		}
		for _, m := range vs.LabelMatchers {
			if m.Name == "namespace" && m.Type == labels.MatchEqual && m.Value == namespace {
				return nil
			}
		}
		bad = &namespaceError{selector: vs.String(), namespace: namespace}
		return nil
	})
	return bad
}

// Range is the rate window of the queries ($range): four of the longer of the reading and the
// scrape interval. rate() needs two samples inside its window: four intervals of the autoscaler
// alone would be 20 s at its 5 s minimum, shorter than one scrape at kube-prometheus-stack's 30 s.
func Range(a *v1alpha1.AutoscalingSpec) time.Duration {
	return 4 * max(autoscale.Interval(a), autoscale.ScrapeInterval(a))
}

// Queries returns the pipeline's query for every signal — the override where the spec has one,
// else the default — with the placeholders filled in, each checked with Prometheus' parser.
// The first query that does not parse (in signal order) is returned as a *QueryError.
func Queries(p *v1alpha1.AnalyticsPipeline) (map[autoscale.Signal]string, error) {
	var spec *v1alpha1.AutoscalingQueries
	if p.Spec.Autoscaling != nil {
		spec = p.Spec.Autoscaling.Queries
	}
	given := overrides(spec)
	fill := placeholders(p)
	out := make(map[autoscale.Signal]string, len(DefaultQueries))
	pql := parser.NewParser(parser.Options{})
	for _, s := range autoscale.Signals() {
		q := DefaultQueries[s]
		if o := strings.TrimSpace(given[s]); o != "" {
			q = o
		}
		q = fill.Replace(q)
		expr, err := pql.ParseExpr(q)
		if err != nil {
			return nil, &QueryError{Signal: s, Query: q, Err: err}
		}
		if err := inNamespace(expr, p.Namespace); err != nil {
			return nil, &QueryError{Signal: s, Query: q, Err: err}
		}
		out[s] = q
	}
	return out, nil
}

// placeholders fills in what a query needs to know of the pipeline. Longer names come first, so
// that no placeholder is a prefix of one replaced before it.
func placeholders(p *v1alpha1.AnalyticsPipeline) *strings.Replacer {
	return strings.NewReplacer(
		"$executorPods", promRegex(regexp.QuoteMeta(desired.SparkApplicationName(p))+"-.+-exec-[0-9]+"),
		"$sparkApplication", desired.SparkApplicationName(p),
		"$brokerPods", promRegex(regexp.QuoteMeta(desired.BrokerPodPrefix(p))+"[0-9]+"),
		"$namespace", p.Namespace,
		"$pipeline", p.Name,
		"$topic", desired.TopicName(p),
		"$range", fmt.Sprintf("%ds", int64(Range(p.Spec.Autoscaling)/time.Second)),
	)
}

// promRegex writes a regular expression for a double-quoted PromQL string: backslashes doubled.
func promRegex(re string) string { return strings.ReplaceAll(re, `\`, `\\`) }
