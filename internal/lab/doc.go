// Package lab starts the real pieces of a pipeline's data plane on this machine, for the tests
// that check Strata's generated PromQL against real metrics (issue 14, docs/lab.md):
//
//   - Kafka brokers (KRaft, Kafka 4.3.1 as Strimzi 1.2.0 runs) with the Prometheus JMX exporter's
//     collector (1.6.0, what Strimzi's image ships) loaded with exactly the rules Strata
//     generates (internal/desired's Kafka metrics ConfigMap), from the launcher jvm/lab builds;
//   - a producer writing a fixed byte rate with acks=all;
//   - the pipeline's own ingestion job (jvm/ingest-job) submitted as the Spark operator submits
//     it, with the operator's sparkConf and executor sizes, in Spark's local-cluster mode (each
//     executor a JVM of its own, as root in a cgroup cAdvisor serves as its pod), reading the
//     topic into the search node and committing the pipeline's consumer group, resubmitted when
//     it exits as the SparkApplication's restart policy does (Start); on shaped links, a plain
//     consumer in that group instead (StartOnLinks);
//   - the Kafka exporter Strimzi runs (third_party/kafka_exporter), with the flags Strimzi
//     derives from the Kafka Strata builds;
//   - a search node (OpenSearch, from jvm/lab) behind the real Elasticsearch exporter, run as
//     the Deployment Strata documents (config/prometheus/elasticsearch-exporter.yaml);
//   - as root, cAdvisor's code (hack/lab-cadvisor) serving the job's executors (Start), or
//     brokers on links netlab shapes (StartOnLinks), as the kubelet serves their containers;
//   - the real operator (cmd/manager as a process, with the chart's arguments, ServiceAccount
//     and RBAC) on a control plane of its own, planning the lab's pipeline; its metrics endpoint
//     serves HTTPS and checks every scraper's token with the API server, as the chart deploys it;
//   - the real Prometheus Operator (v0.93.0) on the same control plane, turning Strata's
//     PodMonitors (config/prometheus/upstream-monitors.yaml), the chart's ServiceMonitor and
//     PrometheusRule (helm template charts/strata) and the kubelet's ServiceMonitor into the
//     Prometheus configuration and rule files it writes for a Prometheus object;
//   - a real Prometheus (the pinned bin/prometheus) running that configuration, changed only where
//     the lab is not a cluster (Rewrite: file_sd for kubernetes_sd, the pod's mounted files, the
//     config reloader's $(VAR)s, the lab's interval), so every series carries the labels it carries
//     in a cluster and the alerts are the chart's.
//
// Every process is a "pod" to the service discovery: a file_sd target with the
// __meta_kubernetes_* labels Kubernetes service discovery would give it, for every generated
// discovery whose role and namespaces would find it. The helpers are for tests (they take a
// testing.TB and stop what they start in its Cleanup).
package lab
