// Package prometheus is how the autoscaler (internal/autoscale) reads its signals: from a
// Prometheus HTTP API, as far as the operator's installer allows. internal/autoscale decides;
// this package is everything that touches the network or PromQL.
//
//   - queries.go: each signal's default PromQL (kube-prometheus-stack's cAdvisor metrics,
//     Strimzi's JMX exporter rules and Kafka exporter, the Elasticsearch exporter), the user's
//     overrides, the placeholders filled in from the pipeline, each query checked with
//     Prometheus' own parser and kept inside the pipeline's namespace;
//   - client.go: Prometheus, the autoscale.MetricsSource on client_golang's API client, and the
//     errors it reports in terms safe for a pipeline's status;
//   - access.go: Access, the operator's policy for which Prometheus URLs a pipeline may name and
//     how they are reached (credentials, CA, timeouts, addresses never dialled);
//   - metrics.go: the autoscaler's own decisions counter, which cmd/manager registers (Register):
//     importing this package registers nothing.
package prometheus
