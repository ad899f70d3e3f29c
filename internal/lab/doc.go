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
//   - a real Prometheus (the pinned bin/prometheus) whose scrape configuration is generated from
//     Strata's PodMonitors (config/prometheus/upstream-monitors.yaml) and the chart's
//     ServiceMonitor (helm template charts/strata), relabelled as the Prometheus Operator does,
//     so every series carries the labels it carries in a cluster; the alert rules are the ones
//     `make observability` generates.
//
// Every process is a "pod" to the scrape configuration: a file_sd target with the
// __meta_kubernetes_* labels Kubernetes service discovery would give it. The helpers are for tests
// (they take a testing.TB and stop what they start in its Cleanup).
package lab
