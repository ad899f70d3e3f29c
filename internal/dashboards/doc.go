// Package dashboards builds Strata's Grafana dashboards as code with the Grafana Foundation SDK
// (github.com/grafana/grafana-foundation-sdk/go), which checks each one when it is built, so a
// broken dashboard fails `make observability` and the tests, not a user's Grafana.
//
//   - strata-pipeline: one pipeline (namespace and pipeline variables): every stage's capacity
//     against the workload and the measured rates, the bottleneck, link utilization per broker,
//     consumer lag, page cache, disk reads and spill per executor, Elasticsearch indexing,
//     storage per tier and its monthly cost, the autoscaler's replicas and decisions;
//   - strata-operator: the operator itself: reconcile rate, errors, latency, work-queue depth,
//     and the autoscaler's decisions.
//
// The PromQL comes from internal/alerts' fragments, so a dashboard shows what the alerts test.
package dashboards
