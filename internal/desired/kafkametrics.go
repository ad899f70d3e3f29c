package desired

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// KafkaMetricsConfigMap builds the ConfigMap the Kafka cluster's metricsConfig points at: the
// rules of the Prometheus JMX exporter that runs in every broker and controller (port 9404).
//
// Strimzi 1.x also offers type strimziMetricsReporter, which needs no ConfigMap, but its metric
// names differ from the JMX exporter's long-established ones (kafka_server_brokertopicmetrics_*,
// kafka_server_replicamanager_*), which the dashboards, alerts and the autoscaler query; Cruise
// Control only supports the JMX exporter anyway.
func KafkaMetricsConfigMap(in Inputs) *unstructured.Unstructured {
	p := in.Pipeline
	return newObject(ConfigMapGVK, p, KafkaMetricsConfigMapName(p), AppKafka, ComponentKafkaMetrics, nil, nil,
		object{"data": map[string]string{KafkaMetricsConfigKey: kafkaMetricsRules}})
}

// kafkaMetricsRules maps Kafka's JMX MBeans to Prometheus metrics. What the operator relies on:
//   - kafka_server_brokertopicmetrics_bytesin_total / _bytesout_total / _replicationbytesin_total
//     / _replicationbytesout_total / _messagesin_total{topic}: each broker's link use, the
//     figures of the bandwidth model;
//   - kafka_server_replicamanager_underreplicatedpartitions: no scale-down while it is above 0;
//   - kafka_network_requestmetrics_* for produce/fetch latency, kafka_log_* for log sizes.
//
// The rules are the usual generic ones (as in Strimzi's examples): per-second meters become
// _total counters, gauges keep their name, histograms become quantile gauges and a count. The
// JMX exporter 1.x (client_java 1.x) appends _total to every counter's name, so the counts come
// out as kafka_<...>_count_total (seen with the real exporter in internal/lab); no query of
// Strata's reads them.
const kafkaMetricsRules = `lowercaseOutputName: true
rules:
  # Per-topic, per-partition gauges (kafka.server FetcherLagMetrics and the like).
  - pattern: kafka.server<type=(.+), name=(.+), clientId=(.+), topic=(.+), partition=(.*)><>Value
    name: kafka_server_$1_$2
    type: GAUGE
    labels:
      clientId: "$3"
      topic: "$4"
      partition: "$5"
  # Meters (…PerSec) become counters, with up to two labels.
  - pattern: kafka.(\w+)<type=(.+), name=(.+)PerSec\w*, (.+)=(.+), (.+)=(.+)><>Count
    name: kafka_$1_$2_$3_total
    type: COUNTER
    labels:
      "$4": "$5"
      "$6": "$7"
  - pattern: kafka.(\w+)<type=(.+), name=(.+)PerSec\w*, (.+)=(.+)><>Count
    name: kafka_$1_$2_$3_total
    type: COUNTER
    labels:
      "$4": "$5"
  - pattern: kafka.(\w+)<type=(.+), name=(.+)PerSec\w*><>Count
    name: kafka_$1_$2_$3_total
    type: COUNTER
  # Percent gauges (request handler and network processor idle ratios).
  - pattern: kafka.(\w+)<type=(.+), name=(.+)Percent\w*><>MeanRate
    name: kafka_$1_$2_$3_percent
    type: GAUGE
  - pattern: kafka.(\w+)<type=(.+), name=(.+)Percent\w*><>Value
    name: kafka_$1_$2_$3_percent
    type: GAUGE
  # Gauges with up to two labels (UnderReplicatedPartitions, log Size, …).
  - pattern: kafka.(\w+)<type=(.+), name=(.+), (.+)=(.+), (.+)=(.+)><>Value
    name: kafka_$1_$2_$3
    type: GAUGE
    labels:
      "$4": "$5"
      "$6": "$7"
  - pattern: kafka.(\w+)<type=(.+), name=(.+), (.+)=(.+)><>Value
    name: kafka_$1_$2_$3
    type: GAUGE
    labels:
      "$4": "$5"
  - pattern: kafka.(\w+)<type=(.+), name=(.+)><>Value
    name: kafka_$1_$2_$3
    type: GAUGE
  # Histograms (request and log flush times) as counts and quantiles.
  - pattern: kafka.(\w+)<type=(.+), name=(.+), (.+)=(.+)><>Count
    name: kafka_$1_$2_$3_count
    type: COUNTER
    labels:
      "$4": "$5"
  - pattern: kafka.(\w+)<type=(.+), name=(.+), (.+)=(.*)><>(\d+)thPercentile
    name: kafka_$1_$2_$3
    type: GAUGE
    labels:
      "$4": "$5"
      quantile: "0.$6"
  - pattern: kafka.(\w+)<type=(.+), name=(.+)><>Count
    name: kafka_$1_$2_$3_count
    type: COUNTER
  - pattern: kafka.(\w+)<type=(.+), name=(.+)><>(\d+)thPercentile
    name: kafka_$1_$2_$3
    type: GAUGE
    labels:
      quantile: "0.$4"
  # KRaft: the controllers' Raft state and the brokers' metadata lag.
  - pattern: "kafka.server<type=raft-metrics><>(.+-total|.+-max):"
    name: kafka_server_raftmetrics_$1
    type: COUNTER
  - pattern: "kafka.server<type=raft-metrics><>(.+):"
    name: kafka_server_raftmetrics_$1
    type: GAUGE
  - pattern: "kafka.server<type=broker-metadata-metrics><>(.+):"
    name: kafka_server_brokermetadatametrics_$1
    type: GAUGE
`
