// Package metrics publishes the operator's own Prometheus metrics about each pipeline — its
// plan, the capacity of every stage, the bottleneck, the storage placement and its cost, its
// conditions — on the manager's metrics endpoint, after controller-runtime's reconcile and
// work-queue metrics: cmd/manager serves them through Recorder.Handler, which writes them as
// text as it reads them (stream.go); a test may register them on a registry instead (Register).
//
// The reconciler calls Observe after it planned a pipeline and Forget when the pipeline is gone:
// every series carries the labels namespace and pipeline, and Forget removes them all. The
// autoscaler reports what it last observed with SetBrokerLinkUtilization and
// SetExecutorPageCacheRatio. Label sets are bounded: per pipeline one series per stage, storage
// role, resource, memory part or condition; nothing per pod.
//
// Names follow Prometheus' conventions: a strata_ prefix, base units (bytes, seconds, ratios
// 0..1, messages per second), _total for counters, _info for info-style gauges of value 1.
// docs/metrics.md lists them; a test checks that the list and the code agree.
package metrics
