// Package autoscale closes the loop of docs/autoscaling.md: from a pipeline's live metrics it
// recommends broker, executor and Elasticsearch data node counts, the executors' memory split
// and a measured per-executor processing rate, which the operator then plans with.
//
// The package is the deciding part only, and pure: no client, no clock, no network. Reading the
// metrics is internal/autoscale/prometheus's (the signals' PromQL, the HTTP client and the
// operator's access policy), so that nothing here can reach a network and the simulator and the
// fuzzer run the operator's own decisions offline. A test (purity_test.go) keeps it so.
//
//   - signal.go: the signals Recommend reads, and the reading intervals of a spec;
//   - source.go: MetricsSource, the interface a reader of signals implements, and the
//     Observations one reading returns;
//   - recommend.go, demand.go, rise.go, stages.go, executors.go, window.go, memory.go and
//     safety.go: Recommend, a pure function of the current state, the observations, the policy
//     and the time;
//   - rebalance.go: what Strimzi reports of a KafkaRebalance, read once for the broker gate
//     and for the pipeline controller's removal of the last broker but one.
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
