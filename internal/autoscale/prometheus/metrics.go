package prometheus

import (
	client "github.com/prometheus/client_golang/prometheus"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Decisions counts the autoscaler's decisions. Its labels are bounded: a pipeline's namespace
// and name, one of four resources, four actions and a dozen reasons. Counting works whether or
// not it is registered; the manager registers it (Register) on controller-runtime's registry,
// which its metrics endpoint serves.
var Decisions = client.NewCounterVec(client.CounterOpts{
	Name: "strata_autoscaler_decisions_total",
	Help: "Decisions of the autoscaler: scale-ups, scale-downs and memory shifts it made, and changes a safety rule held back.",
}, []string{"namespace", "pipeline", "resource", "action", "reason"})

// Register registers the autoscaler's metrics on reg. It is called once, by cmd/manager, rather
// than from an init function: importing the package registers nothing, so a test or a tool that
// imports it (the CLI, the lab) does not find the counter on a registry it did not ask for, and
// a test that reads the counter registers it on a registry of its own.
func Register(reg client.Registerer) error {
	return reg.Register(Decisions)
}

// Count adds a decision to the counter.
func Count(namespace, pipeline string, d v1alpha1.AutoscalingDecision) {
	Decisions.WithLabelValues(namespace, pipeline, d.Resource, d.Action, d.Reason).Inc()
}
