package autoscale

import (
	"time"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Signal names one metric the autoscaler reads. Its value is the field name in
// spec.autoscaling.queries. What each signal is read with (its default PromQL, the user's
// override) is internal/autoscale/prometheus's business: Recommend only sees the values.
type Signal string

// The signals. Byte and record rates are per second, summed over the pods they cover.
const (
	BrokerTransmitBytes       Signal = "brokerTransmitBytes"
	BrokerReceiveBytes        Signal = "brokerReceiveBytes"
	KafkaBytesIn              Signal = "kafkaBytesIn"
	KafkaBytesOut             Signal = "kafkaBytesOut"
	UnderReplicatedPartitions Signal = "underReplicatedPartitions"
	ConsumerLag               Signal = "consumerLag"
	ConsumerLagTrend          Signal = "consumerLagTrend"
	ProcessingRate            Signal = "processingRate"
	IngestRate                Signal = "ingestRate"
	ExecutorPageCacheBytes    Signal = "executorPageCacheBytes"
	ExecutorFileRefaults      Signal = "executorFileRefaults"
	ExecutorDiskReadBytes     Signal = "executorDiskReadBytes"
	ExecutorSpillBytes        Signal = "executorSpillBytes"
	ElasticsearchIndexingRate Signal = "elasticsearchIndexingRate"
)

// signals is every signal, sorted: the order readings and error messages use.
var signals = []Signal{
	BrokerReceiveBytes, BrokerTransmitBytes, ConsumerLag, ConsumerLagTrend,
	ElasticsearchIndexingRate, ExecutorDiskReadBytes, ExecutorFileRefaults,
	ExecutorPageCacheBytes, ExecutorSpillBytes, IngestRate, KafkaBytesIn, KafkaBytesOut,
	ProcessingRate, UnderReplicatedPartitions,
}

// Signals lists every signal, in a stable (sorted) order. A new signal needs a default query
// too: internal/autoscale/prometheus's tests fail until every signal has one.
func Signals() []Signal { return append([]Signal(nil), signals...) }

// Field is the signal's field path in the spec, as error messages name it.
func (s Signal) Field() string { return "spec.autoscaling.queries." + string(s) }

// Interval is the autoscaler's reading interval for a spec (the API's default when unset).
func Interval(a *v1alpha1.AutoscalingSpec) time.Duration {
	if a == nil || a.IntervalSeconds <= 0 {
		return 30 * time.Second
	}
	return time.Duration(a.IntervalSeconds) * time.Second
}

// ScrapeInterval is how often Prometheus scrapes the pipeline's metrics (the API's default when
// unset).
func ScrapeInterval(a *v1alpha1.AutoscalingSpec) time.Duration {
	if a == nil || a.ScrapeIntervalSeconds <= 0 {
		return 30 * time.Second
	}
	return time.Duration(a.ScrapeIntervalSeconds) * time.Second
}
