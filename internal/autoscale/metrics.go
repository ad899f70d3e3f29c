package autoscale

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Decisions counts the autoscaler's decisions, on controller-runtime's registry (served on the
// operator's metrics endpoint). Its labels are bounded: a pipeline's namespace and name, one of
// four resources, four actions and a dozen reasons.
var Decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "strata_autoscaler_decisions_total",
	Help: "Decisions of the autoscaler: scale-ups, scale-downs and memory shifts it made, and changes a safety rule held back.",
}, []string{"namespace", "pipeline", "resource", "action", "reason"})

func init() {
	metrics.Registry.MustRegister(Decisions)
}

// Count adds a decision to the counter.
func Count(namespace, pipeline string, d v1alpha1.AutoscalingDecision) {
	Decisions.WithLabelValues(namespace, pipeline, d.Resource, d.Action, d.Reason).Inc()
}
