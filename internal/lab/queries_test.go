package lab

import (
	"slices"
	"strings"
	"testing"
)

// A query's metrics and sources are read from its selectors, a __name__ matcher included, and
// cAdvisor's network series are a source of their own (the brokers' links), apart from its
// container series (the executors').
func TestMetricsAndSourcesOf(t *testing.T) {
	for _, c := range []struct {
		expr             string
		metrics, sources []string
	}{
		{`sum(rate(container_fs_reads_bytes_total{pod=~"x"}[5m])) / on () group_left strata_pipeline_info`,
			[]string{"container_fs_reads_bytes_total", "strata_pipeline_info"}, []string{"cAdvisor", "operator"}},
		{`rate(container_network_transmit_bytes_total[1m]) + rate(container_network_transmit_bytes_total[5m])`,
			[]string{"container_network_transmit_bytes_total"}, []string{"cAdvisor (network)"}},
		{`sum(rate({__name__=~"kafka_server_brokertopicmetrics_bytes(in|out)_total"}[1m]))`,
			[]string{"kafka_server_brokertopicmetrics_bytes(in|out)_total"}, []string{"Kafka JMX exporter"}},
		{`kafka_consumergroup_lag * on (topic) group_left metrics_executor_completedTasks_total`,
			[]string{"kafka_consumergroup_lag", "metrics_executor_completedTasks_total"}, []string{"Kafka exporter", "Spark"}},
	} {
		metrics, err := MetricsOf(c.expr)
		if err != nil || !slices.Equal(metrics, c.metrics) {
			t.Errorf("MetricsOf(%s) = %q %v, want %q", c.expr, metrics, err, c.metrics)
		}
		sources, err := SourcesOf(c.expr)
		if err != nil || !slices.Equal(sources, c.sources) {
			t.Errorf("SourcesOf(%s) = %q %v, want %q", c.expr, sources, err, c.sources)
		}
	}
	if _, err := MetricsOf(`rate(x[`); err == nil {
		t.Error("MetricsOf of a broken query: no error")
	}
}

// A query without data is put down to a series the machine does not serve only when it reads
// that series.
func TestSeriesGap(t *testing.T) {
	gaps := map[string]string{"container_fs_reads_bytes_total": "no blkio"}
	if got := seriesGap(`sum(rate(container_fs_reads_bytes_total[5m])) > 0`, gaps); !strings.Contains(got, "no blkio") {
		t.Errorf("seriesGap of a query reading the gap = %q", got)
	}
	if got := seriesGap(`container_memory_cache`, gaps); got != "" {
		t.Errorf("seriesGap of a query not reading the gap = %q, want none", got)
	}
}
