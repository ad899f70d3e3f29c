// Package scale measures what 1,000 pipelines cost the operator when it runs as its own process,
// as its container runs it: the real manager binary (internal/lab.Operator) against a real
// control plane that also holds a large cluster's unrelated Secrets, ConfigMaps, Pods and Nodes.
// BenchmarkOperator (`make bench`) reports the time until every pipeline is planned and applied,
// the operator's API writes and their rate against the same API server's raw write ceiling in
// the same run, the p50/p99 time from a spec change to its children applied, the operator's peak
// resident set and CPU time read from /proc (apart from the load generator, which is the test
// process), and saves pprof CPU and heap profiles of the operator. docs/performance.md holds the
// figures and what the profiles showed.
//
// The operator's writes are counted from its own client metrics (rest_client_requests_total by
// method, controller-runtime's client-go adapter), not by wrapping its client: the process is
// the one a cluster runs.
package scale
