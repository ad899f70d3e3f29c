// Package autoscale closes the loop of docs/autoscaling.md: it reads a pipeline's live metrics from
// Prometheus and recommends broker, executor and Elasticsearch data node counts, the executors'
// memory split and a measured per-executor processing rate, which the operator then plans with.
//
// The package has three parts, kept apart so that the deciding part stays pure:
//
//   - signals.go: the signals, their default PromQL (kube-prometheus-stack's cAdvisor metrics,
//     Strimzi's JMX exporter rules and Kafka exporter, the Elasticsearch exporter) and the
//     user's overrides, each checked with Prometheus' own parser;
//   - source.go and prometheus.go: a MetricsSource that evaluates the queries, and its
//     Prometheus implementation on client_golang's API client;
//   - recommend.go, window.go, memory.go and safety.go: Recommend, a pure function of the
//     current state, the observations, the policy and the time. No client, no clock.
//
// Recommend works like Kubernetes' HPA, per resource: every reading turns the signals into a
// recommended count; a scale-up needs the recommendation to hold over a short window (so one
// noisy reading does nothing), a scale-down over the scale-down stabilisation window and only
// down to a count that leaves a hysteresis margin under the target; every change starts a
// cool-down. The windows live in the pipeline's status, so a restarted operator neither forgets
// them nor flaps. Missing or stale metrics never scale anything.
//
// The autoscaler never writes a child itself: its targets override the spec (overrides.go) and
// plan.Compute and the builders stay the one path from a spec to objects.
package autoscale
